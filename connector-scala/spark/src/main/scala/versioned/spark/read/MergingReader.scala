package versioned.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection
import org.apache.spark.sql.connector.read.PartitionReader
import versioned.core.ChangeKind

/**
 * Streaming sorted merge of sorted sources, ordered oldest first. For every key the newest source
 * wins; a winning delete hides the key unless `keepDeletes` (used to conflate DIFFs among
 * themselves). Rows are projected before any source advances, so reused row buffers are safe.
 */
private[read] final class MergingReader(
    sources: Array[Iterator[InternalRow]],
    isDiff: Array[Boolean],
    changeOrdinal: Int,
    keys: KeyComparator,
    project: UnsafeProjection,
    onClose: () => Unit,
    keepDeletes: Boolean = false) extends PartitionReader[InternalRow] {

  private val heads = new Array[InternalRow](sources.length)
  private val atMin = new Array[Boolean](sources.length)
  private var current: InternalRow = _
  private var started = false

  private def advance(i: Int): Unit = heads(i) = if (sources(i).hasNext) sources(i).next() else null

  override def next(): Boolean = {
    if (!started) { sources.indices.foreach(advance); started = true }
    while (true) {
      var min = -1
      var i = 0
      while (i < heads.length) {
        if (heads(i) != null) {
          if (min < 0) min = i
          else if (keys.compare(heads(i), heads(min)) <= 0) min = i // ties: the newer source wins
        }
        i += 1
      }
      if (min < 0) return false
      i = 0
      while (i < heads.length) { atMin(i) = heads(i) != null && (i == min || keys.compare(heads(i), heads(min)) == 0); i += 1 }
      val winner = heads(min)
      val deleted = !keepDeletes && isDiff(min) && winner.getByte(changeOrdinal) == ChangeKind.Delete
      if (!deleted) current = project(winner)
      i = 0
      while (i < heads.length) { if (atMin(i)) advance(i); i += 1 }
      if (!deleted) return true
    }
    false
  }

  override def get(): InternalRow = current
  override def close(): Unit = onClose()
}

/** A single SNAP with no DIFFs: no merge, only projection. */
private[read] final class SnapshotReader(source: Iterator[InternalRow], project: UnsafeProjection, onClose: () => Unit)
  extends PartitionReader[InternalRow] {
  private var current: InternalRow = _
  override def next(): Boolean = if (source.hasNext) { current = project(source.next()); true } else false
  override def get(): InternalRow = current
  override def close(): Unit = onClose()
}

/** Stops a partition after `n` rows (LIMIT pushdown; Spark still applies the global limit). */
private[read] final class LimitedReader(inner: PartitionReader[InternalRow], n: Int) extends PartitionReader[InternalRow] {
  private var seen = 0
  override def next(): Boolean = seen < n && inner.next() && { seen += 1; true }
  override def get(): InternalRow = inner.get()
  override def close(): Unit = inner.close()
}

/** A partition reader seen as an iterator (for nesting merges). */
private[read] final class ReaderIterator(r: PartitionReader[InternalRow]) extends Iterator[InternalRow] {
  private var ready = false
  private var more = true
  override def hasNext: Boolean = { if (!ready && more) { more = r.next(); ready = true }; more }
  override def next(): InternalRow = { hasNext; ready = false; r.get() }
}

/** Readers opened one after the other (the fragments of one input partition); each is closed when done. */
private[read] final class SequentialReader[T](readers: Seq[() => PartitionReader[T]]) extends PartitionReader[T] {
  private val pending = readers.iterator
  private var current: PartitionReader[T] = _
  override def next(): Boolean = {
    while (true) {
      if (current == null) { if (!pending.hasNext) return false; current = pending.next()() }
      if (current.next()) return true
      val done = current; current = null; done.close()
    }
    false
  }
  override def get(): T = current.get()
  override def close(): Unit = if (current != null) { val c = current; current = null; c.close() }
}
