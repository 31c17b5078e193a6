package versioned.core.format

/**
 * The type of a key column as the format sees it, without any engine's type system: what a key value
 * is and how keys order ([[KeyOrder]]). An engine maps its own types to these once (the Spark module:
 * `versioned.spark.codec.SparkKeys`). Only these types can be keys; a key-less table keys rows by all
 * their columns, so all of its columns must be of these types.
 *
 * Canonical values (fragment bounds, statistics, lookups, JSON in the metastore): `Long` for the
 * integral types (dates as days, timestamps as microseconds), `Double` for floating point, `String` for
 * strings, `BigDecimal` for decimals, `Boolean` for booleans.
 */
sealed abstract class KeyType(val tag: Int) extends Serializable {
  /** Whether values are integers held in a `long` (the fast paths of conflation and lookups). */
  def integral: Boolean = tag <= KeyType.TimestampTag
}

object KeyType {
  private[format] final val Int8Tag = 0
  private[format] final val Int16Tag = 1
  private[format] final val Int32Tag = 2
  private[format] final val DateTag = 3
  private[format] final val Int64Tag = 4
  private[format] final val TimestampTag = 5
  private[format] final val Float32Tag = 6
  private[format] final val Float64Tag = 7
  private[format] final val Utf8Tag = 8
  private[format] final val BoolTag = 9
  private[format] final val DecimalTag = 10

  case object Int8 extends KeyType(Int8Tag)
  case object Int16 extends KeyType(Int16Tag)
  case object Int32 extends KeyType(Int32Tag)
  /** Days since 1970-01-01, held as a 32-bit integer. */
  case object Date extends KeyType(DateTag)
  case object Int64 extends KeyType(Int64Tag)
  /** Microseconds since the epoch (with or without time zone), held as a 64-bit integer. */
  case object Timestamp extends KeyType(TimestampTag)
  case object Float32 extends KeyType(Float32Tag)
  case object Float64 extends KeyType(Float64Tag)
  case object Utf8 extends KeyType(Utf8Tag)
  case object Bool extends KeyType(BoolTag)
  final case class Decimal(precision: Int, scale: Int) extends KeyType(DecimalTag)

  /** Whether lookups by value sets are exact on a first key column of this type (not floating point: -0.0, NaN). */
  def lookupable(t: KeyType): Boolean = t.tag != Float32Tag && t.tag != Float64Tag

  /** Whether the key is one integral column, compared as a primitive `long`. */
  def singleIntegral(types: Seq[KeyType]): Boolean = types.size == 1 && types.head.integral
}
