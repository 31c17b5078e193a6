package versioned.core.format

/**
 * How the format reads key columns out of an engine's row type `R`: the one codec an engine implements
 * (the Spark module does it once, over `InternalRow`). Ordinal `i` is a key column of the type [[KeyType]]
 * says; the getters are called only for non-null values of matching types.
 *
 * Strings are compared by the engine, as it holds them, but must order by unsigned UTF-8 bytes (the
 * order of [[KeyOrder.compareUtf8]]); decimals by numeric value.
 */
trait KeyAccess[R] extends Serializable {
  def isNullAt(r: R, i: Int): Boolean
  def getByte(r: R, i: Int): Byte
  def getShort(r: R, i: Int): Short
  def getInt(r: R, i: Int): Int
  def getLong(r: R, i: Int): Long
  def getFloat(r: R, i: Int): Float
  def getDouble(r: R, i: Int): Double
  def getBoolean(r: R, i: Int): Boolean
  def compareUtf8(a: R, b: R, i: Int): Int
  def compareDecimal(a: R, b: R, i: Int, t: KeyType.Decimal): Int
}
