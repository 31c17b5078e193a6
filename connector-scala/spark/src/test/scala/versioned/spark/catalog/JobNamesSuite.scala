package versioned.spark.catalog

import org.apache.spark.scheduler.{SparkListener, SparkListenerJobStart}

/**
 * The Spark jobs a small write starts (issue 31): every one carries a `versioned: ...` description (the console
 * and the UI say what it does), and a few-row INSERT or DataFrame append starts only the jobs it needs.
 */
class JobNamesSuite extends CatalogSuiteBase {
  /** Most jobs a 3-row INSERT (or append) into an existing keyed table starts, background compaction aside. */
  private val MaxJobs = 1

  /** Descriptions of the jobs any thread starts while `f` runs, up to the end of the compaction it triggers. */
  private def jobs(f: => Any): Seq[String] = {
    awaitCompaction()
    val sc = spark.sparkContext
    val seen = new java.util.concurrent.ConcurrentLinkedQueue[String]()
    val listener = new SparkListener {
      override def onJobStart(e: SparkListenerJobStart): Unit =
        seen.add(Option(e.properties).flatMap(p => Option(p.getProperty("spark.job.description"))).getOrElse("<none>"))
    }
    sc.addSparkListener(listener)
    try {
      f
      awaitCompaction()
      sc.setJobDescription("marker")
      try sc.parallelize(Seq(1), 1).count() finally sc.setJobDescription(null)
      import org.scalatest.concurrent.Eventually._
      import scala.concurrent.duration._
      eventually(timeout(30.seconds), interval(50.millis))(assert(seen.contains("marker")))
      scala.jdk.CollectionConverters.CollectionHasAsScala(seen).asScala.toSeq.filter(_ != "marker")
    } finally sc.removeSparkListener(listener)
  }

  private def check(what: String, described: Seq[String]): Unit = {
    val (compaction, own) = described.partition(_.startsWith("versioned: compaction"))
    info(s"$what: ${own.size} jobs (${own.mkString("; ")}), ${compaction.size} of background compaction")
    assert(described.forall(_.startsWith("versioned: ")), s"$what started jobs without a versioned description: $described")
    assert(own.size <= MaxJobs, s"$what started ${own.size} jobs: $own")
  }

  test("a 3-row INSERT and a 3-row DataFrame append start few jobs, each named by the connector") {
    keyedTable((1, "a"), (2, "b"))
    check("INSERT", jobs(spark.sql("INSERT INTO c.r.t VALUES (3, 'c'), (4, 'd'), (5, 'e')")))
    val s = spark; import s.implicits._
    check("append", jobs(Seq((6, "f"), (7, "g"), (8, "h")).toDF("id", "v").write.format("versioned").mode("append").save("r.t")))
    assert(sorted(spark.table("c.r.t")).map(_.getInt(0)) == (1 to 8))
    // a key that exists is still refused, and commits nothing
    expectError(versioned.core.ErrorClass.KeyExists, "id=3")(failsWithoutCommit("r")(
      spark.sql("INSERT INTO c.r.t VALUES (9, 'i'), (3, 'again')")))
  }

  test("a first INSERT into a new table is named too") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.n (id INT, v STRING, PRIMARY KEY (id))")
    check("first INSERT", jobs(spark.sql("INSERT INTO c.r.n VALUES (1, 'a'), (2, 'b'), (3, 'c')")))
  }
}
