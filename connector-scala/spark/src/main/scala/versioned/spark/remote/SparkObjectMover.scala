package versioned.spark.remote

import org.apache.spark.SparkException
import org.apache.spark.sql.SparkSession
import org.apache.spark.util.SerializableConfiguration
import versioned.core.{ObjectCopy, ObjectMover, ObjectTransfer, VersionedException}
import versioned.spark.session.Jobs

/**
 * Object transfer between warehouses as Spark tasks: the copies are cut into batches (about two per core,
 * at most [[SparkObjectMover.MaxBatch]] objects each) and each task copies its batch straight from one
 * store to the other ([[ObjectTransfer.copy]]: staged, verified against the recorded checksum, then renamed
 * into place), so no object passes through the driver. A task's typed error (OBJECT_CORRUPT,
 * OBJECT_MISSING, STORAGE_ERROR) is raised as it is.
 */
private[versioned] final class SparkObjectMover(spark: SparkSession) extends ObjectMover {
  override def copy(copies: Seq[ObjectCopy]): Int = if (copies.isEmpty) 0 else {
    val sc = spark.sparkContext
    val tasks = math.max(1, 2 * sc.defaultParallelism)
    val perTask = math.max(1, math.min(SparkObjectMover.MaxBatch, (copies.size + tasks - 1) / tasks))
    // largest first, dealt round-robin, so batches carry similar numbers of bytes
    val n = (copies.size + perTask - 1) / perTask
    val batches = copies.sortBy(c => -c.meta.sizeBytes).zipWithIndex.groupBy(_._2 % n).values.map(_.map(_._1)).toSeq
    val conf = sc.broadcast(new SerializableConfiguration(sc.hadoopConfiguration))
    try Jobs.described(spark, s"transfer ${copies.size} objects in ${batches.size} tasks") {
      sc.parallelize(batches, batches.size).map(b => b.count(ObjectTransfer.copy(conf.value.value, _))).collect().sum
    } catch {
      case e: SparkException => throw SparkObjectMover.versionedCause(e).getOrElse(e)
    } finally conf.destroy()
  }
}

private[versioned] object SparkObjectMover {
  val MaxBatch = 64

  /** The first typed error in a cause chain (a task's error arrives wrapped in the job's SparkException). */
  def versionedCause(t: Throwable): Option[VersionedException] =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(32).collectFirst { case v: VersionedException => v }
}
