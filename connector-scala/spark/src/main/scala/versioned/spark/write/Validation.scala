package versioned.spark.write

import versioned.spark.format.SparkKeys

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.functions.{col => _, _}
import org.apache.spark.sql.types.DataType
import versioned.spark.format.Columns.col
import versioned.core.DataValidationException
import versioned.core.format.KeyRules
import versioned.spark.format.TableLayout

/**
 * The rule every write's rows obey before anything is written: no null primary key, no key twice.
 * Checked where the rows are: distributed for writes and row-level operations ([[keys]]), on the
 * driver for small writes ([[LocalCommit]], by the kernel's `KeyRules.checkSorted`), with the same errors. `operation` names a row-level
 * operation (`UPDATE`, `MERGE`) in the messages; plain writes leave it out.
 */
private[versioned] object Validation {
  /** Null and duplicate keys of the data of a write to a keyed table. */
  def check(input: DataFrame, layout: TableLayout): Unit = if (!layout.hidden) keys(input, layout.primaryKey, None)

  /** Null and duplicate values of `keys` in `input`, in one pass; only the first offending group comes back. */
  def keys(input: DataFrame, keys: Seq[String], operation: Option[String]): Unit = {
    val nullFlag = keys.map(k => col(k).isNull).reduce(_ || _)
    val bad = input.groupBy(keys.map(col): _*).agg(count(lit(1)).as("_vcount"), max(nullFlag).as("_vnull"))
      .filter(col("_vcount") > 1 || col("_vnull")).orderBy(col("_vnull").desc).limit(1).collect()
    if (bad.nonEmpty && bad.head.getAs[Boolean]("_vnull")) throw nullKey(keys, operation)
    if (bad.nonEmpty) throw duplicateKey(keys, bad.head.getLong(keys.size), keys.indices.map(bad.head.get), operation)
  }

  /**
   * The same rule checked in one pass over rows that arrive sorted by key (the write tasks of a new
   * SNAP, [[SnapshotWrite]]; [[KeyRules.Ascending]]): Spark's sort orders keys in the key order, so
   * -0.0 and 0.0 meet. Rows that break it are not reported here: the write is then planned from its
   * staged rows and [[keys]] raises the error over all of them.
   */
  final class SortedKeys(keyOrdinals: Seq[Int], types: Seq[DataType]) {
    private val project = org.apache.spark.sql.catalyst.expressions.UnsafeProjection.create(
      keyOrdinals.zip(types).map { case (o, dt) =>
        org.apache.spark.sql.catalyst.expressions.BoundReference(o, dt, nullable = true) })
    private val rule = new KeyRules.Ascending[InternalRow](SparkKeys.order(types), _.copy())

    /** Adds the next row; whether every row so far had a non-null key greater than the one before. */
    def add(row: InternalRow): Boolean = rule.add(project(row))

    /** The key of the last row (key columns at ordinals 0 until n), while the rule holds. */
    def lastKey: Option[InternalRow] = rule.last
  }

  /** The error for rows with a null primary key. */
  def nullKey(keys: Seq[String], operation: Option[String]): DataValidationException = KeyRules.nullKey(keys, operation)

  /** The error for `rows` rows sharing one key; `values` are external (Row) values of the key columns. */
  def duplicateKey(keys: Seq[String], rows: Long, values: Seq[Any], operation: Option[String]): DataValidationException =
    KeyRules.duplicateKey(keys, rows, values, operation)
}
