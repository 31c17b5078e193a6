package versioned.spark.write

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.functions.{col => _, _}
import org.apache.spark.sql.types.DataType
import versioned.spark.Columns.col
import versioned.core.{DataValidationException, ErrorClass}
import versioned.spark.TableLayout
import versioned.spark.read.KeyComparator

/**
 * The rule every write's rows obey before anything is written: no null primary key, no key twice.
 * Checked where the rows are: distributed for writes and row-level operations ([[keys]]), on the
 * driver for small writes ([[sortedKeys]]), with the same errors. `operation` names a row-level
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
   * The same rule over `(key, row)` pairs held on the driver and sorted by key with `cmp`: a null in
   * any key column, then runs of equal keys.
   */
  def sortedKeys(keyed: IndexedSeq[(InternalRow, InternalRow)], keys: Seq[String], types: Seq[DataType],
                 cmp: KeyComparator): Unit = {
    if (keyed.exists { case (k, _) => types.indices.exists(k.isNullAt) }) throw nullKey(keys, None)
    var i = 0
    while (i < keyed.length) {
      var j = i + 1
      while (j < keyed.length && cmp.compare(keyed(i)._1, keyed(j)._1) == 0) j += 1
      if (j - i > 1) throw duplicateKey(keys, j - i,
        types.indices.map(c => CatalystTypeConverters.convertToScala(keyed(i)._1.get(c, types(c)), types(c))), None)
      i = j
    }
  }

  /**
   * The same rule checked in one pass over rows that arrive sorted by key (the write tasks of a new
   * SNAP, [[SnapshotWrite]]): the rows obey it while each key is non-null and greater than the previous
   * one (Spark's sort compares keys as [[KeyComparator]] does, so -0.0 and 0.0 meet). Rows that break it
   * are not reported here: the write is then planned from its staged rows and [[keys]] raises the error
   * over all of them.
   */
  final class SortedKeys(keyOrdinals: Seq[Int], types: Seq[DataType]) {
    private val project = org.apache.spark.sql.catalyst.expressions.UnsafeProjection.create(
      keyOrdinals.zip(types).map { case (o, dt) =>
        org.apache.spark.sql.catalyst.expressions.BoundReference(o, dt, nullable = true) })
    private val cmp = new KeyComparator(types)
    private var prev: InternalRow = _
    private var ok = true

    /** Adds the next row; whether every row so far had a non-null key greater than the one before. */
    def add(row: InternalRow): Boolean = {
      if (!ok) return false
      val key = project(row)
      if (types.indices.exists(key.isNullAt) || (prev != null && cmp.compare(prev, key) >= 0)) ok = false
      else prev = key.copy()
      ok
    }

    /** The key of the last row (key columns at ordinals 0 until n), while the rule holds. */
    def lastKey: Option[InternalRow] = if (ok) Option(prev) else None
  }

  /** The error for rows with a null primary key. */
  def nullKey(keys: Seq[String], operation: Option[String]): DataValidationException =
    new DataValidationException(ErrorClass.NullPrimaryKey, operation.map(op => s"$op would write a row")
      .getOrElse("The data has rows") + s" with a null primary key (${keys.mkString(", ")}). Primary key values must " +
      "not be null; filter or fill them. Nothing was committed.")

  /** The error for `rows` rows sharing one key; `values` are external (Row) values of the key columns. */
  def duplicateKey(keys: Seq[String], rows: Long, values: Seq[Any], operation: Option[String]): DataValidationException =
    new DataValidationException(ErrorClass.DuplicateKey, operation.map(op => s"$op would give $rows rows the key (")
      .getOrElse(s"The data has $rows rows with key (") + keys.zip(values).map { case (k, v) => s"$k=$v" }.mkString(", ") +
      "). Each key may appear once per write; deduplicate first. Nothing was committed.")
}
