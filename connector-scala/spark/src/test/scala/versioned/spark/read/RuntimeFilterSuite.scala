package versioned.spark.read

import org.apache.spark.sql.Row
import org.apache.spark.sql.connector.expressions.{Expression, Expressions}
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec
import org.apache.spark.sql.types._
import versioned.spark.VersionedTestBase
import versioned.spark.session.VersionedOptions

/**
 * Runtime filters on the key (`SupportsRuntimeV2Filtering`, as MERGE and UPDATE receive them) arrive after
 * Spark built the scan's reader factory: the factory's Parquet readers are rebuilt with the lookup pushed
 * down, and a partition read through the factory returns only the looked-up keys.
 */
class RuntimeFilterSuite extends VersionedTestBase {
  // ten fragments of 1,000 rows
  override protected def extraConf: Map[String, String] = Map(VersionedOptions.ConfFragmentRows -> "1000")

  test("a runtime filter rebuilds the readers of a factory built before it; reads return only its keys") {
    val schema = new StructType().add("id", LongType).add("v", IntegerType)
    write(frame(schema, (0L until 10000L).map(i => Row(i, i.toInt * 2)), partitions = 2), "r.t", "primaryKey" -> "id")
    val scan = read("r.t").queryExecution.executedPlan.collectFirst { case b: BatchScanExec => b.scan }.get
      .asInstanceOf[VersionedScan]
    val factory = scan.createReaderFactory().asInstanceOf[FragmentReaderFactory]
    val before = factory.readers
    assert(scan.partitions.length == 10)
    scan.filter(Array(new Predicate("IN", Array[Expression](Expressions.column("id"), Expressions.literal(4321L),
      Expressions.literal(17L)))))
    assert(factory.readers ne before, "the factory kept readers without the lookup")
    assert(scan.partitions.length == 2)
    val rows = scan.planInputPartitions().toSeq.flatMap { p =>
      if (factory.supportColumnarReads(p)) {
        val r = factory.createColumnarReader(p)
        val out = Iterator.continually(r.next()).takeWhile(identity).flatMap { _ =>
          import scala.jdk.CollectionConverters._
          r.get().rowIterator().asScala.map(x => (x.getLong(0), x.getInt(1))).toList
        }.toList
        r.close(); out
      } else {
        val r = factory.createReader(p)
        val out = Iterator.continually(r.next()).takeWhile(identity).map(_ => (r.get().getLong(0), r.get().getInt(1))).toList
        r.close(); out
      }
    }
    assert(rows.sorted == Seq((17L, 34), (4321L, 8642)))
  }
}
