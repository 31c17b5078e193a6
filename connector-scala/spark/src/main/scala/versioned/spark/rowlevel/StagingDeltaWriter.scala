package versioned.spark.rowlevel

import java.util.UUID
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.write.{DeltaWriter, DeltaWriterFactory, WriterCommitMessage}
import org.apache.spark.sql.types.StructType
import versioned.core.ChangeKind
import versioned.spark.write.{ParquetSink, TaskStaging}

/** Tasks keep up to `maxRows` delta rows and `maxBytes` bytes in memory (0: none), else stage a Parquet file. */
private[rowlevel] final class StagingDeltaWriterFactory(sink: ParquetSink, dir: String, idSchema: StructType,
                                                        rowSchema: StructType, rowOrdinals: Array[Int],
                                                        maxRows: Long, maxBytes: Long)
  extends DeltaWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DeltaWriter[InternalRow] =
    new StagingDeltaWriter(sink, s"$dir/part-$partitionId-$taskId-${UUID.randomUUID()}.parquet", idSchema, rowSchema,
      rowOrdinals, maxRows, maxBytes)
}

/**
 * Stages each delta row as (operation, old row id, new row): kept in memory and returned in the commit
 * message while the task's share of a small operation allows, else in one Parquet file per task
 * ([[TaskStaging]]). Nothing is interpreted here; [[DeltaChanges]] does that on the driver over all
 * staged rows at once.
 *
 * @param rowOrdinals for each staged user column, its ordinal in the rows Spark passes (-1: absent)
 */
private[rowlevel] final class StagingDeltaWriter(sink: ParquetSink, path: String, idSchema: StructType,
                                                 rowSchema: StructType, rowOrdinals: Array[Int],
                                                 maxRows: Long, maxBytes: Long)
  extends DeltaWriter[InternalRow] {
  private val staging = new TaskStaging(sink, path, maxRows, maxBytes)
  private val idTypes = idSchema.fields.map(_.dataType)
  private val rowTypes = rowSchema.fields.map(_.dataType)
  private val buffer = new GenericInternalRow(1 + idTypes.length + rowTypes.length)

  private def stage(op: Byte, id: InternalRow, row: InternalRow): Unit = {
    buffer.update(0, op)
    var i = 0
    while (i < idTypes.length) { buffer.update(1 + i, if (id == null) null else id.get(i, idTypes(i))); i += 1 }
    i = 0
    while (i < rowTypes.length) {
      val o = rowOrdinals(i)
      buffer.update(1 + idTypes.length + i, if (row == null || o < 0) null else row.get(o, rowTypes(i))); i += 1
    }
    staging.write(buffer)
  }

  override def delete(metadata: InternalRow, id: InternalRow): Unit = stage(ChangeKind.Delete, id, null)
  override def update(metadata: InternalRow, id: InternalRow, row: InternalRow): Unit = stage(ChangeKind.Update, id, row)
  override def insert(row: InternalRow): Unit = stage(ChangeKind.Insert, null, row)
  override def reinsert(metadata: InternalRow, row: InternalRow): Unit = stage(ChangeKind.Insert, null, row)

  override def commit(): WriterCommitMessage = staging.commit()
  override def abort(): Unit = staging.abort()
  override def close(): Unit = ()
}
