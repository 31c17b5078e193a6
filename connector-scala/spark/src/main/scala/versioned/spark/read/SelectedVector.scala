package versioned.spark.read

import org.apache.spark.sql.types.Decimal
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarArray, ColumnarMap}
import org.apache.spark.unsafe.types.UTF8String

/**
 * A view of the rows `sel(0 until n)` of another vector, without copying: how the columnar merge
 * drops SNAP rows that a DIFF supersedes. Struct children are viewed through the same selection.
 */
private[read] final class SelectedVector(base: ColumnVector, sel: Array[Int], n: Int) extends ColumnVector(base.dataType()) {
  override def close(): Unit = ()
  override def hasNull: Boolean = base.hasNull
  override def numNulls(): Int = if (!base.hasNull) 0 else (0 until n).count(i => base.isNullAt(sel(i)))
  override def isNullAt(i: Int): Boolean = base.isNullAt(sel(i))
  override def getBoolean(i: Int): Boolean = base.getBoolean(sel(i))
  override def getByte(i: Int): Byte = base.getByte(sel(i))
  override def getShort(i: Int): Short = base.getShort(sel(i))
  override def getInt(i: Int): Int = base.getInt(sel(i))
  override def getLong(i: Int): Long = base.getLong(sel(i))
  override def getFloat(i: Int): Float = base.getFloat(sel(i))
  override def getDouble(i: Int): Double = base.getDouble(sel(i))
  override def getArray(i: Int): ColumnarArray = base.getArray(sel(i))
  override def getMap(i: Int): ColumnarMap = base.getMap(sel(i))
  override def getDecimal(i: Int, precision: Int, scale: Int): Decimal = base.getDecimal(sel(i), precision, scale)
  override def getUTF8String(i: Int): UTF8String = base.getUTF8String(sel(i))
  override def getBinary(i: Int): Array[Byte] = base.getBinary(sel(i))
  override def getChild(ordinal: Int): ColumnVector = new SelectedVector(base.getChild(ordinal), sel, n)
}
