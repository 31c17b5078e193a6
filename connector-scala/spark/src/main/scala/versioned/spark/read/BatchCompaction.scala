package versioned.spark.read

import org.apache.spark.sql.execution.vectorized.WritableColumnVector
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.ColumnVector

/**
 * Keeps only the rows `sel(0 until n)` of Parquet reader vectors by moving them down in place, so
 * masked SNAP batches stay plain on-heap vectors (the reader resets them before its next batch).
 * Dictionary-encoded vectors move their dictionary ids. Returns false, touching nothing, when a
 * vector is of another kind; the caller then uses a [[SelectedVector]] view.
 */
private[read] object BatchCompaction {

  def compact(vectors: Array[ColumnVector], sel: Array[Int], n: Int): Boolean =
    vectors.forall(supported) && { vectors.foreach(v => compact(v.asInstanceOf[WritableColumnVector], sel, n)); true }

  private def supported(v: ColumnVector): Boolean = v match {
    case w: WritableColumnVector => w.isAllNull || w.hasDictionary || RowColumns.supports(w.dataType())
    case _ => false
  }

  private def compact(v: WritableColumnVector, sel: Array[Int], n: Int): Unit = if (!v.isAllNull) {
    val values = if (v.hasDictionary) v.getDictionaryIds else v
    val kind = if (v.hasDictionary) 'i' else kindOf(v.dataType())
    var k = 0
    while (k < n) {
      val s = sel(k)
      if (s != k) {
        if (v.isNullAt(s)) v.putNull(k)
        else {
          v.putNotNull(k)
          (kind: @annotation.switch) match {
            case 'l' => values.putLong(k, values.getLong(s))
            case 'i' => values.putInt(k, values.getInt(s))
            case 'd' => values.putDouble(k, values.getDouble(s))
            case 'a' => values.putArray(k, values.getArrayOffset(s), values.getArrayLength(s))
            case 'f' => values.putFloat(k, values.getFloat(s))
            case 's' => values.putShort(k, values.getShort(s))
            case 'b' => values.putByte(k, values.getByte(s))
            case 'z' => values.putBoolean(k, values.getBoolean(s))
          }
        }
      }
      k += 1
    }
  }

  /** How values of a type are stored in a writable vector. */
  private def kindOf(dt: DataType): Char = dt match {
    case LongType | TimestampType | TimestampNTZType => 'l'
    case IntegerType | DateType => 'i'
    case DoubleType => 'd'
    case _: StringType | BinaryType => 'a'
    case FloatType => 'f'
    case ShortType => 's'
    case ByteType => 'b'
    case BooleanType => 'z'
    case d: DecimalType if d.precision <= Decimal.MAX_INT_DIGITS => 'i'
    case d: DecimalType if d.precision <= Decimal.MAX_LONG_DIGITS => 'l'
    case _: DecimalType => 'a'
    case other => throw new IllegalStateException(s"unsupported type $other in a columnar merge")
  }
}
