package versioned.spark.stream

import org.apache.spark.sql.connector.write.{PhysicalWriteInfo, WriterCommitMessage}
import org.apache.spark.sql.connector.write.streaming.{StreamingDataWriterFactory, StreamingWrite}
import org.apache.spark.sql.types.StructType
import versioned.spark.session.TableHandle
import versioned.spark.write.{StagedWrite, StreamBatch, WriteRequest}

/**
 * A micro-batch as one commit, exactly once: its tasks stage rows as a batch write's do ([[StagedWrite]], the
 * same writers and lease), and the driver commits them through the one commit path with the query's id and the
 * batch's id. A batch the branch has already (replayed after a crash between the commit and the checkpoint)
 * commits nothing; a batch that does not follow the query's newest there is refused
 * (`STREAM_CHECKPOINT_MISMATCH`, [[versioned.spark.write.StreamBatches]]). A commit that meets a moved head is
 * planned again on it (bounded), as every write's.
 */
private[versioned] final class VersionedStreamingWrite(table: TableHandle, req: WriteRequest, schema: StructType,
                                                       queryId: String) extends StreamingWrite {
  private val staged = new StagedWrite(table, req, schema)
  /** The batch write of this micro-batch: its Spark jobs are named from now on. */
  private lazy val batch = staged.toBatch

  override def createStreamingWriterFactory(info: PhysicalWriteInfo): StreamingDataWriterFactory =
    new StreamWriterFactory(batch.createBatchWriterFactory(info))

  override def commit(epochId: Long, messages: Array[WriterCommitMessage]): Unit =
    staged.commitAs(messages, req.copy(stream = Some(StreamBatch(queryId, epochId, sink = true))))

  override def abort(epochId: Long, messages: Array[WriterCommitMessage]): Unit = staged.abort(messages)
}
