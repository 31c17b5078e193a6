package versioned.spark.read

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, ObjectInputStream, ObjectOutputStream}
import org.apache.spark.sql.Row
import org.apache.spark.sql.connector.read.Scan
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec
import org.apache.spark.sql.types._
import org.apache.spark.util.SerializableConfiguration
import versioned.spark.{VersionedOptions, VersionedTestBase}

/**
 * Planning a scan is cheap: Spark's columnar question is answered without building Parquet readers (each
 * broadcasts a Hadoop configuration), the scan builds one reader factory whichever copy of the plan asks, and
 * the configuration readers broadcast serializes with every property and value.
 */
class ScanPlanningSuite extends VersionedTestBase {
  override protected def extraConf: Map[String, String] = Map(VersionedOptions.ConfFragmentRows -> "1000")

  private def nextBroadcastId(): Long = { val b = spark.sparkContext.broadcast(0); val id = b.id; b.destroy(); id }

  test("planning a lookup builds no reader; the scan's one factory agrees with its columnar answer") {
    val schema = new StructType().add("id", LongType).add("v", IntegerType)
    write(frame(schema, (0L until 5000L).map(i => Row(i, i.toInt)), partitions = 2), "p.t", "primaryKey" -> "id")
    write(frame(schema, Seq(Row(10L, -1), Row(4000L, -2))), "p.t", "upsert" -> "true") // a DIFF under two fragments
    assert(versioned.spark.api.MaintenanceApi.awaitCompactions(0L)) // no background job broadcasts meanwhile
    for (cond <- Seq("id = 4000", "id BETWEEN 100 AND 2000", "v > 10")) {
      val df = read("p.t").filter(cond)
      val before = nextBroadcastId()
      val plan = df.queryExecution.executedPlan
      assert(nextBroadcastId() == before + 1, s"$cond: planning broadcast a configuration (built Parquet readers)")
      val scan = plan.collectFirst { case b: BatchScanExec => b.scan }.get.asInstanceOf[VersionedScan]
      val factory = scan.createReaderFactory()
      assert(scan.createReaderFactory() eq factory, s"$cond: a second factory was built")
      val columnar = scan.columnarSupportMode() == Scan.ColumnarSupportMode.SUPPORTED
      assert(scan.planInputPartitions().forall(p => factory.supportColumnarReads(p) == columnar), cond)
    }
    assert(read("p.t").filter("id = 4000").collect().toSeq == Seq(Row(4000L, -2)))
    assert(read("p.t").filter("id BETWEEN 5 AND 12").collect().sortBy(_.getLong(0)).map(_.getInt(1)).toSeq ==
      Seq(5, 6, 7, 8, 9, -1, 11, 12))
  }

  test("the readers' configuration serializes every property and value") {
    val conf = ObjectFiles.verifying(spark.sparkContext.hadoopConfiguration)
    conf.set("versioned.test.unicode", "caf\u00e9 \u65e5\u672c \ud83d\ude00")
    conf.set("versioned.test.empty", "")
    val bytes = new ByteArrayOutputStream()
    val out = new ObjectOutputStream(bytes)
    out.writeObject(new SerializableConfiguration(conf))
    out.close()
    val back = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray)).readObject()
      .asInstanceOf[SerializableConfiguration].value
    import scala.jdk.CollectionConverters._
    def props(c: org.apache.hadoop.conf.Configuration) = c.iterator().asScala.map(e => e.getKey -> e.getValue).toMap
    assert(props(back) == props(conf))
    assert(props(back).size > 100, "the defaults travel too")
    assert(back.get("versioned.test.unicode") == "caf\u00e9 \u65e5\u672c \ud83d\ude00")
    assert(back.getBoolean("parquet.page.verify-checksum.enabled", false))
  }
}

/**
 * Filters that are exactly a set of values of an integral first key are applied by the scan's readers, so Spark
 * plans no filter for them (and compiles no code per looked-up value); the results stay exact with DIFFs present,
 * when the key is not selected, with a LIMIT, with other filters beside them, and for keys the readers cannot
 * restrict (strings), which keep Spark's filter.
 */
class ExactKeyFilterSuite extends VersionedTestBase {
  override protected def extraConf: Map[String, String] = Map(VersionedOptions.ConfFragmentRows -> "1000")

  private def filters(df: org.apache.spark.sql.DataFrame): Int =
    df.queryExecution.executedPlan.collect { case f: org.apache.spark.sql.execution.FilterExec => f }.size

  test("key-set filters on an integral key are the scan's own; results equal a plain filter over every row") {
    val schema = new StructType().add("id", LongType).add("v", IntegerType).add("s", StringType)
    val base = (0L until 5000L).map(i => Row(i, i.toInt, s"s$i"))
    write(frame(schema, base, partitions = 2), "k.t", "primaryKey" -> "id")
    // updates and deletes in DIFFs, next to rows of other keys in the same pages
    val changes = (0L until 5000L by 7L).map(i => Row(i, -i.toInt, s"u$i"))
    write(frame(schema, changes), "k.t", "upsert" -> "true")
    val deletes = new StructType().add("id", LongType).add("v", IntegerType).add("s", StringType).add("_del", BooleanType)
    write(frame(deletes, Seq(14L, 2100L, 4998L).map(i => Row(i, 0, "", true))), "k.t", "upsert" -> "true", "deleteColumn" -> "_del")
    val expected = read("k.t").collect().map(r => r.getLong(0) -> r).toMap // the whole table, no key filter
    assert(expected.size == 4997)
    def check(cond: String, keys: Set[Long], exact: Boolean, cols: Seq[String] = Seq("id", "v", "s")): Unit = {
      val df = read("k.t").filter(cond).select(cols.map(org.apache.spark.sql.functions.col): _*)
      val want = keys.toSeq.flatMap(expected.get).map(r => Row(cols.map(c => r.get(r.fieldIndex(c))): _*)).sortBy(_.toString)
      assert(df.collect().toSeq.sortBy(_.toString) == want, cond)
      assert((filters(df) == 0) == exact, s"$cond: ${df.queryExecution.executedPlan}")
    }
    check("id = 4000", Set(4000L), exact = true)
    check("id = 14", Set.empty, exact = true) // deleted
    check("id IN (7, 8, 2100, 4999, 123456)", Set(7L, 8L, 4999L), exact = true)
    check("id = 7 OR id = 701 OR id IN (3, 9)", Set(7L, 701L, 3L, 9L), exact = true, cols = Seq("v"))
    check("id IN (1, 2, 3) AND id IN (2, 3, 4)", Set(2L, 3L), exact = true, cols = Seq("s"))
    check("id IN (1, 2, 3, 4) AND v > 2", Set(3L, 4L), exact = false)
    check("id BETWEEN 10 AND 20", (10L to 20L).toSet, exact = false)
    assert(read("k.t").filter("id IN (7, 8, 9)").count() == 3)
    assert(read("k.t").filter("id IN (7, 8, 9)").limit(2).collect().length == 2)
    assert(read("k.t").filter("id IN (7, 8, 9)").select("v").limit(5).collect().map(_.getInt(0)).sorted.toSeq == Seq(-7, 8, 9))
  }

  test("a string key keeps Spark's filter") {
    val schema = new StructType().add("k", StringType).add("v", IntegerType)
    write(frame(schema, (0 until 3000).map(i => Row(f"k$i%05d", i))), "sk.t", "primaryKey" -> "k")
    val df = read("sk.t").filter("k IN ('k00010', 'k02999', 'nope')")
    assert(df.collect().map(_.getInt(1)).sorted.toSeq == Seq(10, 2999))
    assert(filters(df) == 1)
  }
}
