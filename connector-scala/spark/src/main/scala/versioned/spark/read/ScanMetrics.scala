package versioned.spark.read

import org.apache.spark.sql.connector.metric.{CustomMetric, CustomSumMetric, CustomTaskMetric}

/** Driver-side scan metrics: what pruning left to read. Visible in the Spark UI and the plan's metrics. */
private[versioned] object ScanMetrics {
  val FragmentsTotal = "versionedFragmentsTotal"
  val FragmentsScanned = "versionedFragmentsScanned"
  val ObjectsScanned = "versionedObjectsScanned"
  val BytesScanned = "versionedBytesScanned"

  def supported: Array[CustomMetric] =
    Array(new FragmentsTotalMetric, new FragmentsScannedMetric, new ObjectsScannedMetric, new BytesScannedMetric)

  def values(total: Long, parts: Seq[FragmentPartition]): Array[CustomTaskMetric] = Seq(
    FragmentsTotal -> total,
    FragmentsScanned -> parts.size.toLong,
    ObjectsScanned -> parts.map(_.objects.size.toLong).sum,
    BytesScanned -> parts.flatMap(_.objects).map(_.size).sum).map { case (n, v) =>
    new CustomTaskMetric { override def name(): String = n; override def value(): Long = v }: CustomTaskMetric
  }.toArray
}

/** Spark instantiates metric classes by name, so each is a top-level class with a no-argument constructor. */
private[versioned] abstract class NamedSumMetric(n: String, d: String) extends CustomSumMetric {
  override def name(): String = n
  override def description(): String = d
}
private[versioned] class FragmentsTotalMetric extends NamedSumMetric(ScanMetrics.FragmentsTotal, "fragments in the table version")
private[versioned] class FragmentsScannedMetric extends NamedSumMetric(ScanMetrics.FragmentsScanned, "fragments left after pruning")
private[versioned] class ObjectsScannedMetric extends NamedSumMetric(ScanMetrics.ObjectsScanned, "objects left after pruning")
private[versioned] class BytesScannedMetric extends NamedSumMetric(ScanMetrics.BytesScanned, "bytes of objects left after pruning")
