package versioned.spark.stream

import org.apache.spark.sql.connector.write.Write
import org.apache.spark.sql.connector.write.streaming.StreamingWrite
import org.apache.spark.sql.types.StructType
import versioned.spark.session.TableHandle
import versioned.spark.write.WriteRequest

/** One micro-batch's write of the rows of `schema` by the streaming query `queryId` ([[VersionedStreamingWrite]]). */
private[versioned] final class StreamWrite(table: TableHandle, req: WriteRequest, schema: StructType, queryId: String)
  extends Write {
  override def description(): String = s"versioned streaming write of ${req.ident}"
  override def toStreaming: StreamingWrite = new VersionedStreamingWrite(table, req, schema, queryId)
}
