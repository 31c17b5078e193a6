package versioned.spark.read

import org.apache.spark.sql.connector.metric.{CustomMetric, CustomSumMetric, CustomTaskMetric}

/** Driver-side scan metrics: what pruning left to read. Visible in the Spark UI and the plan's metrics. */
private[versioned] object ScanMetrics {
  val FragmentsTotal = "versionedFragmentsTotal"
  val FragmentsScanned = "versionedFragmentsScanned"
  val ObjectsScanned = "versionedObjectsScanned"
  val BytesScanned = "versionedBytesScanned"

  private final class Sum(n: String, d: String) extends CustomSumMetric {
    override def name(): String = n
    override def description(): String = d
  }

  def supported: Array[CustomMetric] = Array(
    new Sum(FragmentsTotal, "fragments in the table version"),
    new Sum(FragmentsScanned, "fragments left after pruning"),
    new Sum(ObjectsScanned, "objects left after pruning"),
    new Sum(BytesScanned, "bytes of objects left after pruning"))

  def values(total: Long, parts: Seq[FragmentPartition]): Array[CustomTaskMetric] = Seq(
    FragmentsTotal -> total,
    FragmentsScanned -> parts.size.toLong,
    ObjectsScanned -> parts.map(_.objects.size.toLong).sum,
    BytesScanned -> parts.flatMap(_.objects).map(_.size).sum).map { case (n, v) =>
    new CustomTaskMetric { override def name(): String = n; override def value(): Long = v }: CustomTaskMetric
  }.toArray
}
