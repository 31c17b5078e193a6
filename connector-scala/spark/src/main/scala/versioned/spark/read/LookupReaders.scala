package versioned.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

/**
 * The exact end of a [[KeyLookup]] on executors: Parquet skips only what its statistics exclude (whole
 * row groups and pages), so a fragment read for a few keys still decodes many rows of other keys. When
 * the first key column is integral and among the output columns, the scan's input partitions carry the
 * looked-up values (sorted `long`s) and these readers drop every other row before Spark sees it: a MERGE
 * then joins the rows of its keys, not the fragments holding them.
 */
private[versioned] object LookupReaders {
  /** Most values carried to executors; a larger lookup only prunes. */
  val MaxValues = 1000000

  /**
   * Whether a scan's readers keep exactly the rows of `lookup`'s keys (given that the scan outputs the key
   * column): an integral key, at most [[MaxValues]] values, and not a scan restricted to some fragments (the
   * rewrites, which read those fragments whole). The scan and its builder ask this one rule.
   */
  def appliesExactly(lookup: KeyLookup, fragmentScan: Boolean): Boolean =
    !fragmentScan && supports(lookup.field.dataType) && lookup.values.size <= MaxValues

  def supports(dt: DataType): Boolean = dt match {
    case ByteType | ShortType | IntegerType | LongType | DateType | TimestampType | TimestampNTZType => true
    case _ => false
  }

  /** The canonical `long` of a non-null integral value at `i`. */
  def key(dt: DataType): (SpecializedGetters, Int) => Long = dt match {
    case ByteType => (g, i) => g.getByte(i).toLong
    case ShortType => (g, i) => g.getShort(i).toLong
    case IntegerType | DateType => (g, i) => g.getInt(i).toLong
    case _ => (g, i) => g.getLong(i)
  }

  private def vectorKey(dt: DataType): (ColumnVector, Int) => Long = dt match {
    case ByteType => (v, i) => v.getByte(i).toLong
    case ShortType => (v, i) => v.getShort(i).toLong
    case IntegerType | DateType => (v, i) => v.getInt(i).toLong
    case _ => (v, i) => v.getLong(i)
  }

  private def holds(keys: Array[Long], k: Long): Boolean = java.util.Arrays.binarySearch(keys, k) >= 0

  /**
   * The rows of `rows` whose key (column `ordinal`, of type `dt`) is one of `keys` (sorted). A row is valid until
   * the next call on the iterator, as the reader's own rows are.
   */
  def restrict(rows: Iterator[InternalRow], ordinal: Int, dt: DataType, keys: Array[Long]): Iterator[InternalRow] = {
    val keyOf = key(dt)
    rows.filter(r => !r.isNullAt(ordinal) && holds(keys, keyOf(r, ordinal)))
  }

  /**
   * Batches restricted to the rows of `keys`, as views ([[SelectedVector]]: batches may be shared, e.g.
   * a cached overlay's); a batch without such rows is skipped.
   */
  final class Batches(inner: PartitionReader[ColumnarBatch], ordinal: Int, dt: DataType, keys: Array[Long])
    extends PartitionReader[ColumnarBatch] {
    private val keyOf = vectorKey(dt)
    private var current: ColumnarBatch = _
    override def next(): Boolean = {
      while (inner.next()) {
        val b = inner.get()
        val n = b.numRows()
        val v = b.column(ordinal)
        val sel = new Array[Int](n)
        var kept = 0
        var i = 0
        while (i < n) {
          if (!v.isNullAt(i) && holds(keys, keyOf(v, i))) { sel(kept) = i; kept += 1 }
          i += 1
        }
        if (kept == n) { current = b; return true }
        if (kept > 0) {
          current = new ColumnarBatch((0 until b.numCols()).map(c => new SelectedVector(b.column(c), sel, kept): ColumnVector).toArray, kept)
          return true
        }
      }
      false
    }
    override def get(): ColumnarBatch = current
    override def close(): Unit = inner.close()
  }
}
