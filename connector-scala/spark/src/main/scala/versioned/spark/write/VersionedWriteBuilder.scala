package versioned.spark.write

import versioned.core.format.WriteMode

import scala.jdk.CollectionConverters._
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, SupportsTruncate, Write, WriteBuilder}
import versioned.spark.session.TableHandle

/**
 * Append by default; `truncate()` (DataFrame mode "overwrite", INSERT OVERWRITE) makes the data the new content.
 * A write that makes a new SNAP is a [[SnapshotWrite]]; a keyed overwrite of a table with the data's shape an
 * [[OverwriteWrite]]; every other a [[StagedWrite]] (the kernel's `CommitPath.write`, [[WritePaths]]).
 */
private[versioned] final class VersionedWriteBuilder(table: TableHandle, info: LogicalWriteInfo,
                                                     deferred: Option[DeferredWrites.Handler] = None)
  extends WriteBuilder with SupportsTruncate {
  private var mode: WriteMode = WriteMode.Append

  override def truncate(): WriteBuilder = { mode = WriteMode.Overwrite; this }

  override def build(): Write = {
    val options = table.options ++ info.options().asCaseSensitiveMap().asScala
    val req = WriteRequest.from(table, options, mode, deferred)
    WritePaths.writeFor(table, req, info.schema()) // the kernel's CommitPath decides
  }
}
