package versioned.spark.rowlevel

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.write.{RowLevelOperation, RowLevelOperationBuilder, RowLevelOperationInfo}
import versioned.core.{Errors, Revision}
import versioned.spark.session.TableHandle

/**
 * Entry point of DELETE / UPDATE / MERGE on a versioned table. The operation is pinned to the image
 * the table resolved to; its commit moves the branch from exactly that image (compare-and-swap).
 */
private[versioned] final class VersionedRowLevelOperationBuilder(table: TableHandle, info: RowLevelOperationInfo)
  extends RowLevelOperationBuilder {

  override def build(): RowLevelOperation = {
    val snapshot = table.requireSnapshot
    table.revision match {
      case Revision.AsOf(_, _) => throw Errors.unsupported(
        s"${info.command()} cannot change ${table.ident} as of a timestamp; row-level changes go to a branch head.")
      case _ =>
    }
    if (info.command() == RowLevelOperation.Command.MERGE) MergeKeyFilter.register(SparkSession.active)
    new VersionedDeltaOperation(table, snapshot, info.command())
  }
}
