package versioned.spark.read

import versioned.spark.format.SparkKeys
import versioned.core.format.KeyOrder
import org.apache.spark.sql.catalyst.InternalRow

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

/**
 * Columnar merge-on-read of one fragment. SNAP batches come straight from Parquet; rows whose key a
 * DIFF changes or deletes are dropped in place ([[BatchCompaction]], else a [[SelectedVector]] view;
 * a batch no DIFF touches passes through as is); then the surviving DIFF rows follow as the overlay's
 * ready batches ([[Overlay.liveBatches]]).
 *
 * @param overlay the fragment's DIFFs conflated
 * @param outputOrdinals for each output column, its ordinal in the SNAP batches and the overlay rows
 */
private[read] final class OverlayBatchReader(
    snap: Iterator[ColumnarBatch],
    overlay: Overlay,
    keyTypes: Seq[DataType],
    outputOrdinals: Array[Int],
    outputTypes: Array[DataType],
    batchRows: Int,
    onClose: () => Unit) extends PartitionReader[ColumnarBatch] {

  private val matcher = KeyMatcher(overlay, keyTypes)
  private var sel = new Array[Int](0)
  private lazy val diffBatches = overlay.liveBatches(outputOrdinals, outputTypes, batchRows)
  private var emitted = 0
  private var current: ColumnarBatch = _

  override def next(): Boolean = {
    while (snap.hasNext) {
      val b = snap.next()
      val n = b.numRows()
      if (sel.length < n) sel = new Array[Int](n)
      val kept = matcher.select(b, sel)
      if (kept == n) { current = new ColumnarBatch(outputOrdinals.map(b.column), n); return true }
      if (kept > 0) {
        val columns = outputOrdinals.map(b.column)
        current =
          if (BatchCompaction.compact(columns, sel, kept)) new ColumnarBatch(columns, kept)
          else new ColumnarBatch(columns.map(c => new SelectedVector(c, sel, kept): ColumnVector), kept)
        return true
      }
    }
    if (emitted >= diffBatches.length) return false
    current = diffBatches(emitted).batch()
    emitted += 1
    true
  }

  override def get(): ColumnarBatch = current
  override def close(): Unit = onClose()
}

private[read] object OverlayBatchReader {
  /** Rows per batch of DIFF rows (Spark's default Parquet batch size). */
  val BatchRows = 4096
}

/**
 * Finds the SNAP rows of a batch that no DIFF key matches. Both sides are sorted by key, so one
 * forward walk over the overlay serves the whole fragment.
 */
private[read] sealed abstract class KeyMatcher {
  /** Writes the indices of rows to keep into `sel`; returns how many. */
  def select(b: ColumnarBatch, sel: Array[Int]): Int
}

private[read] object KeyMatcher {
  def apply(overlay: Overlay, keyTypes: Seq[DataType]): KeyMatcher =
    if (overlay.rows.isEmpty) KeepAll
    else overlay.longKeys match {
      case Some(keys) => new IntegralKey(keys, keyTypes.head)
      case None => new AnyKey(overlay.rows, SparkKeys.order(keyTypes))
    }

  private object KeepAll extends KeyMatcher {
    override def select(b: ColumnarBatch, sel: Array[Int]): Int = {
      var i = 0; while (i < b.numRows()) { sel(i) = i; i += 1 }; b.numRows()
    }
  }

  /** A single integral key: the overlay keys as a sorted `long` array. */
  private final class IntegralKey(keys: Array[Long], t: DataType) extends KeyMatcher {
    private var j = 0
    private val wide = t == LongType || t == TimestampType || t == TimestampNTZType
    override def select(b: ColumnarBatch, sel: Array[Int]): Int = {
      val v = b.column(0)
      val n = b.numRows()
      var kept = 0
      var i = 0
      while (i < n) {
        val hit = !v.isNullAt(i) && {
          val k = if (wide) v.getLong(i) else if (t == ShortType) v.getShort(i).toLong
            else if (t == ByteType) v.getByte(i).toLong else v.getInt(i).toLong
          while (j < keys.length && keys(j) < k) j += 1
          j < keys.length && keys(j) == k
        }
        if (!hit) { sel(kept) = i; kept += 1 }
        i += 1
      }
      kept
    }
  }

  /** Any key: rows compared through [[versioned.core.format.KeyOrder]]. */
  private final class AnyKey(overlay: PackedRows, keys: KeyOrder[InternalRow]) extends KeyMatcher {
    private var j = 0
    private val view = new UnsafeRow(overlay.numFields)
    if (!overlay.isEmpty) overlay.pointTo(view, 0)
    private def advance(): Unit = { j += 1; if (j < overlay.length) overlay.pointTo(view, j) }
    override def select(b: ColumnarBatch, sel: Array[Int]): Int = {
      val n = b.numRows()
      var kept = 0
      var i = 0
      while (i < n) {
        val row = b.getRow(i)
        while (j < overlay.length && keys.compare(view, row) < 0) advance()
        if (!(j < overlay.length && keys.compare(view, row) == 0)) { sel(kept) = i; kept += 1 }
        i += 1
      }
      kept
    }
  }
}
