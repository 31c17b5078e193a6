package versioned.spark.read

import versioned.core.format.KeyOrder

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection
import org.apache.spark.sql.connector.read.PartitionReader
import versioned.core.format.ChangeRule

/**
 * Streaming conflation of sorted sources, ordered oldest first (the kernel's rule,
 * [[versioned.core.format.Conflation]]): for every key the newest source wins; a winning delete hides
 * the key unless `keepDeletes` (used to conflate DIFFs among themselves). The winner is projected
 * before any source advances, so reused row buffers are safe.
 */
private[read] final class MergingReader(
    sources: Array[Iterator[InternalRow]],
    isDiff: Array[Boolean],
    changeOrdinal: Int,
    keys: KeyOrder[InternalRow],
    project: UnsafeProjection,
    onClose: () => Unit,
    keepDeletes: Boolean = false) extends PartitionReader[InternalRow] {

  private val conflation = versioned.core.format.Conflation.streams(sources, keys)
  private var current: InternalRow = _

  override def next(): Boolean = {
    while (conflation.next()) {
      val winner = conflation.row
      if (keepDeletes || !isDiff(conflation.source) || !ChangeRule.hides(winner.getByte(changeOrdinal))) {
        current = project(winner)
        return true
      }
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
