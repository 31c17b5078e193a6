package versioned.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._

/**
 * Conflates a fragment's DIFFs held in memory (each sorted by key, oldest first): one row per key,
 * the newest change winning, deletes kept. A k-way merge; a single integral key is compared as
 * primitive `long`s, any other key through [[KeyComparator]].
 */
private[versioned] object Conflation {

  def apply(sources: Array[Array[InternalRow]], keyTypes: Seq[DataType]): Array[InternalRow] =
    if (sources.length == 1) sources.head
    else merge(sources, IntegralKeys.of(keyTypes) match {
      case Some(get) => new LongCompare(sources.map(_.map(get)))
      case None => new RowCompare(sources, new KeyComparator(keyTypes))
    })

  /** `compare(a, i, b, j)` compares row `i` of source `a` with row `j` of source `b` (no boxing). */
  private abstract class SourceCompare { def compare(a: Int, i: Int, b: Int, j: Int): Int }
  private final class LongCompare(keys: Array[Array[Long]]) extends SourceCompare {
    override def compare(a: Int, i: Int, b: Int, j: Int): Int = java.lang.Long.compare(keys(a)(i), keys(b)(j))
  }
  private final class RowCompare(rows: Array[Array[InternalRow]], keys: KeyComparator) extends SourceCompare {
    override def compare(a: Int, i: Int, b: Int, j: Int): Int = keys.compare(rows(a)(i), rows(b)(j))
  }

  private def merge(sources: Array[Array[InternalRow]], cmp: SourceCompare): Array[InternalRow] = {
    val k = sources.length
    val pos = new Array[Int](k)
    val out = new Array[InternalRow](sources.map(_.length).sum)
    var n = 0
    while (true) {
      var min = -1
      var s = 0
      while (s < k) {
        if (pos(s) < sources(s).length && (min < 0 || cmp.compare(s, pos(s), min, pos(min)) <= 0)) min = s // ties: newer wins
        s += 1
      }
      if (min < 0) return java.util.Arrays.copyOf(out, n)
      out(n) = sources(min)(pos(min)); n += 1
      s = 0
      while (s < k) { if (s != min && pos(s) < sources(s).length && cmp.compare(s, pos(s), min, pos(min)) == 0) pos(s) += 1; s += 1 }
      pos(min) += 1
    }
    out
  }
}

/** A single integral key column (ordinal 0) read as a `long`. */
private[read] object IntegralKeys {
  def of(keyTypes: Seq[DataType]): Option[InternalRow => Long] = keyTypes match {
    case Seq(LongType | TimestampType | TimestampNTZType) => Some(_.getLong(0))
    case Seq(IntegerType | DateType) => Some(_.getInt(0).toLong)
    case Seq(ShortType) => Some(_.getShort(0).toLong)
    case Seq(ByteType) => Some(_.getByte(0).toLong)
    case _ => None
  }
}
