package versioned.spark.read

import org.apache.parquet.hadoop.metadata.{ColumnPath, ParquetMetadata}
import org.apache.parquet.internal.column.columnindex.{ColumnIndex, OffsetIndex}
import org.apache.parquet.internal.filter2.columnindex.ColumnIndexStore

/**
 * The decoded tails (footer, column and offset indexes) of objects driver key lookups opened, kept in this JVM for the
 * next lookups of the same objects. A lookup of scattered keys opens every fragment's SNAP for a few rows, and half
 * of an open was parquet-mr decoding the footer and page indexes of bytes it had decoded the lookup before
 * (bench/results/scale-100m-s53): objects never change, so what their tails decode to is kept.
 *
 * Every open still reads the object's tail and verifies it against the checksum recorded when the object was written
 * ([[ObjectFiles.open]]); a tail is looked up here only by the object's id and that checksum, after it verified, so
 * what is served is what those verified bytes decode to. Pages are read from the file and verified as always.
 * Bounded by the size of the tails held ([[MaxBytes]]), least recently used first out.
 */
private[read] object ParsedTails {
  /** The size of the encoded tails whose decoded forms are held (their decoded forms are of the same order). */
  val MaxBytes: Long = 64L << 20

  /** An object's verified tail: its bytes, and what identifies them (the object's id and recorded checksum). */
  final case class Verified(bytes: Array[Byte], key: String)

  /**
   * One object's decoded footer, and the page indexes of its row groups decoded so far, by row group (its starting
   * position in the object) and column. Each reader decodes what is not held yet through its own stream, in its own
   * thread ([[store]]); what is held is read only.
   */
  final class Parsed(val footer: ParquetMetadata, val weight: Long) {
    private val columns = new java.util.concurrent.ConcurrentHashMap[(Long, ColumnPath), ColumnIndex]()
    private val offsets = new java.util.concurrent.ConcurrentHashMap[(Long, ColumnPath), OffsetIndex]()

    /**
     * The page indexes of the row group starting at `start` for one reader: those held, and the others decoded by
     * `decoding` (that reader's own store, made on first use) and then held. A column without an index (or one the
     * decoding store was not asked for) is asked again each time: only indexes are held.
     */
    def store(start: Long, decoding: => ColumnIndexStore): ColumnIndexStore = new ColumnIndexStore {
      private lazy val own = decoding
      override def getColumnIndex(path: ColumnPath): ColumnIndex = memo(columns, (start, path))(own.getColumnIndex(path))
      override def getOffsetIndex(path: ColumnPath): OffsetIndex = memo(offsets, (start, path))(own.getOffsetIndex(path))
    }

    private def memo[T <: AnyRef](in: java.util.concurrent.ConcurrentHashMap[(Long, ColumnPath), T], key: (Long, ColumnPath))(
        decode: => T): T = {
      val found = in.get(key)
      if (found != null) found
      else { val d = decode; if (d != null) in.putIfAbsent(key, d); d }
    }
  }

  private val held = new java.util.LinkedHashMap[String, Parsed](64, 0.75f, true)
  private var heldBytes = 0L

  /** Footers decoded for [[of]] in this JVM (tests: a tail held is not decoded again). */
  val decoded = new java.util.concurrent.atomic.AtomicLong()

  /** The decoded tail of `tail`'s object, decoded by `decode` when not held. */
  def of(tail: Verified)(decode: => ParquetMetadata): Parsed = {
    val found = synchronized(held.get(tail.key))
    if (found != null) found
    else {
      decoded.incrementAndGet()
      val parsed = new Parsed(decode, tail.bytes.length.toLong)
      synchronized {
        if (!held.containsKey(tail.key) && parsed.weight <= MaxBytes) {
          held.put(tail.key, parsed)
          heldBytes += parsed.weight
          val it = held.values.iterator
          while (heldBytes > MaxBytes && it.hasNext) { heldBytes -= it.next().weight; it.remove() }
        }
      }
      parsed
    }
  }
}
