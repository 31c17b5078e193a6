package versioned.core.format

import java.nio.charset.StandardCharsets.UTF_8
import KeyType._

/**
 * The key order: the one order of the format. Objects are sorted in it, fragments partition it, DIFFs
 * conflate by it, lookups and pruning search it, and validation finds duplicates with it. Per column,
 * ascending, nulls first:
 *  - integers, dates and timestamps by value;
 *  - floating point as SQL does: -0.0 equals 0.0, NaN equals NaN and is above every other value;
 *  - strings by their UTF-8 bytes, unsigned, lexicographically;
 *  - decimals by value; `false` before `true`.
 * Multi-column keys compare column by column. It is also the order Spark SQL sorts these types in, so a
 * Spark sort produces it.
 *
 * [[compare]] orders rows of any engine through its [[KeyAccess]]; the companion orders canonical values
 * ([[KeyType]]: bounds, statistics, lookups).
 */
final class KeyOrder[R](types: IndexedSeq[KeyType], access: KeyAccess[R]) extends Serializable {
  private val tags = types.map(_.tag).toArray
  private val decimals = types.map { case d: Decimal => d; case _ => null }.toArray

  /** Compares the key columns (ordinals 0 until n) of two rows. */
  def compare(a: R, b: R): Int = {
    var i = 0
    while (i < tags.length) {
      val an = access.isNullAt(a, i); val bn = access.isNullAt(b, i)
      val c =
        if (an || bn) { if (an && bn) 0 else if (an) -1 else 1 }
        else (tags(i): @annotation.switch) match {
          case Int8Tag => java.lang.Byte.compare(access.getByte(a, i), access.getByte(b, i))
          case Int16Tag => java.lang.Short.compare(access.getShort(a, i), access.getShort(b, i))
          case Int32Tag | DateTag => Integer.compare(access.getInt(a, i), access.getInt(b, i))
          case Int64Tag | TimestampTag => java.lang.Long.compare(access.getLong(a, i), access.getLong(b, i))
          case Float32Tag => KeyOrder.compareFloats(access.getFloat(a, i), access.getFloat(b, i))
          case Float64Tag => KeyOrder.compareDoubles(access.getDouble(a, i), access.getDouble(b, i))
          case Utf8Tag => access.compareUtf8(a, b, i)
          case BoolTag => java.lang.Boolean.compare(access.getBoolean(a, i), access.getBoolean(b, i))
          case _ => access.compareDecimal(a, b, i, decimals(i))
        }
      if (c != 0) return c
      i += 1
    }
    0
  }

  /** Whether both rows have the same key. */
  def same(a: R, b: R): Boolean = compare(a, b) == 0

  /** Whether any key column of the row is null (a primary key never is). */
  def hasNull(r: R): Boolean = {
    var i = 0
    while (i < tags.length) { if (access.isNullAt(r, i)) return true; i += 1 }
    false
  }

  /** The single integral key of a row as a `long` (only when [[KeyType.singleIntegral]]). */
  def integralKey(r: R): Long = (tags(0): @annotation.switch) match {
    case Int8Tag => access.getByte(r, 0).toLong
    case Int16Tag => access.getShort(r, 0).toLong
    case Int32Tag | DateTag => access.getInt(r, 0).toLong
    case _ => access.getLong(r, 0)
  }

  def size: Int = tags.length

  /** Whether the key is one integral column ([[integralKey]] then orders rows). */
  val integralKeyed: Boolean = tags.length == 1 && types.head.integral
}

object KeyOrder {
  /** Doubles in the key order: -0.0 = 0.0; NaN = NaN, above everything else. */
  def compareDoubles(a: Double, b: Double): Int =
    if (a == b) 0 // also -0.0 == 0.0
    else if (java.lang.Double.isNaN(a)) { if (java.lang.Double.isNaN(b)) 0 else 1 }
    else if (java.lang.Double.isNaN(b)) -1
    else if (a < b) -1 else 1

  /** Floats in the key order (as [[compareDoubles]]). */
  def compareFloats(a: Float, b: Float): Int =
    if (a == b) 0
    else if (java.lang.Float.isNaN(a)) { if (java.lang.Float.isNaN(b)) 0 else 1 }
    else if (java.lang.Float.isNaN(b)) -1
    else if (a < b) -1 else 1

  /** UTF-8 byte strings in the key order: unsigned bytes, lexicographically, a prefix first. */
  def compareUtf8(a: Array[Byte], b: Array[Byte]): Int = java.util.Arrays.compareUnsigned(a, b)

  /** Two canonical values ([[KeyType]]) of type `t` in the key order, nulls first. */
  def compareCanonical(t: KeyType, a: Any, b: Any): Int =
    if (a == null || b == null) { if (a == null && b == null) 0 else if (a == null) -1 else 1 }
    else (t.tag: @annotation.switch) match {
      case Float32Tag | Float64Tag => compareDoubles(a.asInstanceOf[Number].doubleValue(), b.asInstanceOf[Number].doubleValue())
      case Utf8Tag => compareUtf8(a.toString.getBytes(UTF_8), b.toString.getBytes(UTF_8))
      case BoolTag => java.lang.Boolean.compare(a.asInstanceOf[Boolean], b.asInstanceOf[Boolean])
      case DecimalTag => decimal(a).compare(decimal(b))
      case _ => java.lang.Long.compare(a.asInstanceOf[Number].longValue(), b.asInstanceOf[Number].longValue())
    }

  /** Two keys as canonical tuples (e.g. fragment bounds), column by column. */
  def compareCanonicalKeys(types: Seq[KeyType], a: Seq[Any], b: Seq[Any]): Int = {
    val it = types.iterator.zip(a.iterator.zip(b.iterator))
    while (it.hasNext) { val (t, (x, y)) = it.next(); val c = compareCanonical(t, x, y); if (c != 0) return c }
    0
  }

  /** Canonical values of type `t`, sorted in the key order, distinct (nulls dropped). */
  def sortedDistinct(t: KeyType, values: Iterable[Any]): IndexedSeq[Any] = {
    val sorted = values.iterator.filter(_ != null).toIndexedSeq.sortWith((a, b) => compareCanonical(t, a, b) < 0)
    if (sorted.isEmpty) sorted
    else sorted.head +: sorted.iterator.sliding(2).withPartial(false).collect { case Seq(p, x) if compareCanonical(t, p, x) != 0 => x }.toIndexedSeq
  }

  private def decimal(v: Any): BigDecimal = v match {
    case d: BigDecimal => d
    case d: java.math.BigDecimal => BigDecimal(d)
    case other => BigDecimal(other.toString)
  }
}
