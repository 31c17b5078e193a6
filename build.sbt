// versioned: git-like version control for tables on Spark.
// Spark 4.3.0 / Scala 2.13.18. Spark 4.3.0 is compiled against the jars of the pip-installed pyspark==4.3.0
// wheel (its artifacts are not on Maven Central), located by bin/spark-jars-dir; they are never packaged.

ThisBuild / scalaVersion := "2.13.18"
ThisBuild / organization := "io.versioned"
ThisBuild / version := "0.1.0"
ThisBuild / scalacOptions ++= Seq("-deprecation", "-feature", "-release", "17")
ThisBuild / Test / fork := true
// Suites run one at a time inside a test JVM (testForkedParallel); the connector's suites are split between two test
// JVMs that run side by side (much of a suite's time is waiting: listener buses, leases, injected outages, timeouts),
// and core's JVM can run beside one of them. Each test warehouse has its own directory (and, on PostgreSQL, its own
// database). parallelExecution must be on for that: with it off sbt runs a project's test groups one after the other
// (Tests.foldTasks), and the two JVMs took turns.
ThisBuild / Test / parallelExecution := true
ThisBuild / Test / testForkedParallel := false
// Each test's duration in the output (where the suite's time goes).
ThisBuild / Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD")
Global / concurrentRestrictions := Seq(
  Tags.limitAll(math.max(2, java.lang.Runtime.getRuntime.availableProcessors)),
  Tags.limit(Tags.ForkedTestGroup, 2),
  Tags.exclusiveGroup(Tags.Clean))

// Seconds each long suite takes on 2 cores (a quiet CI run where one was measured: FaultInjectionSuite to
// ChangelogSuite; the per-fragment reruns scaled by their measured share of the base suite's cases; the rest the larger
// of a quiet CI run and of a run on a loaded host scaled to CI's total; FaultInjection, InsertKeyRanges, StreamCrash,
// Changelog and its per-fragment rerun scaled by the after/before ratio of targeted runs when their cases were made
// cheaper, bench/results/test-time-wt42a; MergeOracleSuite scaled to the 7 of its 13 rounds the standard depth runs,
// docs/TESTING.md); others count 3. The split only balances the two JVMs, which run side by
// side: the stage takes as long as the heavier one.
val suiteSeconds: Map[String, Double] = Map(
  "safety.FaultInjectionSuite" -> 222, "write.InsertKeyRangesSuite" -> 52, "merge.MergeOracleSuite" -> 110,
  "diff.DiffPropertySuite" -> 132, "stream.StreamCrashSuite" -> 116, "RandomizedOracleSuite" -> 81,
  "catalog.ChangelogSuite" -> 51, "RandomizedOraclePerFragmentSuite" -> 50, "DiffPropertyPerFragmentSuite" -> 45,
  "ParallelWritersSuite" -> 39, "catalog.KeyLookupDmlSuite" -> 38, "MergeOraclePerFragmentSuite" -> 32,
  "stream.StreamMetastoreOutageSuite" -> 32, "stream.StreamOutageSuite" -> 31, "catalog.RandomizedDmlSuite" -> 27,
  "ChangelogPerFragmentSuite" -> 19, "safety.GcRaceSuite" -> 25, "write.LocalCommitSuite" -> 24,
  "catalog.DdlSuite" -> 21, "write.BackgroundCompactionSuite" -> 20, "merge.MergeSchemaSuite" -> 18,
  "safety.RetentionRaceSuite" -> 17, "ConcurrencySuite" -> 16, "catalog.KeylessDmlSuite" -> 16,
  "merge.MergeSuite" -> 15, "catalog.DmlSuite" -> 15, "safety.RefMoveRaceSuite" -> 14, "write.CompactionSuite" -> 14,
  "diff.BeforeImagesSuite" -> 13, "read.PruningSuite" -> 13)

/** The suites in two groups of about equal time (longest first, each to the lighter group), each in its own JVM. */
def splitSuites(tests: Seq[TestDefinition], opts: ForkOptions): Seq[Tests.Group] = {
  val weight = (t: TestDefinition) => suiteSeconds.getOrElse(t.name.stripPrefix("versioned.spark."), 3.0)
  val groups = tests.sortBy(t => (-weight(t), t.name)).foldLeft(Vector(Vector.empty[TestDefinition], Vector.empty[TestDefinition])) {
    (gs, t) => val i = if (gs(0).map(weight).sum <= gs(1).map(weight).sum) 0 else 1; gs.updated(i, gs(i) :+ t)
  }
  groups.zipWithIndex.filter(_._1.nonEmpty).map { case (ts, i) => Tests.Group(s"spark-${i + 1}", ts, Tests.SubProcess(opts)) }
}

lazy val sparkJarsDir: File = {
  val fromEnv = sys.env.get("SPARK_JARS_DIR").map(file)
  fromEnv.getOrElse {
    val py = sys.env.getOrElse("PYTHON", "python3")
    val out = scala.sys.process.Process(Seq(py, "-c",
      "import pyspark, os; print(os.path.join(os.path.dirname(pyspark.__file__), 'jars'))")).!!.trim
    file(out)
  }
}

