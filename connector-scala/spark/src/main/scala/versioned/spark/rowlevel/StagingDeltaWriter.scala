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
                                                        before: Option[(Int, StructType)], maxRows: Long, maxBytes: Long)
  extends DeltaWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DeltaWriter[InternalRow] =
    new StagingDeltaWriter(sink, s"$dir/part-$partitionId-$taskId-${UUID.randomUUID()}.parquet", idSchema, rowSchema,
      rowOrdinals, before, maxRows, maxBytes)
}

/**
 * Stages each delta row as (operation, old row id, new row, and with `before` whether the old values are
 * known and the old values): kept in memory and returned in the commit
 * message while the task's share of a small operation allows, else in one Parquet file per task
 * ([[TaskStaging]]). Nothing is interpreted here; [[DeltaChanges]] does that on the driver over all
 * staged rows at once.
 *
 * @param rowOrdinals for each staged user column, its ordinal in the rows Spark passes (-1: absent)
 * @param before the ordinal of `_vbefore` in the metadata rows Spark passes with updates and deletes, and its type
 */
private[rowlevel] final class StagingDeltaWriter(sink: ParquetSink, path: String, idSchema: StructType,
                                                 rowSchema: StructType, rowOrdinals: Array[Int],
                                                 before: Option[(Int, StructType)], maxRows: Long, maxBytes: Long)
  extends DeltaWriter[InternalRow] {
  private val staging = new TaskStaging(sink, path, maxRows, maxBytes)
  private val idTypes = idSchema.fields.map(_.dataType)
  private val rowTypes = rowSchema.fields.map(_.dataType)
  private val beforeTypes = before.map(_._2.fields.map(_.dataType)).getOrElse(Array.empty)
  private val beforeAt = 1 + idTypes.length + rowTypes.length
  private val buffer = new GenericInternalRow(beforeAt + before.fold(0)(_ => 1 + beforeTypes.length))

  private def stage(op: Byte, id: InternalRow, row: InternalRow, metadata: InternalRow = null): Unit = {
    buffer.update(0, op)
    var i = 0
    while (i < idTypes.length) { buffer.update(1 + i, if (id == null) null else id.get(i, idTypes(i))); i += 1 }
    i = 0
    while (i < rowTypes.length) {
      val o = rowOrdinals(i)
      buffer.update(1 + idTypes.length + i, if (row == null || o < 0) null else row.get(o, rowTypes(i))); i += 1
    }
    before.foreach { case (ordinal, _) =>
      val old = if (metadata == null || metadata.isNullAt(ordinal)) null else metadata.getStruct(ordinal, beforeTypes.length)
      buffer.update(beforeAt, old != null)
      i = 0
      while (i < beforeTypes.length) {
        buffer.update(beforeAt + 1 + i, if (old == null) null else old.get(i, beforeTypes(i))); i += 1
      }
    }
    staging.write(buffer)
  }

  override def delete(metadata: InternalRow, id: InternalRow): Unit = stage(ChangeKind.Delete, id, null, metadata)
  override def update(metadata: InternalRow, id: InternalRow, row: InternalRow): Unit =
    stage(ChangeKind.Update, id, row, metadata)
  override def insert(row: InternalRow): Unit = stage(ChangeKind.Insert, null, row)
  override def reinsert(metadata: InternalRow, row: InternalRow): Unit = stage(ChangeKind.Insert, null, row)

  override def commit(): WriterCommitMessage = staging.commit()
  override def abort(): Unit = staging.abort()
  override def close(): Unit = ()
}
