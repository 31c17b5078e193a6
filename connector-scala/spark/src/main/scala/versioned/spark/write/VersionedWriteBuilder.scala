package versioned.spark.write

import scala.jdk.CollectionConverters._
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, SupportsTruncate, Write, WriteBuilder}
import versioned.spark.VersionedTable

/**
 * Append by default; `truncate()` (DataFrame mode "overwrite", INSERT OVERWRITE) makes the data the new content.
 * A write that makes a new SNAP is a [[SnapshotWrite]]; a keyed overwrite of a table with the data's shape an
 * [[OverwriteWrite]]; every other a [[StagedWrite]].
 */
private[versioned] final class VersionedWriteBuilder(table: VersionedTable, info: LogicalWriteInfo)
  extends WriteBuilder with SupportsTruncate {
  private var mode: WriteMode = WriteMode.Append

  override def truncate(): WriteBuilder = { mode = WriteMode.Overwrite; this }

  override def build(): Write = {
    val options = table.options ++ info.options().asCaseSensitiveMap().asScala
    val req = WriteRequests.from(table, options, mode)
    SnapshotWrite.layoutFor(table, req, info.schema()) match {
      case Some(layout) => new SnapshotWrite(table, req, layout) // a new SNAP: written in one pass by the tasks
      case None => OverwriteWrite.baseFor(table, req, info.schema()) match {
        case Some(base) => new OverwriteWrite(table, req, base) // changed rows only: written in one pass by the tasks
        case None => new StagedWrite(table, req, info.schema())
      }
    }
  }
}
