package versioned.spark.tx

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.functions.{expr, lit}
import org.apache.spark.sql.types.ByteType
import org.apache.spark.storage.StorageLevel
import versioned.core.ChangeKind
import versioned.spark.session.{Jobs, VersionedOptions}

/**
 * The rows of a table version (read with its hidden columns) that match a SQL condition, as DIFF
 * deletes: kept after counting them, so the table is scanned once. [[release]] frees them.
 */
private[tx] final class RowDeletes(spark: SparkSession, current: DataFrame, condition: String, what: String) {
  private val matched = current.filter(expr(condition)).persist(StorageLevel.MEMORY_AND_DISK)
  /** How many rows match. */
  val count: Long = try Jobs.described(spark, what)(matched.count()) catch { case t: Throwable => release(); throw t }
  /** The matching rows as changes (`_vchange` = delete). */
  def changes: DataFrame = matched.withColumn(VersionedOptions.ChangeColumn, lit(ChangeKind.Delete).cast(ByteType))
  def release(): Unit = matched.unpersist()
}
