package versioned.spark.write

import scala.jdk.CollectionConverters._
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, SupportsOverwrite, Write, WriteBuilder}
import org.apache.spark.sql.sources.{AlwaysTrue, Filter}
import org.apache.spark.sql.types.StructType
import versioned.core.TableVersion
import versioned.core.format.{CommitPath, WriteMode}
import versioned.spark.format.TableLayout
import versioned.spark.session.{TableHandle, TableSnapshot, VersionedOptions}

/**
 * Append by default; `truncate()` (DataFrame mode "overwrite", INSERT OVERWRITE) makes the data the new content;
 * `overwrite(filters)` (`INSERT INTO ... REPLACE WHERE`, `writeTo(...).overwrite(condition)`) replaces the rows
 * matching the filters with the data, as the write option `replaceWhere` does ([[ReplaceWhere]]).
 * A write that makes a new SNAP is a [[SnapshotWrite]]; a keyed overwrite of a table with the data's shape an
 * [[OverwriteWrite]]; every other a [[StagedWrite]] (the kernel's `CommitPath.write` decides).
 */
private[versioned] final class VersionedWriteBuilder(table: TableHandle, info: LogicalWriteInfo,
                                                     deferred: Option[DeferredWrites.Handler] = None)
  extends WriteBuilder with SupportsOverwrite {
  private var mode: WriteMode = WriteMode.Append
  private var condition: Option[String] = None

  override def truncate(): WriteBuilder = { mode = WriteMode.Overwrite; condition = None; this }

  /** A condition Spark cannot hand over as filters is refused with the way that takes any SQL condition. */
  override def canOverwrite(predicates: Array[org.apache.spark.sql.connector.expressions.filter.Predicate]): Boolean =
    super[SupportsOverwrite].canOverwrite(predicates) || (throw versioned.core.Errors.unsupported(
      s"The condition ${predicates.mkString(" AND ")} of the rows to replace cannot be handed to the connector as " +
        s"filters by Spark (comparisons of columns with values, IN, IS NULL, AND, OR, NOT, string prefixes can). Give " +
        s"it as the write option '${VersionedOptions.ReplaceWhere}' of an overwrite, which takes any SQL condition. " +
        "Nothing was committed."))

  override def overwrite(filters: Array[Filter]): WriteBuilder =
    if (filters.forall(_.isInstanceOf[AlwaysTrue])) truncate()
    else { mode = WriteMode.Overwrite; condition = Some(ReplaceWhere.sql(filters.toSeq)); this }

  override def build(): Write = {
    val given = table.options ++ info.options().asCaseSensitiveMap().asScala
    // the statement's condition; a write option replaceWhere as well would be a second one
    val options = condition.fold(given) { c =>
      if (given.keys.exists(_.equalsIgnoreCase(VersionedOptions.ReplaceWhere))) throw versioned.core.Errors.invalidOption(
        s"The statement replaces the rows where $c; leave the write option '${VersionedOptions.ReplaceWhere}' out.")
      given + (VersionedOptions.ReplaceWhere -> c)
    }
    val req = WriteRequest.from(table, options, mode, deferred)
    VersionedWriteBuilder.writeFor(table, req, info.schema())
  }
}

/** The facts the kernel's [[CommitPath]] decides on, gathered from a request and the head, and the write it picks. */
private[versioned] object VersionedWriteBuilder {
  def request(req: WriteRequest): CommitPath.Request = CommitPath.Request(req.mode, req.upsert,
    keyGiven = req.primaryKey.exists(_.nonEmpty), deleteColumn = req.deleteColumn.isDefined,
    expectedHead = req.expectedHead.isDefined, inTransaction = req.deferred.isDefined,
    replaceWhere = req.replaceWhere.isDefined)

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
