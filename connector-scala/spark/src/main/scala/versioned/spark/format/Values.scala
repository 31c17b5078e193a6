package versioned.spark.format

import java.time.{Instant, LocalDate, LocalDateTime, ZoneOffset}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.util.DateTimeUtils
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/**
 * Encoding of single values in the metastore (fragment bounds, min/max statistics) and their conversion
 * from filter literals (compared in the key order: `versioned.core.format.KeyOrder.compareCanonical`). Canonical forms: Long for integral, date (days) and timestamp
 * (micros) values; Double for floating point; String for strings; BigDecimal for decimals; Boolean.
 */
private[versioned] object Values {
  /** Whether values of `dt` have a canonical form, i.e. can be key values ([[SparkKeys.keyType]]). */
  def supported(dt: DataType): Boolean = SparkKeys.keyType(dt).isDefined

  /** JSON-ready canonical value of field `i` of an internal row. */
  def fromInternal(row: InternalRow, i: Int, dt: DataType): Any =
    if (row.isNullAt(i)) null
    else dt match {
      case ByteType => row.getByte(i).toLong
      case ShortType => row.getShort(i).toLong
      case IntegerType | DateType => row.getInt(i).toLong
      case LongType | TimestampType | TimestampNTZType => row.getLong(i)
      case FloatType => row.getFloat(i).toDouble
      case DoubleType => row.getDouble(i)
      case StringType => row.getUTF8String(i).toString
      case BooleanType => row.getBoolean(i)
      case d: DecimalType => row.getDecimal(i, d.precision, d.scale).toJavaBigDecimal.toPlainString
      case other => throw new IllegalArgumentException(s"No canonical value for $other")
    }

  /** The canonical values of the fields of `row`, of types `types` (e.g. a key row's, for a fragment bound). */
  def canonical(row: InternalRow, types: Seq[DataType]): Seq[Any] = types.indices.map(i => fromInternal(row, i, types(i)))

  /** Canonical values of types `types` (e.g. a fragment bound) as an internal row ([[toInternal]]). */
  def internalRow(values: Seq[Any], types: Seq[DataType]): InternalRow =
    new GenericInternalRow(values.zip(types).map { case (v, dt) => toInternal(v, dt) }.toArray)

  /** Canonical value of a JSON-decoded metastore value of type `dt`. */
  def fromJson(v: Any, dt: DataType): Any = if (v == null) null else dt match {
    case FloatType | DoubleType => v match { case n: Number => n.doubleValue(); case s => s.toString.toDouble }
    case StringType => v.toString
    case BooleanType => v.asInstanceOf[Boolean]
    case _: DecimalType => BigDecimal(v.toString)
    case _ => v.asInstanceOf[Number].longValue()
  }

  /**
   * java.sql.Date and Timestamp (the filters' and Rows' types unless `spark.sql.datetime.java8API.enabled`) count in
   * the hybrid Julian calendar, and Spark's conversion of a stored (proleptic Gregorian) value into one is lossy
   * before the 1582-10-15 cutover (a day in the ten-day gap becomes another): such values are not comparable here, so
   * nothing is pruned or looked up by them and Spark's own evaluation of the filter decides (they missed their rows).
   * Two days of margin for time zones; `java.time` values are exact at any date.
   */
  private val HybridExactFromDay: Long = LocalDate.of(1582, 10, 17).toEpochDay

  /** Canonical value of a data source filter literal (external Java/Scala types), if comparable. */
  def fromFilter(v: Any, dt: DataType): Option[Any] = (v, dt) match {
    case (null, _) => None
    case (n: java.lang.Number, FloatType | DoubleType) => Some(n.doubleValue())
    case (n: java.math.BigDecimal, _: DecimalType) => Some(BigDecimal(n))
    case (n: BigDecimal, _: DecimalType) => Some(n)
    case (n @ (_: java.lang.Long | _: java.lang.Integer | _: java.lang.Short | _: java.lang.Byte), ByteType | ShortType | IntegerType | LongType) =>
      Some(n.asInstanceOf[Number].longValue())
    case (s: String, StringType) => Some(s)
    case (b: java.lang.Boolean, BooleanType) => Some(b.booleanValue())
    case (d: LocalDate, DateType) => Some(d.toEpochDay)
    case (d: java.sql.Date, DateType) => Some(d.toLocalDate.toEpochDay).filter(_ >= HybridExactFromDay)
    case (t: Instant, TimestampType) => Some(t.getEpochSecond * 1000000L + t.getNano / 1000)
    case (t: java.sql.Timestamp, TimestampType) =>
      Some(DateTimeUtils.fromJavaTimestamp(t)).filter(_ >= HybridExactFromDay * 86400L * 1000000L)
    case (t: LocalDateTime, TimestampNTZType) =>
      val i = t.toInstant(ZoneOffset.UTC); Some(i.getEpochSecond * 1000000L + i.getNano / 1000)
    case _ => None
  }

  /** The internal (InternalRow) value of type `dt` for a canonical one, e.g. a fragment bound. */
  def toInternal(v: Any, dt: DataType): Any = if (v == null) null else dt match {
    case ByteType => v.asInstanceOf[Number].byteValue()
    case ShortType => v.asInstanceOf[Number].shortValue()
    case IntegerType | DateType => v.asInstanceOf[Number].intValue()
    case LongType | TimestampType | TimestampNTZType => v.asInstanceOf[Number].longValue()
    case FloatType => fromJson(v, DoubleType).asInstanceOf[Double].toFloat
    case DoubleType => fromJson(v, DoubleType)
    case StringType => UTF8String.fromString(v.toString)
    case BooleanType => v.asInstanceOf[Boolean]
    case d: DecimalType => Decimal(BigDecimal(v.toString), d.precision, d.scale)
    case other => throw new IllegalArgumentException(s"No internal value for $other")
  }

  /** An external (Row-level) value for a canonical one, for building literals. */
  def toExternal(v: Any, dt: DataType): Any = if (v == null) null else dt match {
    case ByteType => v.asInstanceOf[Number].byteValue()
    case ShortType => v.asInstanceOf[Number].shortValue()
    case IntegerType => v.asInstanceOf[Number].intValue()
    case LongType => v.asInstanceOf[Number].longValue()
    case FloatType => fromJson(v, DoubleType).asInstanceOf[Double].toFloat
    case DoubleType => fromJson(v, DoubleType)
    case DateType => LocalDate.ofEpochDay(v.asInstanceOf[Number].longValue())
    case TimestampType =>
      val m = v.asInstanceOf[Number].longValue(); Instant.ofEpochSecond(Math.floorDiv(m, 1000000L), Math.floorMod(m, 1000000L) * 1000)
    case TimestampNTZType =>
      val m = v.asInstanceOf[Number].longValue()
      LocalDateTime.ofEpochSecond(Math.floorDiv(m, 1000000L), (Math.floorMod(m, 1000000L) * 1000).toInt, ZoneOffset.UTC)
    case _: DecimalType => new java.math.BigDecimal(v.toString)
    case _ => v
  }
}
