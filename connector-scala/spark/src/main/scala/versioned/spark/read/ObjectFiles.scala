package versioned.spark.read

import org.apache.spark.paths.SparkPath
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection}
import org.apache.spark.sql.execution.datasources.PartitionedFile
import org.apache.spark.sql.types.StructType

/** Opening whole objects with a Parquet file reader prepared on the driver (scans and DIFF consolidation). */
private[versioned] object ObjectFiles {
  type Reader = PartitionedFile => Iterator[InternalRow]

  def open(read: Reader, f: ObjectFile): Iterator[InternalRow] =
    read(PartitionedFile(InternalRow.empty, SparkPath.fromUrlString(f.uri), 0L, f.size, Array.empty[String], 0L, f.size,
      Map.empty))

  /** Identity projection of rows of `schema` into unsafe rows (to copy rows a reader reuses). */
  def identity(schema: StructType): UnsafeProjection =
    UnsafeProjection.create(schema.fields.toSeq.zipWithIndex.map { case (f, o) => BoundReference(o, f.dataType, f.nullable) })

  /** Every row of an object, copied through `copy` (an [[identity]] of the rows `read` produces). */
  def load(read: Reader, f: ObjectFile, copy: UnsafeProjection): Array[InternalRow] = {
    val it = open(read, f)
    try it.map(r => copy(r).copy(): InternalRow).toArray finally close(Seq(it))
  }

  def close(its: Seq[Iterator[_]]): Unit = its.foreach { case c: AutoCloseable => c.close(); case _ => () }
}
