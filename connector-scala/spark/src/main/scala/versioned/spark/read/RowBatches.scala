package versioned.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.sql.types.DataType
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * The rows of a row-wise reader (of the output columns, `types`) handed out as column batches of at most `batchRows`
 * rows: a fragment merged row by row inside a columnar scan (its DIFFs too many to hold as an [[Overlay]]). A batch
 * is valid until the next call, as Spark's consumers of scan batches expect.
 */
private[read] final class RowBatches(rows: PartitionReader[InternalRow], types: Array[DataType], batchRows: Int)
  extends PartitionReader[ColumnarBatch] {
  private val columns = new RowColumns(types.indices.toArray, types, batchRows)
  private val buffer = new Array[InternalRow](batchRows)
  private var current: ColumnarBatch = _

  override def next(): Boolean = {
    var n = 0
    // the reader reuses its row: each is copied, since a batch is filled column by column
    while (n < batchRows && rows.next()) { buffer(n) = rows.get().copy(); n += 1 }
    java.util.Arrays.fill(buffer.asInstanceOf[Array[AnyRef]], n, batchRows, null)
    if (n == 0) false else { current = columns.fill(buffer(_), n); true }
  }

  override def get(): ColumnarBatch = current
  override def close(): Unit = rows.close()
}
