package versioned.spark

import java.io.File
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec
import org.apache.spark.sql.types.StructType
import versioned.core.{Revision, VersionedException}

/**
 * Helpers shared by the property, bad-input, pruning, compaction and concurrency suites: DataFrames
 * from rows, multiset comparison with readable diffs, error search through Spark's wrappers, a
 * snapshot of a repository's observable state, and the planned partitions of a scan.
 */
abstract class VersionedTestBase extends VersionedSparkSuite {

  /** A DataFrame over `rows`, spread over several partitions so writes use several staging tasks. */
  protected def frame(schema: StructType, rows: Seq[Row], partitions: Int = 3): DataFrame =
    spark.createDataFrame(spark.sparkContext.parallelize(rows, partitions), schema)

  /** The first [[VersionedException]] in the cause chain (Spark wraps commit failures). */
  protected def versionedCause(t: Throwable): Option[VersionedException] =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(64).collectFirst { case v: VersionedException => v }

  /** Runs `f`, expects it to fail with a [[VersionedException]] of `errorClass` whose message has `parts`. */
  protected def expectError(errorClass: String, parts: String*)(f: => Any): VersionedException = {
    val t = intercept[Throwable](f)
    val v = versionedCause(t).getOrElse(fail(s"expected a VersionedException [$errorClass] in the cause chain, got $t", t))
    assert(v.errorClass == errorClass, s"expected error class $errorClass, got ${v.errorClass}: ${v.getMessage}")
    assert(v.getMessage.startsWith(s"[$errorClass] "), v.getMessage)
    parts.foreach(p => assert(v.getMessage.contains(p), s"message should mention '$p': ${v.getMessage}"))
    v
  }

  /**
   * Spark jobs started by `f` on this thread (those of its job group; background compaction runs in its own);
   * a marker job afterwards makes sure the listener has seen them all.
   */
  protected def jobsOf(f: => Unit): Int = {
    val sc = spark.sparkContext
    val seen = new java.util.concurrent.ConcurrentLinkedQueue[String]()
    val listener = new org.apache.spark.scheduler.SparkListener {
      override def onJobStart(e: org.apache.spark.scheduler.SparkListenerJobStart): Unit =
        seen.add(Option(e.properties).flatMap(p => Option(p.getProperty("spark.jobGroup.id"))).getOrElse(""))
    }
    sc.addSparkListener(listener)
    try {
      sc.setJobGroup("counted", "counted")
      try f finally sc.clearJobGroup()
      sc.setJobGroup("marker", "marker")
      try sc.parallelize(Seq(1), 1).count() finally sc.clearJobGroup()
      import org.scalatest.concurrent.Eventually._
      import scala.concurrent.duration._
      eventually(timeout(30.seconds), interval(50.millis))(assert(seen.contains("marker")))
      seen.toArray.count(_ == "counted")
    } finally sc.removeSparkListener(listener)
  }

  /** `branch`, or (null) the repository's default branch, as a user who names none means. */
  protected def branchOr(repo: String, branch: String): String = Option(branch).getOrElse(engine.defaultBranchOrConfig(repo))

  protected def headHash(repo: String, branch: String = null): Option[String] =
    engine.branchHeadOption(repo, branchOr(repo, branch)).map(_.hash)

  protected def logSize(repo: String, branch: String = null): Int =
    engine.history.log(repo, Revision.Spec(branchOr(repo, branch))).size

  protected def multiset(rows: Seq[Row]): Map[Row, Int] = rows.groupBy(identity).map { case (r, g) => r -> g.size }

  /** Multiset equality with the first differences spelled out. */
  protected def assertSameRows(actual: Seq[Row], expected: Seq[Row], clue: => String): Unit = {
    val a = multiset(actual)
    val e = multiset(expected)
    if (a != e) {
      def minus(x: Map[Row, Int], y: Map[Row, Int]) = x.toSeq.flatMap { case (r, n) =>
        val d = n - y.getOrElse(r, 0); if (d > 0) Some(s"$r x$d") else None
      }.sorted
      fail(s"$clue: expected ${expected.size} rows, got ${actual.size}; missing ${minus(e, a).take(10).mkString(" ")}; " +
        s"unexpected ${minus(a, e).take(10).mkString(" ")}")
    }
  }

  protected def assertReads(df: => DataFrame, expected: Seq[Row], clue: => String): Unit =
    assertSameRows(df.collect().toSeq, expected, clue)

  /** Sets Spark confs for the duration of `f`, restoring the previous values. */
  protected def withConf[T](kv: (String, String)*)(f: => T): T = {
    val old = kv.map { case (k, _) => k -> spark.conf.getOption(k) }
    kv.foreach { case (k, v) => spark.conf.set(k, v) }
    try f finally old.foreach {
      case (k, Some(v)) => spark.conf.set(k, v)
      case (k, None) => spark.conf.unset(k)
    }
  }

  /** Fragments the versioned scan of `df` plans to read (those that survive pruning), over all its input partitions. */
  protected def plannedPartitions(df: DataFrame): Int = {
    val scans = df.queryExecution.executedPlan.collect { case b: BatchScanExec => b }
    assert(scans.size == 1, s"expected one BatchScanExec in ${df.queryExecution.executedPlan}")
    scans.head.scan.toBatch.planInputPartitions().map {
      case g: versioned.spark.read.FragmentGroup => g.fragments.size
      case _ => 1
    }.sum
  }

  /** What a user can observe of a repository: every branch head and tag, the log length, a table's rows. */
  protected case class RepoState(repos: Seq[String], refs: Seq[(String, String)], log: Int, rows: Map[Row, Int])

  protected def repoState(repo: String, table: String): RepoState = {
    val e = engine
    if (!e.repositoryExists(repo)) RepoState(e.repositories().sorted, Nil, 0, Map.empty)
    else RepoState(e.repositories().sorted, e.refs.all(repo).map(r => r.fullName -> r.image).sorted,
      logSize(repo, e.defaultBranch(repo)), multiset(read(s"$repo.$table").collect().toSeq))
  }

  /** Leftover staging data of writes (must be cleaned up whatever the outcome). */
  protected def stagedWrites: Seq[String] =
    Option(new File(warehouse, "_staging/writes").listFiles()).toSeq.flatten.map(_.getName)
}
