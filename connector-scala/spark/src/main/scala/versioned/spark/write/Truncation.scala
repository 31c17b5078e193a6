package versioned.spark.write

import org.apache.spark.sql.types.StructType
import versioned.core.format.WriteMode
import versioned.spark.session.{TableHandle, VersionedOptions}

/**
 * TRUNCATE TABLE ([[versioned.spark.VersionedTable.truncateTable]]): an overwrite with no rows, through the one
 * commit path, so its checks (a tag, lock or hash is IMMUTABLE_REF; protected branches; the write's lease) are
 * those of every write. A table with no rows commits nothing. In a transaction the handler receives it as it does
 * any other operation.
 */
private[versioned] object Truncation {
  def commit(table: TableHandle, schema: StructType, deferred: Option[DeferredWrites.Handler]): Unit = {
    val options = table.options + (VersionedOptions.Message -> s"truncate ${table.ident.table}")
    val req = WriteRequest.from(table, options, WriteMode.Overwrite, deferred)
    val nothing = StagedInput.local(StagedWrite.nullable(schema).asInstanceOf[StructType], IndexedSeq.empty)
    deferred match {
      case Some(handler) => handler(req, nothing)
      case None => Commits.record(CommitPlanner.commit(table.engine, req, nothing), req.writeId)
    }
  }
}
