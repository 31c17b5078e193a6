package versioned.spark.rowlevel

import java.util.UUID
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.write.{DeltaWriter, DeltaWriterFactory, WriterCommitMessage}
import org.apache.spark.sql.types.StructType
import versioned.core.ChangeKind
import versioned.spark.write.{ParquetSink, RowBuffer, StagedFile}

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
 * message while the task's share of a small operation allows ([[RowBuffer]]), else in one Parquet file per
 * task. Nothing is interpreted here; [[DeltaChanges]] does that on the driver over all staged rows at once.
 *
 * @param rowOrdinals for each staged user column, its ordinal in the rows Spark passes (-1: absent)
 */
private[rowlevel] final class StagingDeltaWriter(sink: ParquetSink, path: String, idSchema: StructType,
                                                 rowSchema: StructType, rowOrdinals: Array[Int],
                                                 maxRows: Long, maxBytes: Long)
  extends DeltaWriter[InternalRow] {
  private lazy val out = sink.open(path)
  private var kept = if (maxRows > 0) new RowBuffer(sink.schema, maxRows, maxBytes) else null
  private var rows = 0L
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
    if (kept != null && !kept.add(buffer)) {
      // over the in-memory share: stage everything in the file from now on
      kept.message.unsafeRows(sink.schema.length).foreach(out.write)
      kept = null
    }
    if (kept == null) out.write(buffer)
    rows += 1
  }

  override def delete(metadata: InternalRow, id: InternalRow): Unit = stage(ChangeKind.Delete, id, null)
  override def update(metadata: InternalRow, id: InternalRow, row: InternalRow): Unit = stage(ChangeKind.Update, id, row)
  override def insert(row: InternalRow): Unit = stage(ChangeKind.Insert, null, row)
  override def reinsert(metadata: InternalRow, row: InternalRow): Unit = stage(ChangeKind.Insert, null, row)

  override def commit(): WriterCommitMessage =
    if (kept != null) kept.message
    else { if (rows > 0) out.close(); StagedFile(path, rows) }
  override def abort(): Unit = if (kept == null && rows > 0) out.close()
  override def close(): Unit = ()
}
