package versioned.spark.write

import scala.jdk.CollectionConverters._
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, SupportsTruncate, Write, WriteBuilder}
import org.apache.spark.sql.types.StructType
import versioned.core.TableVersion
import versioned.core.format.{CommitPath, WriteMode}
import versioned.spark.format.TableLayout
import versioned.spark.session.{TableHandle, TableSnapshot}

/**
 * Append by default; `truncate()` (DataFrame mode "overwrite", INSERT OVERWRITE) makes the data the new content.
 * A write that makes a new SNAP is a [[SnapshotWrite]]; a keyed overwrite of a table with the data's shape an
 * [[OverwriteWrite]]; every other a [[StagedWrite]] (the kernel's `CommitPath.write` decides).
 */
private[versioned] final class VersionedWriteBuilder(table: TableHandle, info: LogicalWriteInfo,
                                                     deferred: Option[DeferredWrites.Handler] = None)
  extends WriteBuilder with SupportsTruncate {
  private var mode: WriteMode = WriteMode.Append

  override def truncate(): WriteBuilder = { mode = WriteMode.Overwrite; this }

  override def build(): Write = {
    val options = table.options ++ info.options().asCaseSensitiveMap().asScala
    val req = WriteRequest.from(table, options, mode, deferred)
    VersionedWriteBuilder.writeFor(table, req, info.schema())
  }
}

/** The facts the kernel's [[CommitPath]] decides on, gathered from a request and the head, and the write it picks. */
private[versioned] object VersionedWriteBuilder {
  def request(req: WriteRequest): CommitPath.Request = CommitPath.Request(req.mode, req.upsert,
    keyGiven = req.primaryKey.exists(_.nonEmpty), deleteColumn = req.deleteColumn.isDefined,
    expectedHead = req.expectedHead.isDefined, inTransaction = req.deferred.isDefined)

  /** The table `current` (None: none yet) against the write's `layout`. */
  def target(current: Option[TableVersion], layout: TableLayout): CommitPath.Target = CommitPath.Target(
    exists = current.isDefined,
    sameShape = current.exists(c => TableLayout.sameColumns(TableLayout.of(c).schema, layout.schema) && c.primaryKey == layout.primaryKey),
    keyed = current.exists(c => c.primaryKey.nonEmpty && !c.hiddenKey))

  /**
   * The write of data of `schema` to `table`, judged on the branch head now; the commit judges again on the
   * head it builds on. Anything that cannot be decided here (a bad key, a tag, a missing repository) is left
   * to a [[StagedWrite]], which raises the errors.
   */
  def writeFor(table: TableHandle, req: WriteRequest, schema: StructType): org.apache.spark.sql.connector.write.Write = {
    val r = request(req)
    val decided = try {
      if (!CommitPath.dependsOnTable(r)) None
      else {
        val engine = table.engine
        val repo = req.ident.repo
        val head = engine.writableHead(repo, req.branch.getOrElse(engine.defaultBranchOrConfig(repo)))
        val current = head.flatMap(h => engine.tableOption(repo, h.hash, req.ident.table))
        val data = StagedWrite.nullable(schema).asInstanceOf[StructType]
        val layout = TableLayout.create(data, req.primaryKey.orElse(current.map(_.primaryKey)).getOrElse(Nil))
        CommitPath.write(r, target(current, layout)) match {
          case CommitPath.OnePassSnapshot => Some(new SnapshotWrite(table, req, layout))
          case CommitPath.OnePassOverwrite =>
            Some(new OverwriteWrite(table, req, TableSnapshot.of(engine, repo, head.get, current.get)))
          case CommitPath.Staged => None
        }
      }
    } catch { case scala.util.control.NonFatal(_) => None }
    decided.getOrElse(new StagedWrite(table, req, schema))
  }
}
