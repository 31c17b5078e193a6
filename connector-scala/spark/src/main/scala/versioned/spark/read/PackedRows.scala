package versioned.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.unsafe.Platform

/**
 * Unsafe rows packed end to end into a few large byte arrays, for rows an executor keeps (an [[Overlay]] in the
 * [[DiffCache]]). Held as separate [[UnsafeRow]]s, each row costs two objects (the row and its byte array, about
 * 64 bytes of headers and fields besides its data); a cached overlay of a million rows is then two million
 * long-lived objects, which every young collection that promotes them copies one by one and every marking
 * cycle walks. Packed, they are a handful of arrays, copied (if ever) as blocks.
 *
 * Row `i` is read as a view: [[apply]] returns a new row pointing into the arrays, [[pointTo]] re-points one the
 * caller reuses. Views are valid as long as this value; it is immutable.
 *
 * @param chunks the rows' bytes; no row spans two chunks
 * @param starts row `i` starts at byte `starts(i) & 0xffffffff` of chunk `starts(i) >>> 32`
 * @param sizes row `i`'s size in bytes
 */
private[read] final class PackedRows private (
    val numFields: Int, chunks: Array[Array[Byte]], starts: Array[Long], sizes: Array[Int]) {

  def length: Int = sizes.length
  def isEmpty: Boolean = sizes.isEmpty

  /** Re-points `row` (of [[numFields]] fields) at row `i`; returns it. */
  def pointTo(row: UnsafeRow, i: Int): UnsafeRow = {
    val s = starts(i)
    row.pointTo(chunks((s >>> 32).toInt), Platform.BYTE_ARRAY_OFFSET + (s & 0xffffffffL).toInt, sizes(i))
    row
  }

  /** A new view of row `i`. */
  def apply(i: Int): UnsafeRow = pointTo(new UnsafeRow(numFields), i)

  /** A view of every row (for code that takes an array of rows, such as [[Conflation]]). */
  def toArray: Array[InternalRow] = Array.tabulate[InternalRow](length)(apply)

  /** Heap bytes held: the chunks and the two index arrays. */
  def heapBytes: Long = chunks.iterator.map(_.length.toLong + 16).sum + 12L * length + 32
}

private[read] object PackedRows {
  /** Bytes per chunk: large enough that a chunk is a single allocation outside the young generation's copying. */
  val ChunkBytes: Int = 8 << 20

  /** `rows` (unsafe rows of `numFields` fields) packed in order. */
  def apply(rows: Array[InternalRow], numFields: Int): PackedRows = {
    val starts = new Array[Long](rows.length)
    val sizes = new Array[Int](rows.length)
    val chunks = Array.newBuilder[Array[Byte]]
    var c = 0
    var i = 0
    while (i < rows.length) {
      // the next chunk holds rows i until j, at least one row (a row larger than ChunkBytes gets its own)
      var bytes = 0L
      var j = i
      var next = 0L
      while (j < rows.length && { next = size(rows(j)); j == i || bytes + next <= ChunkBytes }) { bytes += next; j += 1 }
      val chunk = new Array[Byte](bytes.toInt)
      var offset = 0
      while (i < j) {
        val r = rows(i).asInstanceOf[UnsafeRow]
        r.writeToMemory(chunk, Platform.BYTE_ARRAY_OFFSET + offset)
        starts(i) = (c.toLong << 32) | offset
        sizes(i) = r.getSizeInBytes
        offset += r.getSizeInBytes
        i += 1
      }
      chunks += chunk
      c += 1
    }
    new PackedRows(numFields, chunks.result(), starts, sizes)
  }

  private def size(r: InternalRow): Long = r.asInstanceOf[UnsafeRow].getSizeInBytes.toLong
}
