package versioned.spark.rowlevel

import org.apache.spark.sql.connector.expressions.{Expressions, NamedReference}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.write.{DeltaWriteBuilder, LogicalWriteInfo, RowLevelOperation, SupportsDelta}
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import versioned.spark.session.TableHandle
import versioned.spark.session.TableSnapshot
import versioned.spark.session.VersionedOptions.RowIdColumn

/**
 * A row-level operation in delta form: Spark hands over only the rows to delete, update or insert,
 * identified by their row id. The row id is the primary key, or for key-less tables the `_vrowid`
 * metadata column (all columns and the duplicate ordinal). Updates are passed as updates (not as a
 * delete plus an insert), so a write carries the old key of every changed row.
 */
private[rowlevel] final class VersionedDeltaOperation(
    table: TableHandle,
    snapshot: TableSnapshot,
    cmd: RowLevelOperation.Command) extends SupportsDelta {

  override def command(): RowLevelOperation.Command = cmd

  /** Whether the table has a primary key (row ids are its key columns, and MERGE can filter by them). */
  def keyed: Boolean = !snapshot.layout.hidden

  override def description(): String = s"versioned $cmd on ${table.ident} @ ${snapshot.image.shortHash}"

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = table.newScanBuilder(options)

  /** Spark asks for the row id and the metadata columns many times while analysing one statement: built once. */
  private lazy val rowIds: Array[NamedReference] =
    (if (snapshot.layout.hidden) Seq(RowIdColumn) else snapshot.layout.primaryKey)
      .map(k => Expressions.column(s"`${k.replace("`", "``")}`")).toArray

  override def rowId(): Array[NamedReference] = rowIds.clone()

  override def representUpdateAsDeleteAndInsert(): Boolean = false

  /**
   * UPDATE and MERGE of a keyed table read `_vbefore`, the old values of the rows they change, which Spark
   * passes to the write with each update and delete ([[StagedDeltaWrite]]).
   */
  override def requiredMetadataAttributes(): Array[NamedReference] = metadataAttributes.clone()

  private lazy val metadataAttributes: Array[NamedReference] =
    if (cmd == RowLevelOperation.Command.DELETE) Array.empty
    else versioned.spark.read.BeforeValuesScan.column(snapshot.layout).map(c => Expressions.column(c.name()): NamedReference).toArray

  override def newWriteBuilder(info: LogicalWriteInfo): DeltaWriteBuilder = new DeltaWriteBuilder {
    override def build(): StagedDeltaWrite = new StagedDeltaWrite(table, snapshot, cmd, info)
  }
}
