package versioned.spark.catalog

import scala.collection.mutable
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.execution.QueryExecution
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec
import org.apache.spark.sql.types._
import org.apache.spark.sql.util.QueryExecutionListener
import versioned.spark.VersionedOptions
import versioned.spark.api.TableApi
import versioned.spark.read.ScanMetrics

/**
 * MERGE / UPDATE and deleteWhere by primary key read the table by a key lookup: content checked against
 * an in-memory oracle on a table of many fragments with DIFF chains (compaction at its defaults), and the
 * scan metrics of the statements show that fragments were skipped.
 */
class KeyLookupDmlSuite extends CatalogSuiteBase with AdaptiveSparkPlanHelper {
  private val N = 2000

  private def withConf[T](kv: (String, String)*)(f: => T): T = {
    val old = kv.map { case (k, _) => k -> spark.conf.getOption(k) }
    kv.foreach { case (k, v) => spark.conf.set(k, v) }
    try f finally old.foreach { case (k, Some(v)) => spark.conf.set(k, v); case (k, None) => spark.conf.unset(k) }
  }

  /** Scan metrics (fragments total, scanned) of every versioned scan the queries run by `f` executed. */
  private def scansOf(f: => Any): Seq[(Long, Long)] = {
    val seen = mutable.ArrayBuffer.empty[(Long, Long)]
    val l = new QueryExecutionListener {
      override def onSuccess(funcName: String, qe: QueryExecution, durationNs: Long): Unit = synchronized {
        if (sys.env.contains("KL_DEBUG")) println(s"== $funcName\n${qe.executedPlan}")
        collectWithSubqueries(qe.executedPlan) { case b: BatchScanExec => b }.foreach { b =>
          val m = b.metrics
          if (m.contains(ScanMetrics.FragmentsTotal))
            seen += ((m(ScanMetrics.FragmentsTotal).value, m(ScanMetrics.FragmentsScanned).value))
        }
      }
      override def onFailure(funcName: String, qe: QueryExecution, exception: Exception): Unit = ()
    }
    spark.listenerManager.register(l)
    // The listener bus is asynchronous: wait until no more executions arrive (at most 20 s).
    try {
      f
      var (n, waited) = (-1, 0)
      while ((n != seen.size || seen.isEmpty) && waited < 20000) { n = seen.size; Thread.sleep(500); waited += 500 }
    } finally spark.listenerManager.unregister(l)
    synchronized(seen.toSeq)
  }

  private val schema = new StructType().add("id", LongType, nullable = false).add("a", IntegerType).add("s", StringType)

  /** `c.r.t` with N rows (keys 0, 2, 4, ...) in about N / 50 fragments, then two upserts (DIFF chains). */
  private def setup(): mutable.Map[Long, (Int, String)] = {
    val oracle = mutable.Map.empty[Long, (Int, String)]
    (0 until N).foreach(i => oracle(2L * i) = (i % 97, s"v$i"))
    def rows(m: Iterable[(Long, (Int, String))]) = frame(schema, m.map { case (k, (a, s)) => Row(k, a, s) }.toSeq)
    write(rows(oracle), "r.t", "primaryKey" -> "id") // a first write: a SNAP per fragment
    Seq(Seq(10L, 11L, 500L, 3001L), Seq(12L, 2500L, 3998L)).zipWithIndex.foreach { case (ks, j) =>
      val up = ks.map(k => k -> (1000 + j, s"u$k"))
      write(rows(up), "r.t", "upsert" -> "true")
      oracle ++= up
    }
    oracle
  }

  private def frame(schema: StructType, rows: Seq[Row]): DataFrame =
    spark.createDataFrame(spark.sparkContext.parallelize(rows, 2), schema)

  private def content(): Map[Long, (Int, String)] =
    spark.table("c.r.t").collect().map(r => r.getLong(0) -> (if (r.isNullAt(1)) null.asInstanceOf[Int] else r.getInt(1),
      r.getString(2))).toMap

  private def check(oracle: collection.Map[Long, (Int, String)], clue: String): Unit = {
    val got = content()
    assert(got.size == oracle.size, s"$clue: ${got.size} rows, expected ${oracle.size}")
    oracle.foreach { case (k, v) => assert(got.get(k).contains(v), s"$clue: key $k is ${got.get(k)}, expected $v") }
  }

  test("diagnostic: plans of MERGE") {
    val oracle = setup()
    spark.createDataFrame(Seq((10L, 5, "x", 1), (600L, 6, "y", 3), (601L, 7, "z", 3))).toDF("id", "a", "s", "op")
      .createOrReplaceTempView("src")
    val scans = scansOf(sql("""MERGE INTO c.r.t t USING src s ON t.id = s.id
      WHEN MATCHED AND s.op = 1 THEN DELETE WHEN MATCHED THEN UPDATE SET a = s.a, s = s.s
      WHEN NOT MATCHED THEN INSERT (id, a, s) VALUES (s.id, s.a, s.s)"""))
    println(s"MERGE full scans: $scans")
    val scans2 = scansOf(sql("""MERGE INTO c.r.t t USING src s ON t.id = s.id
      WHEN MATCHED AND s.op = 1 THEN DELETE WHEN MATCHED THEN UPDATE SET a = s.a, s = s.s"""))
    println(s"MERGE matched-only scans: $scans2")
    val scans3 = withConf("spark.sql.adaptive.enabled" -> "true")(scansOf(sql("""MERGE INTO c.r.t t USING src s ON t.id = s.id
      WHEN MATCHED THEN UPDATE SET a = s.a, s = s.s""")))
    println(s"MERGE matched-only AQE scans: $scans3")
  }
}
