package versioned.spark.stream

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory}
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory

/** A micro-batch's tasks: the batch write's writers (one micro-batch is one write; the epoch is its commit's). */
private[versioned] final class StreamWriterFactory(tasks: DataWriterFactory) extends StreamingDataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long, epochId: Long): DataWriter[InternalRow] =
    tasks.createWriter(partitionId, taskId)
}
