package versioned.spark.catalog

import scala.collection.mutable
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.execution.{QueryExecution, SparkPlan}
import org.apache.spark.sql.execution.columnar.InMemoryTableScanExec
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec
import org.apache.spark.sql.types._
import org.apache.spark.sql.util.QueryExecutionListener
import versioned.core.ErrorClass
import versioned.spark.session.VersionedOptions
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

  /** Scan metrics (fragments total, scanned, whether a key lookup) of every versioned scan the queries run by `f` executed. */
  private def scansOf(f: => Any): Seq[(Long, Long, Boolean)] = executionsOf(f).map { case (_, t, n, l) => (t, n, l) }

  /** The same, with the name of the action that ran each scan (`collect`: a frame collected by the connector itself). */
  private def executionsOf(f: => Any): Seq[(String, Long, Long, Boolean)] = {
    val seen = mutable.ArrayBuffer.empty[(String, Long, Long, Boolean)]
    var last = -1L
    // only f's executions: a background compaction's scans are not f's (it is awaited first), and the events of
    // executions before f may still be on the asynchronous listener bus (execution ids only grow)
    awaitCompaction()
    val before = spark.range(1).queryExecution.id
    val l = new QueryExecutionListener {
      override def onSuccess(funcName: String, qe: QueryExecution, durationNs: Long): Unit = if (qe.id > before) synchronized {
        last = last max qe.id
        def scans(p: SparkPlan): Seq[BatchScanExec] = collectWithSubqueries(p) {
          case b: BatchScanExec => Seq(b)
          case i: InMemoryTableScanExec => scans(i.relation.cachedPlan) // cached frames: deleteWhere, row-level commits
        }.flatten
        scans(qe.executedPlan).foreach { b =>
          val m = b.metrics
          if (m.contains(ScanMetrics.FragmentsTotal))
            seen += ((funcName, m(ScanMetrics.FragmentsTotal).value, m(ScanMetrics.FragmentsScanned).value,
              b.scan.description().contains(" lookup=")))
        }
      }
      override def onFailure(funcName: String, qe: QueryExecution, exception: Exception): Unit = ()
    }
    spark.listenerManager.register(l)
    // The listener bus is asynchronous but ordered: after f, a marker query runs; once the listener has seen it,
    // it has seen every execution f ran (at most 60 s).
    try {
      f
      // a local relation: collected on the driver, no Spark job (jobsOf counts jobs around scansOf)
      val marker = spark.createDataFrame(java.util.List.of(Row(1)), new StructType().add("marker", IntegerType))
      marker.collect()
      val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
      while (synchronized(last) < marker.queryExecution.id && System.nanoTime() < deadline) Thread.sleep(10)
      assert(synchronized(last) >= marker.queryExecution.id, "the listener never saw the marker query")
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

  private def content(table: String = "c.r.t"): Map[Long, (Int, String)] =
    spark.table(table).collect().map(r => r.getLong(0) -> (if (r.isNullAt(1)) null.asInstanceOf[Int] else r.getInt(1),
      r.getString(2))).toMap

  private def check(oracle: collection.Map[Long, (Int, String)], clue: String, table: String = "c.r.t"): Unit = {
    val got = content(table)
    assert(got.size == oracle.size, s"$clue: ${got.size} rows, expected ${oracle.size}")
    oracle.foreach { case (k, v) => assert(got.get(k).contains(v), s"$clue: key $k is ${got.get(k)}, expected $v") }
  }

  /** Fragments of the table version on main whose key range holds one of `keys` (first key column, Long). */
  private def fragmentsHolding(keys: Seq[Long]): Int = {
    val frags = tableAt("r", "t").get.effectiveFragments
    val lowers = frags.map(_.lower.map(_.head.asInstanceOf[Number].longValue()).getOrElse(Long.MinValue))
    keys.map(k => lowers.lastIndexWhere(_ <= k)).distinct.size
  }

  /** The bench's MERGE: delete where op = 1, update the other matches, insert new keys where op = 3. */
  private def merge(source: String, table: String = "c.r.t"): Unit = sql(s"""MERGE INTO $table AS t USING $source AS s ON t.id = s.id
      WHEN MATCHED AND s.op = 1 THEN DELETE
      WHEN MATCHED THEN UPDATE SET a = s.a, s = s.s
      WHEN NOT MATCHED AND s.op = 3 THEN INSERT (id, a, s) VALUES (s.id, s.a, s.s)""")

  private def applyMerge(oracle: mutable.Map[Long, (Int, String)], src: Seq[(java.lang.Long, Int, String, Int)]): Unit =
    src.foreach { case (k, a, v, op) =>
      if (k != null) {
        val key = k.longValue()
        if (oracle.contains(key)) { if (op == 1) oracle -= key else oracle(key) = (a, v) }
        else if (op == 3) oracle(key) = (a, v)
      }
    }

  test("SQL MERGE on the primary key equals the oracle and reads only the fragments holding the source's keys") {
    val oracle = setup()
    val total = tableAt("r", "t").get.effectiveFragments.size
    assert(total >= 30, s"expected many fragments, got $total")
    // keys in three fragments: existing ones (even), missing ones (odd: inserts, or deletes of nothing), a null key
    val src: Seq[(java.lang.Long, Int, String, Int)] =
      Seq[java.lang.Long](10L, 12L, 14L, 15L, 16L, 17L, 2000L, 2002L, 2003L, 3990L, 3991L, 3998L, 99999L).zipWithIndex
        .map { case (k, i) => (k, i, s"m$i", if (i % 4 == 0) 1 else 3) } :+ ((null, 7, "nul", 1))
    val schema = new StructType().add("id", LongType).add("a", IntegerType).add("s", StringType).add("op", IntegerType)
    spark.createDataFrame(spark.sparkContext.parallelize(src.map { case (k, a, v, op) => Row(k, a, v, op) }, 2), schema)
      .createOrReplaceTempView("src")
    val scans = scansOf(merge("src"))
    applyMerge(oracle, src)
    check(oracle, "after MERGE from a parallelized source")
    val holding = fragmentsHolding(src.flatMap(x => Option(x._1).map(_.longValue())))
    val pruned = scans.filter(_._3)
    assert(pruned.nonEmpty, s"no scan used a key lookup: $scans")
    pruned.foreach { case (t, n, _) => assert(t == total && n <= holding + 1, s"a lookup scan read $n of $t fragments (keys in $holding)") }
    // the runtime filter comes from the source's keys (MergeKeyFilter): no scan of the whole table, not even of its keys
    assert(scans.forall(_._3), s"a scan of the MERGE read the whole table: $scans")

    // the bench's shape: a source computed from spark.range (no selective filter, not materialized)
    spark.range(0, 40).selectExpr("CAST(id * 7 + 1001 AS BIGINT) AS id", "CAST(id AS INT) AS a", "concat('r', id) AS s",
      "CASE WHEN id % 5 = 0 THEN 1 ELSE 3 END AS op").createOrReplaceTempView("src2")
    val src2 = (0 until 40).map(i => (java.lang.Long.valueOf(i * 7L + 1001), i, s"r$i", if (i % 5 == 0) 1 else 3))
    val scans2 = scansOf(merge("src2"))
    applyMerge(oracle, src2)
    check(oracle, "after MERGE from a computed source")
    val holding2 = fragmentsHolding(src2.map(_._1.longValue()))
    assert(scans2.exists(s => s._3 && s._2 <= holding2 + 1), s"no scan read only the fragments of the keys: $scans2")
    assert(scans2.forall(_._3), s"a scan of the MERGE read the whole table: $scans2")

    // UPDATE and DELETE by key
    sql("UPDATE c.r.t SET a = -1 WHERE id IN (20, 22, 23, 3000)")
    Seq(20L, 22L, 3000L).foreach(k => oracle.get(k).foreach(v => oracle(k) = (-1, v._2)))
    sql("DELETE FROM c.r.t WHERE id = 24 OR id = 26 OR id = 27")
    oracle --= Seq(24L, 26L)
    check(oracle, "after UPDATE and DELETE by key")
    // the table keeps its defaults: compaction ran and the content is still the oracle's
    assert(spark.table("c.r.t").count() == oracle.size)
  }

  test("UPDATE and MERGE carry the old values they read (_vbefore): no table read at commit unless a key is new") {
    val oracle = setup()
    // key lookups of the statement's own plan, and of frames the commit collects (reads of the table at commit)
    def lookups(f: => Any): (Int, Int) = {
      val (commit, plan) = executionsOf(f).filter(_._4).partition(_._1 == "collect")
      (plan.size, commit.size)
    }
    def source(name: String, rows: Seq[(java.lang.Long, Int, String, Int)]): Unit =
      spark.createDataFrame(spark.sparkContext.parallelize(rows.map { case (k, a, v, op) => Row(k, a, v, op) }, 2),
        new StructType().add("id", LongType).add("a", IntegerType).add("s", StringType).add("op", IntegerType))
        .createOrReplaceTempView(name)
    // existing keys only, in several fragments: updates (key 500 to the values it has) and deletes
    val existing = Seq[(java.lang.Long, Int, String, Int)]((20L, 1, "x", 3), (500L, 1000, "u500", 3), (2000L, 3, "y", 1),
      (3990L, 4, "z", 3), (12L, 5, "w", 1))
    source("old", existing)
    val commits0 = commits("r")
    // the runtime-filtered scan of the MERGE is the only key lookup: the commit reads no table rows
    assert(lookups(merge("old")) == ((1, 0)))
    applyMerge(oracle, existing)
    check(oracle, "after a MERGE of existing keys")
    assert(commits("r") == commits0 + 1)
    // an update to the values a row has is not a change: only key 500 (unchanged) matched, nothing is committed
    source("same", Seq((500L, 1000, "u500", 3)))
    merge("same")
    assert(commits("r") == commits0 + 1, "a MERGE that changes nothing committed")
    // a new key is looked up at commit (it may collide with a row the ON condition did not match): a few keys by
    // the driver (LocalLookup), no query; over localCommitMaxRows the distributed path reads them with a query
    val withInsert = Seq[(java.lang.Long, Int, String, Int)]((24L, 6, "p", 3), (25L, 7, "q", 3))
    source("ins", withInsert)
    assert(lookups(merge("ins")) == ((1, 0)))
    applyMerge(oracle, withInsert)
    check(oracle, "after a MERGE with an insert")
    // UPDATE of existing keys (and of a key that moves: the new key is looked up and must be free)
    assert(lookups(sql("UPDATE c.r.t SET a = a + 1 WHERE id IN (30, 32)"))._2 == 0)
    Seq(30L, 32L).foreach(k => oracle(k) = (oracle(k)._1 + 1, oracle(k)._2))
    check(oracle, "after UPDATE of existing keys")
    expectError(ErrorClass.KeyExists)(failsWithoutCommit("r")(sql("UPDATE c.r.t SET id = 36 WHERE id = 34")))
    sql("UPDATE c.r.t SET id = 35 WHERE id = 34")
    oracle(35L) = oracle.remove(34L).get
    check(oracle, "after UPDATE that moves a key")
    // a MERGE whose ON condition is not the key can insert a key the table has: refused, nothing committed
    source("clash", Seq((38L, 1, "c", 3)))
    expectError(ErrorClass.KeyExists)(failsWithoutCommit("r")(sql("""MERGE INTO c.r.t AS t USING clash AS s ON t.s = s.s
      WHEN NOT MATCHED THEN INSERT (id, a, s) VALUES (s.id, s.a, s.s)""")))
    check(oracle, "after the refused MERGE")
  }

  test("MERGE with AQE on, a non-key ON condition, and a MERGE that matches no key") {
    val oracle = setup()
    spark.createDataFrame(Seq((100L, 1, "p", 3), (101L, 2, "q", 3), (4001L, 3, "n", 3))).toDF("id", "a", "s", "op")
      .createOrReplaceTempView("src")
    merge("src")
    applyMerge(oracle, Seq((100L, 1, "p", 3), (101L, 2, "q", 3), (4001L, 3, "n", 3)).map(x => (java.lang.Long.valueOf(x._1), x._2, x._3, x._4)))
    check(oracle, "after MERGE with AQE")
    // ON a non-key column: every row with a = 5 gets s = 'by-a' (correct, whatever is pruned)
    spark.createDataFrame(Seq((5, "by-a"))).toDF("a", "s").createOrReplaceTempView("bya")
    sql("MERGE INTO c.r.t t USING bya s ON t.a = s.a WHEN MATCHED THEN UPDATE SET s = s.s")
    oracle.filter(_._2._1 == 5).keys.toSeq.foreach(k => oracle(k) = (5, "by-a"))
    check(oracle, "after MERGE on a non-key column")
    // keys that do not exist and no insert clause: nothing changes, nothing is committed
    val before = headOf("r")
    spark.createDataFrame(Seq((1L, 0, "x", 1), (3L, 0, "y", 2))).toDF("id", "a", "s", "op").createOrReplaceTempView("none")
    sql("MERGE INTO c.r.t t USING none s ON t.id = s.id WHEN MATCHED THEN DELETE")
    assert(headOf("r") == before)
    check(oracle, "after a MERGE matching nothing")
  }

  test("above localCommitMaxRows the distributed change computation gives the same results and errors") {
    val oracle = setup()
    withConf(VersionedOptions.ConfLocalCommitMaxRows -> "0") {
      val src = Seq[(java.lang.Long, Int, String, Int)]((10L, 1, "d", 1), (12L, 2, "u", 3), (13L, 3, "i", 3),
        (3000L, 4, "u2", 3), (5001L, 5, "i2", 3), (null, 6, "n", 1))
      val schema = new StructType().add("id", LongType).add("a", IntegerType).add("s", StringType).add("op", IntegerType)
      spark.createDataFrame(spark.sparkContext.parallelize(src.map { case (k, a, v, op) => Row(k, a, v, op) }, 2), schema)
        .createOrReplaceTempView("dsrc")
      merge("dsrc")
      applyMerge(oracle, src)
      check(oracle, "after a MERGE on the distributed path")
      val e = intercept[Throwable](sql("UPDATE c.r.t SET id = 14 WHERE id = 16"))
      assert(versionedCause(e).exists(_.errorClass == versioned.core.ErrorClass.KeyExists), s"expected KEY_EXISTS: $e")
    }
    val e = intercept[Throwable](sql("UPDATE c.r.t SET id = 14 WHERE id = 16"))
    assert(versionedCause(e).exists(_.errorClass == versioned.core.ErrorClass.KeyExists), s"expected KEY_EXISTS: $e")
    check(oracle, "after the refused UPDATEs")
  }

  test("MERGE key filter from the source: conditions it cannot use, sources that read the target, and null keys") {
    val oracle = setup()
    def source(name: String, rows: Seq[(java.lang.Long, Int, String, Int)]): Unit =
      spark.createDataFrame(spark.sparkContext.parallelize(rows.map { case (k, a, v, op) => Row(k, a, v, op) }, 2),
        new StructType().add("id", LongType).add("a", IntegerType).add("s", StringType).add("op", IntegerType))
        .createOrReplaceTempView(name)
    val rows = Seq[(java.lang.Long, Int, String, Int)]((40L, 50, "x", 3), (42L, 0, "y", 3), (43L, 99, "z", 3),
      (3000L, 99, "w", 1), (null, 1, "n", 3))
    source("cs", rows)
    // a condition on a target column the source cannot give (t.a < s.a): Spark's own group filter, same result
    val scans = scansOf(sql("""MERGE INTO c.r.t AS t USING cs AS s ON t.id = s.id AND t.a < s.a
      WHEN MATCHED THEN UPDATE SET s = s.s"""))
    rows.foreach { case (k, a, v, _) =>
      if (k != null) oracle.get(k.longValue()).foreach { case (ta, _) => if (ta < a) oracle(k.longValue()) = (ta, v) } }
    check(oracle, "after a MERGE with a non-key comparison")
    assert(scans.exists(!_._3), s"expected Spark's group filter (a scan of the key column): $scans")
    // a source-only conjunct in ON (s.op = 3) and a source that itself reads the target
    val before = content()
    sql("""MERGE INTO c.r.t AS t
      USING (SELECT id, a, s, op FROM cs WHERE id IN (SELECT id FROM c.r.t WHERE a > 10)) AS s
      ON t.id = s.id AND s.op = 3 WHEN MATCHED THEN UPDATE SET a = -s.a""")
    val expected = before.map { case (k, (a, v)) =>
      rows.find(r => r._1 != null && r._1.longValue() == k && r._4 == 3) match {
        case Some(r) if a > 10 => k -> (-r._2, v)
        case _ => k -> (a, v)
      }
    }
    check(expected, "after a MERGE whose source reads the target")
    oracle.clear(); oracle ++= expected
    // only null keys in the source: nothing matches, nothing is committed
    source("nulls", Seq((null, 1, "n", 3)))
    val head = headOf("r")
    sql("MERGE INTO c.r.t AS t USING nulls AS s ON t.id = s.id WHEN MATCHED THEN DELETE")
    assert(headOf("r") == head)
    check(oracle, "after a MERGE of null keys")
  }

  test("MERGE on a composite key and on a table without primary key") {
    val cs = new StructType().add("a", IntegerType).add("b", StringType).add("v", IntegerType)
    val rows = (0 until 600).map(i => Row(i / 3, s"b${i % 3}", i))
    write(frame(cs, rows), "r.ck", "primaryKey" -> "a,b")
    write(frame(cs, rows.take(300)), "r.nk")
    val oracleCk = mutable.Map(rows.map(r => (r.getInt(0), r.getString(1)) -> r.getInt(2)): _*)
    spark.createDataFrame(Seq((10, "b1", -1), (10, "b9", -2), (150, "b0", -3), (900, "b0", -4))).toDF("a", "b", "v")
      .createOrReplaceTempView("csrc")
    val scans = scansOf(sql("""MERGE INTO c.r.ck t USING csrc s ON t.a = s.a AND t.b = s.b
      WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *"""))
    Seq((10, "b1", -1), (10, "b9", -2), (150, "b0", -3), (900, "b0", -4)).foreach { case (a, b, v) => oracleCk((a, b)) = v }
    val gotCk = spark.table("c.r.ck").collect().map(r => (r.getInt(0), r.getString(1)) -> r.getInt(2)).toMap
    assert(gotCk == oracleCk.toMap)
    val total = tableAt("r", "ck").get.effectiveFragments.size
    assert(scans.exists(s => s._3 && s._2 < total), s"no composite-key scan was pruned: $scans")
    // key-less: identity is the whole row; no lookup, same result as the oracle
    spark.createDataFrame(Seq((5, "b2", 15), (7, "b0", 0))).toDF("a", "b", "v").createOrReplaceTempView("nsrc")
    val nscans = scansOf(sql("MERGE INTO c.r.nk t USING nsrc s ON t.a = s.a AND t.b = s.b WHEN MATCHED THEN DELETE"))
    val expected = rows.take(300).filterNot(r => (r.getInt(0) == 5 && r.getString(1) == "b2") || (r.getInt(0) == 7 && r.getString(1) == "b0"))
    assert(spark.table("c.r.nk").collect().map(_.toString).sorted.toSeq == expected.map(_.toString).sorted)
    assert(!nscans.exists(_._3), s"a key-less table got a key lookup: $nscans")
  }

  test("deleteWhere on key values reads by key lookup and equals the oracle") {
    val oracle = setup()
    val opts = new java.util.HashMap[String, String](); opts.put("warehouse", warehouse.getAbsolutePath)
    def deleteWhere(table: String, cond: String): (Long, Seq[(Long, Long, Boolean)]) = {
      var n = 0L
      val scans = scansOf { n = TableApi.deleteWhere(spark, opts, table, cond, null, null, null) }
      (n, scans)
    }
    /** Spark jobs `f` ran, not the background compaction's (the listener bus is asynchronous: drained before counting). */
    def jobsOf(f: => Any): Seq[String] = {
      val jobs = new java.util.concurrent.ConcurrentLinkedQueue[String]()
      val l = new org.apache.spark.scheduler.SparkListener {
        override def onJobStart(j: org.apache.spark.scheduler.SparkListenerJobStart): Unit = {
          val p = Option(j.properties)
          if (!p.flatMap(x => Option(x.getProperty("spark.jobGroup.id"))).exists(_.startsWith("versioned-compaction-")))
            jobs.add(String.valueOf(p.map(_.getProperty("spark.job.description")).orNull))
        }
      }
      spark.sparkContext.addSparkListener(l)
      try { f; Thread.sleep(1000) } finally spark.sparkContext.removeSparkListener(l)
      scala.jdk.CollectionConverters.IterableHasAsScala(jobs).asScala.toSeq
    }
    val total = tableAt("r", "t").get.effectiveFragments.size
    val log0 = spark.sql("SELECT * FROM c.r.`$log`").count()
    // 30 keys (over Parquet's IN threshold of 10) in two fragments, some missing: looked up and committed on the
    // driver (KeyDelete), no Spark job and no query execution
    val keys = (0 until 30).map(i => 100L + i)
    var (n1, s1) = (0L, Seq.empty[(Long, Long, Boolean)])
    val jobs1 = jobsOf { val r = deleteWhere("r.t", s"id IN (${keys.mkString(", ")})"); n1 = r._1; s1 = r._2 }
    assert(jobs1.isEmpty, s"a delete of a few keys ran Spark jobs: $jobs1")
    assert(n1 == keys.count(oracle.contains) && s1.isEmpty, s"$n1 rows, scans $s1")
    oracle --= keys
    check(oracle, "after deleteWhere id IN (...)")
    // OR of equalities, a key that does not exist, and a key AND a value condition
    val (n2, s2) = deleteWhere("r.t", "id = 3000 OR id = 3003 OR id = 12")
    assert(n2 == 2 && s2.isEmpty, s2); oracle --= Seq(3000L, 12L)
    val cand = (200L until 260L by 2)
    val (n3, _) = deleteWhere("r.t", s"id IN (${cand.mkString(",")}) AND a % 2 = 0")
    val gone = cand.filter(k => oracle.get(k).exists(_._1 % 2 == 0))
    assert(n3 == gone.size); oracle --= gone
    assert(deleteWhere("r.t", "id IN (1, 3, 5)")._1 == 0)
    // looked up again: keys deleted above (a DIFF tombstone over their SNAP rows), keys a DIFF updated or inserted
    assert(deleteWhere("r.t", s"id IN (${keys.take(3).mkString(", ")})")._1 == 0)
    assert(deleteWhere("r.t", "id IN (10, 11, 13)")._1 == 2); oracle --= Seq(10L, 11L)
    assert(spark.sql("SELECT * FROM c.r.`$log`").count() == log0 + 4, "a commit per delete that matched rows, none otherwise")
    // over the driver's bound (localCommitMaxRows): the same lookup, by a pruned Spark scan
    val many = (1000L until 1100L by 2)
    val (n5, s5) = withConf(VersionedOptions.ConfLocalCommitMaxRows -> "20")(deleteWhere("r.t", s"id IN (${many.mkString(", ")})"))
    assert(n5 == many.count(oracle.contains)); oracle --= many
    assert(s5.exists(s => s._3 && s._2 <= fragmentsHolding(many) && s._2 < total), s"deleteWhere IN was not pruned: $s5")
    // not a key set: the whole table is read, the result is still exact
    val (n4, s4) = deleteWhere("r.t", "a = 96 OR id = 2")
    val gone4 = oracle.filter { case (k, (a, _)) => a == 96 || k == 2 }.keys.toSeq
    assert(n4 == gone4.size); oracle --= gone4
    assert(!s4.exists(_._3), s"a condition that is not a key set got a lookup: $s4")
    check(oracle, "after deleteWhere")
  }

  test("random MERGEs and UPDATEs: the driver's change computation and the distributed one give the oracle's content and errors") {
    val oracle = setup()
    write(spark.table("c.r.t"), "r.d", "primaryKey" -> "id") // the same rows, changed by the distributed computation
    val srcSchema = new StructType().add("id", LongType).add("a", IntegerType).add("s", StringType).add("op", IntegerType)
    val rnd = new scala.util.Random(42)
    /** Runs `statement` (`%t` = the table) on both tables; the error class both raised, or None. */
    def both(statement: String): Option[String] = {
      def run(table: String) = try { sql(statement.replace("%t", table)); None } catch {
        case e: Throwable => Some(versionedCause(e).map(_.errorClass.toString).getOrElse(throw e))
      }
      val local = run("c.r.t")
      val distributed = withConf(VersionedOptions.ConfLocalCommitMaxRows -> "0")(run("c.r.d"))
      assert(local == distributed, s"$statement: on the driver $local, distributed $distributed")
      local
    }
    (0 until versioned.core.TestDepth(3, 6)).foreach { round =>
      val keys = rnd.shuffle((0L until 4100L).toList).take(25)
      val src = keys.map(k => (java.lang.Long.valueOf(k), rnd.nextInt(50), s"r$round-$k", 1 + rnd.nextInt(3)))
      spark.createDataFrame(spark.sparkContext.parallelize(src.map { case (k, a, v, op) => Row(k, a, v, op) }, 2), srcSchema)
        .createOrReplaceTempView("rsrc")
      assert(both(s"""MERGE INTO %t AS t USING rsrc AS s ON t.id = s.id
        WHEN MATCHED AND s.op = 1 THEN DELETE
        WHEN MATCHED THEN UPDATE SET a = s.a, s = s.s
        WHEN NOT MATCHED AND s.op = 3 THEN INSERT (id, a, s) VALUES (s.id, s.a, s.s)""").isEmpty)
      applyMerge(oracle, src)
      // moving two keys up by one: refused when a moved key lands on a row that stays
      val x = 2L * rnd.nextInt(2000)
      val moved = Seq(x, x + 2).filter(oracle.contains)
      val clash = moved.exists(k => oracle.contains(k + 1))
      val err = both(s"UPDATE %t SET id = id + 1 WHERE id IN ($x, ${x + 2})")
      assert(err == Option.when(clash)(versioned.core.ErrorClass.KeyExists.toString), s"round $round: moving $moved gave $err")
      if (!clash) moved.map(k => k -> oracle(k)).foreach { case (k, v) => oracle -= k; oracle(k + 1) = v }
      // two rows given one key
      val y = 2L * rnd.nextInt(2000)
      val dup = Seq(y, y + 2).count(oracle.contains) == 2
      val err2 = both(s"UPDATE %t SET id = 100001 WHERE id IN ($y, ${y + 2})")
      val taken = oracle.contains(100001L) && Seq(y, y + 2).exists(oracle.contains)
      val expected = if (dup) Some(versioned.core.ErrorClass.DuplicateKey.toString)
        else Option.when(taken)(versioned.core.ErrorClass.KeyExists.toString)
      assert(err2 == expected, s"round $round: giving ${Seq(y, y + 2)} one key gave $err2")
      if (expected.isEmpty) Seq(y, y + 2).filter(oracle.contains).foreach { k => val v = oracle(k); oracle -= k; oracle(100001L) = v }
      check(oracle, s"round $round, changed on the driver")
      check(oracle, s"round $round, changed by Spark jobs", "c.r.d")
    }
  }

  test("key lookups from filters: sets of values on the first key column only") {
    import org.apache.spark.sql.sources._
    val layout = versioned.spark.format.TableLayout.create(schema, Seq("id"))
    def keysOf(fs: Filter*) = versioned.spark.read.KeyLookup.fromFilters(layout, fs).map(_.values.map(_.asInstanceOf[Long]).toList)
    assert(keysOf(In("id", Array(3L, 1L, 2L, 1L))).contains(List(1L, 2L, 3L)))
    assert(keysOf(Or(EqualTo("id", 5L), Or(EqualTo("id", 4L), In("id", Array(9L))))).contains(List(4L, 5L, 9L)))
    assert(keysOf(And(In("id", Array(1L, 2L)), GreaterThan("a", 3))).contains(List(1L, 2L)))
    assert(keysOf(In("id", Array(1L, 2L, 3L)), In("id", Array(2L, 3L, 4L))).contains(List(2L, 3L)))
    assert(keysOf(EqualTo("id", null)).contains(Nil))
    assert(keysOf(Or(EqualTo("id", 1L), EqualTo("a", 2))).isEmpty)
    assert(keysOf(GreaterThan("id", 1L)).isEmpty)
    assert(keysOf(In("a", Array(1, 2))).isEmpty)
    val keyless = versioned.spark.format.TableLayout.create(schema, Nil)
    assert(versioned.spark.read.KeyLookup.fromFilters(keyless, Seq(In("id", Array(1L)))).isEmpty)
    val l = versioned.spark.read.KeyLookup.of(layout.keyFields.head, Seq(1L, 2L, 3L, 7L, 9L, 10L))
    assert(l.filter.get.toString.contains("GreaterThanOrEqual(id,1)"))
    assert(l.mayHold(Some(4L), Some(7L)) && !l.mayHold(Some(4L), Some(6L)) && l.mayHold(None, Some(1L)) && !l.mayHold(Some(11L), None))
  }
}
