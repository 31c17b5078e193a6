package versioned.spark.write

import java.util.UUID
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.types.StructType
import versioned.core.WarehouseConfig
import versioned.spark.{VersionedTable, Warehouses}

/** What each write task staged: one Parquet file and its row count. */
private[versioned] final case class StagedFile(path: String, rows: Long) extends WriterCommitMessage

/**
 * DSv2 write: tasks stage incoming rows as plain Parquet; on commit the driver runs the
 * [[CommitPlanner]] over the staged data (validation, change computation, object writes) and records
 * exactly one image. Staging files are removed afterwards, whatever the outcome.
 */
private[versioned] final class StagedWrite(table: VersionedTable, req: WriteRequest, schema: StructType)
  extends Write with BatchWrite {
  private val stagingDir = table.config.stagingUri(s"writes/${UUID.randomUUID()}")
  @volatile private var lastResult: Option[versioned.core.CommitResult] = None

  override def toBatch: BatchWrite = this

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory =
    new StagingWriterFactory(ParquetSink.prepare(SparkSession.active, schema), stagingDir)

  override def commit(messages: Array[WriterCommitMessage]): Unit = try {
    val spark = SparkSession.active
    val files = messages.collect { case f: StagedFile if f.rows > 0 => f.path }
    val input = if (files.isEmpty) spark.createDataFrame(spark.sparkContext.emptyRDD[org.apache.spark.sql.Row], schema)
      else spark.read.schema(schema).parquet(files.toIndexedSeq: _*)
    lastResult = Some(CommitPlanner.commit(table.engine, req, input))
  } finally cleanup()

  override def abort(messages: Array[WriterCommitMessage]): Unit = cleanup()

  private def cleanup(): Unit = StagedWrite.delete(table.config, stagingDir)
}

private[versioned] object StagedWrite {
  def delete(config: WarehouseConfig, dir: String): Unit = {
    val p = new Path(dir)
    p.getFileSystem(SparkSession.active.sparkContext.hadoopConfiguration).delete(p, true)
  }
}

private[versioned] final class StagingWriterFactory(sink: ParquetSink, dir: String) extends DataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
    new StagingWriter(sink, s"$dir/part-$partitionId-$taskId-${UUID.randomUUID()}.parquet")
}

private[versioned] final class StagingWriter(sink: ParquetSink, path: String) extends DataWriter[InternalRow] {
  private lazy val out = sink.open(path)
  private var rows = 0L
  override def write(row: InternalRow): Unit = { out.write(row); rows += 1 }
  override def commit(): WriterCommitMessage = { if (rows > 0) out.close(); StagedFile(path, rows) }
  override def abort(): Unit = if (rows > 0) out.close()
  override def close(): Unit = ()
}
