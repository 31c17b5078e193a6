package versioned.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.SQLOrderingUtil
import org.apache.spark.sql.catalyst.expressions.InterpretedOrdering
import org.apache.spark.sql.catalyst.expressions.{BoundReference, SortOrder, Ascending}
import org.apache.spark.sql.types._
import versioned.spark.Values

/**
 * Compares the leading key columns (ordinals 0 until n) of two rows in Spark's ascending order,
 * nulls first, the same order the writer sorts objects in.
 */
private[versioned] final class KeyComparator(keyTypes: Seq[DataType]) extends Serializable {
  private val types = keyTypes.toArray
  @transient private lazy val generic = new InterpretedOrdering(
    keyTypes.zipWithIndex.map { case (dt, i) => SortOrder(BoundReference(i, dt, nullable = true), Ascending) })

  def compare(a: InternalRow, b: InternalRow): Int = {
    var i = 0
    while (i < types.length) {
      val an = a.isNullAt(i); val bn = b.isNullAt(i)
      val c =
        if (an || bn) { if (an && bn) 0 else if (an) -1 else 1 }
        else types(i) match {
          case IntegerType | DateType => Integer.compare(a.getInt(i), b.getInt(i))
          case LongType | TimestampType | TimestampNTZType => java.lang.Long.compare(a.getLong(i), b.getLong(i))
          case StringType => a.getUTF8String(i).binaryCompare(b.getUTF8String(i))
          case ShortType => java.lang.Short.compare(a.getShort(i), b.getShort(i))
          case ByteType => java.lang.Byte.compare(a.getByte(i), b.getByte(i))
          case DoubleType => SQLOrderingUtil.compareDoubles(a.getDouble(i), b.getDouble(i))
          case FloatType => SQLOrderingUtil.compareFloats(a.getFloat(i), b.getFloat(i))
          case BooleanType => java.lang.Boolean.compare(a.getBoolean(i), b.getBoolean(i))
          case d: DecimalType => a.getDecimal(i, d.precision, d.scale).compare(b.getDecimal(i, d.precision, d.scale))
          case _ => return generic.compare(a, b)
        }
      if (c != 0) return c
      i += 1
    }
    0
  }
}

private[versioned] object KeyComparator {
  private val single = new java.util.concurrent.ConcurrentHashMap[DataType, KeyComparator]()

  /**
   * Compares two canonical values of type `dt` (fragment bounds, statistics, filter literals: see
   * [[Values]]) in the same order as keys, so that pruning and the writer never disagree (e.g. -0.0 and
   * 0.0 are equal, NaN is the largest value, strings compare by UTF-8 bytes).
   */
  def compareCanonical(dt: DataType, a: Any, b: Any): Int =
    single.computeIfAbsent(dt, t => new KeyComparator(Seq(t)))
      .compare(InternalRow(Values.toInternal(a, dt)), InternalRow(Values.toInternal(b, dt)))
}
