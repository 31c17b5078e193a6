package versioned.spark.write

import scala.jdk.CollectionConverters._
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, SupportsTruncate, Write, WriteBuilder}
import versioned.spark.VersionedTable

/** Append by default; `truncate()` (DataFrame mode "overwrite", INSERT OVERWRITE) makes the data the new content. */
private[versioned] final class VersionedWriteBuilder(table: VersionedTable, info: LogicalWriteInfo)
  extends WriteBuilder with SupportsTruncate {
  private var mode: WriteMode = WriteMode.Append

  override def truncate(): WriteBuilder = { mode = WriteMode.Overwrite; this }

  override def build(): Write = {
    val options = table.options ++ info.options().asCaseSensitiveMap().asScala
    new StagedWrite(table, WriteRequests.from(table, options, mode), info.schema())
  }
}
