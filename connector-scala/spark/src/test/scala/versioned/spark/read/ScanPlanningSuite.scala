package versioned.spark.read

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, ObjectInputStream, ObjectOutputStream}
import org.apache.spark.sql.Row
import org.apache.spark.sql.connector.read.Scan
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec
import org.apache.spark.sql.types._
import org.apache.spark.util.SerializableConfiguration
import versioned.spark.VersionedTestBase
import versioned.spark.session.VersionedOptions

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