def jarsIn(dir: File, keep: String => Boolean): Seq[File] =
  Option(dir.listFiles()).toSeq.flatten.filter(f => f.getName.endsWith(".jar") && keep(f.getName))

// Non-Spark runtime libraries that Spark already ships (Hadoop, Jackson, logging): provided for core.
// The engine's only Spark type is the SparkThrowable interface of its errors (spark-common-utils).
def coreProvided(n: String): Boolean =
  Seq("hadoop-client-", "jackson-", "slf4j-", "log4j-", "commons-", "spark-common-utils").exists(n.startsWith)

// Spark ships an old HikariCP (2.5.1); the engine uses its own, shaded in the assembly.
def sparkProvided(n: String): Boolean = !n.startsWith("HikariCP")

// Test JVMs: the client compiler only and the serial collector. The suites are many small queries that never reach
// the optimizing compiler's pay-off, and on 2 cores the JIT's and G1's own threads took a fifth of the CPU (a sample of
// four suites: 370 CPU-seconds with the JVM's defaults, 288 with these, 198 s wall before and 176 s after). The
// product's settings (Spark's and the connector's) are untouched. Spark's cache of compiled generated code holds 10,000
// classes instead of 100 (`spark.sql.codegen.cache.maxEntries`, a static SQL setting read from the JVM's `spark.*`
// properties by every session's SparkConf): a test JVM runs many suites whose queries have the same shapes, and with
// 100 a third of its Janino compilations were of code it had compiled before and evicted (six suites: 1,835
// compilations, 1,283 with the larger cache, bench/results/test-suite-time/s51). A cache's size changes no result.
val testJavaOptions = Seq(
  "-Xmx3g",
  "-XX:TieredStopAtLevel=1",
  "-XX:+UseSerialGC",
  "-Dspark.sql.codegen.cache.maxEntries=10000",
  "--add-opens=java.base/java.lang=ALL-UNNAMED",
  "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
  "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
  "--add-opens=java.base/java.io=ALL-UNNAMED",
  "--add-opens=java.base/java.net=ALL-UNNAMED",
  "--add-opens=java.base/java.nio=ALL-UNNAMED",
  "--add-opens=java.base/java.util=ALL-UNNAMED",
  "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
  "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
  "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
  "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
  "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
  "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
  "-Djdk.reflect.useDirectMethodHandle=false",
  "-Dio.netty.tryReflectionSetAccessible=true"
)

lazy val core = (project in file("connector-scala/core"))
  .settings(
    name := "versioned-core",
    Compile / unmanagedJars ++= jarsIn(sparkJarsDir, coreProvided),
    libraryDependencies ++= Seq(
      "org.xerial" % "sqlite-jdbc" % "3.50.3.0",
      "com.zaxxer" % "HikariCP" % "6.3.0" intransitive(), // its only dependency, slf4j, comes with Spark
      "org.postgresql" % "postgresql" % "42.7.7",
      "org.scalatest" %% "scalatest" % "3.2.19" % Test
    ),
    Test / javaOptions ++= testJavaOptions
  )

lazy val spark = (project in file("connector-scala/spark"))
  .dependsOn(core % "compile->compile;test->test")
  .settings(
    name := "versioned-spark",
    Compile / unmanagedJars ++= jarsIn(sparkJarsDir, sparkProvided),
    libraryDependencies ++= Seq(
      "org.scalatest" %% "scalatest" % "3.2.19" % Test,
      "org.scalatestplus" %% "scalacheck-1-18" % "3.2.19.0" % Test
    ),
    Test / javaOptions ++= testJavaOptions,
    Test / testGrouping := splitSuites((Test / definedTests).value, (Test / forkOptions).value),
    assembly / assemblyJarName := "versioned-spark-assembly.jar",
    // Unmanaged jars are Spark's own runtime: never bundle them, nor the Scala library.
    assembly / assemblyExcludedJars := (assembly / fullClasspath).value.filter { a =>
      a.data.getParentFile == sparkJarsDir || a.data.getName.startsWith("scala-")
    },
    assembly / assemblyOption ~= (_.withIncludeScala(false)),
    assembly / assemblyShadeRules := Seq(ShadeRule.rename("com.zaxxer.hikari.**" -> "versioned.shaded.hikari.@1").inAll),
    assembly / assemblyMergeStrategy := {
      case PathList("META-INF", "services", _*) => MergeStrategy.concat
      case PathList("META-INF", "versions", _*) => MergeStrategy.first
      case PathList("META-INF", _*)             => MergeStrategy.discard
      case "module-info.class"                  => MergeStrategy.discard
      case _                                    => MergeStrategy.first
    }
  )

lazy val root = (project in file("."))
  .aggregate(core, spark)
  .settings(name := "versioned", publish / skip := true)
