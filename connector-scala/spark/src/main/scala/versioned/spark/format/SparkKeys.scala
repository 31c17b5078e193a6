package versioned.spark.format

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._
import versioned.core.format.{FragmentRouter, KeyAccess, KeyOrder, KeyType}
import versioned.core.Fragment

/**
 * The Spark codec of the format kernel (`versioned.core.format`): Spark's types as [[KeyType]]s and
 * `InternalRow` key access, implemented once. Everything in the connector that orders, conflates,
 * routes or validates keys goes through the kernel with these.
 */
private[versioned] object SparkKeys {
  /** The kernel's type of a Spark type, if it can be a key. */
  def keyType(dt: DataType): Option[KeyType] = dt match {
    case ByteType => Some(KeyType.Int8)
    case ShortType => Some(KeyType.Int16)
    case IntegerType => Some(KeyType.Int32)
    case DateType => Some(KeyType.Date)
    case LongType => Some(KeyType.Int64)
    case TimestampType | TimestampNTZType => Some(KeyType.Timestamp)
    case FloatType => Some(KeyType.Float32)
    case DoubleType => Some(KeyType.Float64)
    case StringType => Some(KeyType.Utf8)
    case BooleanType => Some(KeyType.Bool)
    case d: DecimalType => Some(KeyType.Decimal(d.precision, d.scale))
    case _ => None
  }

  /** The kernel's type of a key column's Spark type (the layout has checked it can be a key). */
  def keyTypeOf(dt: DataType): KeyType = keyType(dt).getOrElse(
    throw new IllegalArgumentException(s"${dt.simpleString} cannot be a key"))

  /** The key order over the leading columns (ordinals 0 until n) of internal rows of key types `types`. */
  def order(types: Seq[DataType]): KeyOrder[InternalRow] = new KeyOrder(types.map(keyTypeOf).toIndexedSeq, Access)

  /** Two canonical values of type `dt` in the key order. */
  def compareCanonical(dt: DataType, a: Any, b: Any): Int = KeyOrder.compareCanonical(keyTypeOf(dt), a, b)

  /** A key row's (key columns only, internal values) external values, as errors name them. */
  def external(types: Seq[DataType])(key: InternalRow): Seq[Any] =
    types.indices.map(i => org.apache.spark.sql.catalyst.CatalystTypeConverters.convertToScala(key.get(i, types(i)), types(i)))

  /** The driver-side router over `frags`: key rows (key columns only, internal values) to fragment indexes. */
  def router(frags: Seq[Fragment], types: Seq[DataType]): FragmentRouter[InternalRow] =
    FragmentRouter.of(frags.map(_.lower), order(types))(Values.internalRow(_, types))

  /** Key columns of `InternalRow`s. Strings compare as `UTF8String.binaryCompare` (unsigned UTF-8 bytes). */
  object Access extends KeyAccess[InternalRow] {
    override def isNullAt(r: InternalRow, i: Int): Boolean = r.isNullAt(i)
    override def getByte(r: InternalRow, i: Int): Byte = r.getByte(i)
    override def getShort(r: InternalRow, i: Int): Short = r.getShort(i)
    override def getInt(r: InternalRow, i: Int): Int = r.getInt(i)
    override def getLong(r: InternalRow, i: Int): Long = r.getLong(i)
    override def getFloat(r: InternalRow, i: Int): Float = r.getFloat(i)
    override def getDouble(r: InternalRow, i: Int): Double = r.getDouble(i)
    override def getBoolean(r: InternalRow, i: Int): Boolean = r.getBoolean(i)
    override def compareUtf8(a: InternalRow, b: InternalRow, i: Int): Int = a.getUTF8String(i).binaryCompare(b.getUTF8String(i))
    override def compareDecimal(a: InternalRow, b: InternalRow, i: Int, t: KeyType.Decimal): Int =
      a.getDecimal(i, t.precision, t.scale).compare(b.getDecimal(i, t.precision, t.scale))
  }
}
