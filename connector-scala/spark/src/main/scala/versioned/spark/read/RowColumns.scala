package versioned.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

/**
 * Writes rows into on-heap column vectors: how the columnar merge holds DIFF rows as batches
 * ([[Overlay]]). The same vector class as Spark's Parquet reader keeps the generated row conversion's
 * calls bimorphic.
 *
 * @param ordinals for each output column, its ordinal in the rows
 */
private[read] final class RowColumns(ordinals: Array[Int], types: Array[DataType], capacity: Int) {
  private val vectors = types.map(t => new OnHeapColumnVector(capacity, t))

  /**
   * The rows `row(0)` until `row(n)` (n <= capacity) as a batch; valid until the next call. Each row is read
   * before the next is asked for, so `row` may return one reused view.
   */
  def fill(row: Int => InternalRow, n: Int): ColumnarBatch = {
    var c = 0
    while (c < vectors.length) {
      val v = vectors(c); val o = ordinals(c); val t = types(c)
      v.reset()
      var i = 0
      while (i < n) {
        val r = row(i)
        if (r.isNullAt(o)) v.putNull(i)
        else {
          v.putNotNull(i)
          t match {
            case LongType | TimestampType | TimestampNTZType => v.putLong(i, r.getLong(o))
            case IntegerType | DateType => v.putInt(i, r.getInt(o))
            case DoubleType => v.putDouble(i, r.getDouble(o))
            case _: StringType => val s = r.getUTF8String(o); v.putByteArray(i, s.getBytes)
            case BinaryType => v.putByteArray(i, r.getBinary(o))
            case FloatType => v.putFloat(i, r.getFloat(o))
            case ShortType => v.putShort(i, r.getShort(o))
            case ByteType => v.putByte(i, r.getByte(o))
            case BooleanType => v.putBoolean(i, r.getBoolean(o))
            case d: DecimalType => v.putDecimal(i, r.getDecimal(o, d.precision, d.scale), d.precision)
            case other => throw new IllegalStateException(s"unsupported type $other in a columnar merge")
          }
        }
        i += 1
      }
      c += 1
    }
    new ColumnarBatch(vectors.map(v => v: ColumnVector), n)
  }
}

private[read] object RowColumns {
  /** Types [[RowColumns]] can carry. */
  def supports(dt: DataType): Boolean = dt match {
    case BooleanType | ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType | DateType |
         TimestampType | TimestampNTZType | BinaryType | _: DecimalType | _: StringType => true
    case _ => false
  }
}
