package versioned.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, UnsafeProjection}
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}

/** Rows of an inner reader factory, projected by `exprs` (bound to the inner rows). */
private[versioned] final class ProjectingReaderFactory(inner: PartitionReaderFactory, exprs: Seq[Expression])
  extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] = {
    val reader = inner.createReader(partition)
    val project = UnsafeProjection.create(exprs)
    new PartitionReader[InternalRow] {
      override def next(): Boolean = reader.next()
      override def get(): InternalRow = project(reader.get())
      override def close(): Unit = reader.close()
    }
  }
}
