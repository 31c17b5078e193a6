package versioned.spark.write

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.{col => _, _}
import versioned.spark.Columns.col
import versioned.core.{DataValidationException, ErrorClass}
import versioned.spark.TableLayout

/**
 * Checks on incoming data before anything is written: null keys and duplicate keys. Small writes run
 * the same checks on the driver ([[LocalCommit]]) with the same errors.
 */
private[versioned] object Validation {
  def check(input: DataFrame, layout: TableLayout): Unit = if (!layout.hidden) {
    val keys = layout.primaryKey
    // One pass: rows per key, flagging null keys; only the first offending group comes back.
    val nullFlag = keys.map(k => col(k).isNull).reduce(_ || _)
    val bad = input.groupBy(keys.map(col): _*).agg(count(lit(1)).as("_vcount"), max(nullFlag).as("_vnull"))
      .filter(col("_vcount") > 1 || col("_vnull")).orderBy(col("_vnull").desc).limit(1).collect()
    if (bad.nonEmpty && bad.head.getAs[Boolean]("_vnull")) throw nullKey(keys)
    if (bad.nonEmpty) throw duplicateKey(keys, bad.head.getLong(keys.size), keys.indices.map(bad.head.get))
  }

  /** The error for rows with a null primary key (shared with the driver-side checks of small writes). */
  def nullKey(keys: Seq[String]): DataValidationException = new DataValidationException(ErrorClass.NullPrimaryKey,
    s"The data has rows with a null primary key (${keys.mkString(", ")}). Primary key values must not be null; " +
      "filter or fill them. Nothing was committed.")

  /** The error for `rows` rows sharing one key; `values` are external (Row) values of the key columns. */
  def duplicateKey(keys: Seq[String], rows: Long, values: Seq[Any]): DataValidationException =
    new DataValidationException(ErrorClass.DuplicateKey, s"The data has $rows rows with key (" +
      keys.zip(values).map { case (k, v) => s"$k=$v" }.mkString(", ") +
      "). Each key may appear once per write; deduplicate first. Nothing was committed.")
}
