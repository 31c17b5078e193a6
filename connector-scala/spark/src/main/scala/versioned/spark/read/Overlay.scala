package versioned.spark.read

import java.util.concurrent.ConcurrentHashMap
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.types.DataType
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}
import versioned.core.ChangeKind

/**
 * A fragment's DIFFs conflated (newest change per key, deletes kept, sorted by key, in the DIFF read
 * layout: key columns first, change kind at `changeOrdinal`), with what the columnar merge derives
 * from them, built once per overlay, so once per executor while it stays in the [[DiffCache]]: a
 * single integral key as a sorted `long` array, and the live rows as column batches per output layout.
 * The rows themselves are kept packed ([[PackedRows]]), not as an object per row.
 *
 * The batches are shared by every scan that uses the overlay: readers emit them as they are, and
 * Spark's consumers of scan batches only read them.
 *
 * Built by [[Overlay.apply]], which keeps no reference to the conflated rows it is given.
 *
 * @param rows the conflated rows, packed
 * @param longKeys the keys of `rows` as `long`s, for a single integral key
 */
private[read] final class Overlay private (val rows: PackedRows, val longKeys: Option[Array[Long]], changeOrdinal: Int) {
  private val batches = new ConcurrentHashMap[List[Int], IndexedSeq[Overlay.Batch]]()

  /** The live rows (upserts) as batches of at most `batchRows` rows holding the columns `ordinals`. */
  def liveBatches(ordinals: Array[Int], types: Array[DataType], batchRows: Int): IndexedSeq[Overlay.Batch] = {
    def build = {
      val view = new UnsafeRow(rows.numFields)
      val live = Array.range(0, rows.length).filter(i => rows.pointTo(view, i).getByte(changeOrdinal) != ChangeKind.Delete)
      (0 until live.length by batchRows).map { from =>
        val n = math.min(batchRows, live.length - from)
        Overlay.Batch(new RowColumns(ordinals, types, n).fill(i => rows.pointTo(view, live(from + i)), n))
      }
    }
    val key = ordinals.toList
    Option(batches.get(key)).getOrElse {
      if (batches.size < Overlay.MaxLayouts) batches.computeIfAbsent(key, _ => build) else build
    }
  }

  /** Estimated heap bytes: the packed rows and their keys, and about as much again for column batches (one layout). */
  val estimatedBytes: Long = 2 * rows.heapBytes + longKeys.fold(0L)(8L * _.length)
}

private[read] object Overlay {
  /** The overlay of `conflated` (unsafe rows of `changeOrdinal + 1` fields, keys first); the array is not kept. */
  def apply(conflated: Array[InternalRow], keyTypes: Seq[DataType], changeOrdinal: Int): Overlay = {
    val order = versioned.spark.format.SparkKeys.order(keyTypes)
    val longKeys = Option.when(order.integralKeyed) {
      val a = new Array[Long](conflated.length)
      var i = 0
      while (i < a.length) { a(i) = order.integralKey(conflated(i)); i += 1 }
      a
    }
    new Overlay(PackedRows(conflated, changeOrdinal + 1), longKeys, changeOrdinal)
  }

  /** Output layouts whose batches an overlay keeps (others are rebuilt per reader). */
  val MaxLayouts = 4

  /** Filled vectors of a batch of live rows; every reader wraps them in its own [[ColumnarBatch]]. */
  final case class Batch(vectors: Array[ColumnVector], rows: Int) {
    def batch(): ColumnarBatch = new ColumnarBatch(vectors, rows)
  }
  object Batch {
    def apply(b: ColumnarBatch): Batch = Batch((0 until b.numCols()).map(b.column).toArray, b.numRows())
  }
}
