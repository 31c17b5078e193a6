package versioned.spark.stream

import scala.jdk.CollectionConverters._
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, SupportsTruncate, Write, WriteBuilder}
import org.apache.spark.sql.internal.connector.SupportsStreamingUpdateAsAppend
import versioned.core.Errors
import versioned.core.format.WriteMode
import versioned.spark.session.{TableHandle, VersionedOptions}
import versioned.spark.write.WriteRequest

/**
 * The write of one micro-batch of a streaming query (`writeStream.format("versioned")`, `toTable`): Spark asks
 * the table for a builder per micro-batch. Output modes: `append` appends each batch with the write options'
 * semantics (a key that exists is an error unless `upsert`; `deleteColumn` applies a change feed by key);
 * `update` is the same (with `upsert`, each batch's updated rows replace their keys' rows); `complete` makes
 * each batch's result the table's content (an overwrite; `deleteColumn` does not apply to it).
 */
private[versioned] final class StreamWriteBuilder(table: TableHandle, info: LogicalWriteInfo)
  extends WriteBuilder with SupportsTruncate with SupportsStreamingUpdateAsAppend {
  private var mode: WriteMode = WriteMode.Append

  override def truncate(): WriteBuilder = { mode = WriteMode.Overwrite; this }

  override def build(): Write = {
    val options = table.options ++ info.options().asCaseSensitiveMap().asScala
    Seq(VersionedOptions.StreamQueryId, VersionedOptions.StreamBatchId).foreach { k =>
      if (options.keys.exists(_.equalsIgnoreCase(k))) throw Errors.invalidOption(s"Option '$k' is for batch writes " +
        "of a stream's batches (foreachBatch); a streaming write records its query's id and batch ids itself. Remove it.")
    }
    new StreamWrite(table, WriteRequest.from(table, options, mode), info.schema(), info.queryId())
  }
}

private[versioned] object StreamWriteBuilder {
  /** The local property in which Spark's stream execution thread holds its query's id. */
  private val QueryIdProperty = "sql.streaming.queryId"

  /**
   * Whether a write is a streaming query's write to this table (not a batch write a `foreachBatch` function
   * makes on the same thread): Spark gives a stream's write the query's id, which its thread also holds.
   */
  def streaming(info: LogicalWriteInfo): Boolean =
    Option(SparkSession.active.sparkContext.getLocalProperty(QueryIdProperty)).contains(info.queryId())
}
