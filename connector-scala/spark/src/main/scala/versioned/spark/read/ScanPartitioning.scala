package versioned.spark.read

import org.apache.spark.network.util.JavaUtils
import org.apache.spark.sql.SparkSession

/**
 * Packs a scan's fragments into input partitions. Every task has a fixed cost (scheduling, task
 * deserialization, reader setup), so small fragments share a task, sized like Spark's own packing of
 * small files (`spark.sql.files.maxPartitionBytes`, `spark.sql.files.openCostInBytes` per fragment,
 * `spark.sql.files.minPartitionNum` or the default parallelism). Groups are consecutive fragments of
 * about equal weight, and their number is a multiple of the parallelism, so the cores finish together.
 * A fragment is never split.
 */
private[read] object ScanPartitioning {

  /** Groups of `weights` indices (consecutive, in order). */
  def groups(weights: Seq[Long], maxBytes: Long, openCost: Long, parallelism: Int): Seq[Range] = {
    val n = weights.size
    val w = weights.map(_ + openCost)
    val total = w.sum.toDouble
    if (n <= 1 || total <= 0) return if (n == 0) Nil else Seq(0 until n)
    val p = math.max(1, parallelism)
    val split = math.min(maxBytes.toDouble, math.max(openCost.toDouble, total / p))
    val needed = math.max(1, math.ceil(total / split).toInt)
    val g = math.min(n, if (needed == 1) 1 else ((needed + p - 1) / p) * p)
    // Fragment i joins the group its weight's midpoint falls in.
    val cum = w.scanLeft(0L)(_ + _)
    val of = (0 until n).map(i => math.min(g - 1, ((cum(i) + w(i) / 2.0) * g / total).toInt))
    (0 until n).groupBy(of).toSeq.sortBy(_._1).map { case (_, is) => is.min to is.max }
  }

  def groups(spark: SparkSession, weights: Seq[Long]): Seq[Range] = {
    def bytes(key: String, default: String) = JavaUtils.byteStringAsBytes(spark.conf.getOption(key).getOrElse(default))
    val parallelism = spark.conf.getOption("spark.sql.files.minPartitionNum")
      .orElse(spark.conf.getOption("spark.sql.leafNodeDefaultParallelism")).map(_.toInt)
      .getOrElse(spark.sparkContext.defaultParallelism)
    groups(weights, bytes("spark.sql.files.maxPartitionBytes", "128m"), bytes("spark.sql.files.openCostInBytes", "4m"), parallelism)
  }
}
