package versioned.spark.write

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.Literal
import org.apache.spark.sql.functions.{coalesce, expr, lit, not}
import org.apache.spark.sql.sources._
import org.apache.spark.sql.types.ByteType
import versioned.core._
import versioned.core.format.WriteMode
import versioned.spark.format.TableLayout
import versioned.spark.read.PinnedRead
import versioned.spark.session.{TableSnapshot, VersionedOptions}

/**
 * An overwrite that replaces the rows matching a condition (write option `replaceWhere`, `INSERT INTO ... REPLACE
 * WHERE`, `writeTo(...).overwrite(condition)`): on the head it builds on, the rows matching the condition are
 * deleted and the data is appended, and the commit records the result as one version (one commit). Every row of
 * the data must match the condition (REPLACE_WHERE_MISMATCH otherwise, as Delta Lake checks its replaceWhere), so
 * the rows the write leaves are exactly those outside the condition plus the data. The append's rules hold: a key
 * of the data that a row outside the condition has is KEY_EXISTS. Planned again on a head that moved, as any write
 * of given data is.
 */
private[versioned] object ReplaceWhere {

  /** The version of the table when `staged` replaces the rows of `head` matching the request's condition. */
  def plan(spark: SparkSession, engine: Engine, req: WriteRequest, staged: StagedInput, head: Option[Image],
           target: ObjectTarget): TableUpdate.Put = {
    val condition = req.replaceWhere.getOrElse(throw new IllegalArgumentException("not a replaceWhere write"))
    check(staged, condition)
    val append = req.copy(mode = WriteMode.Append, replaceWhere = None)
    val current = head.flatMap(h => engine.tableOption(req.ident.repo, h.hash, req.ident.table))
    (head, current) match {
      case (Some(h), Some(version)) =>
        val snapshot = TableSnapshot.load(engine, req.ident.repo, req.ident.table, h)
        val rows = PinnedRead.version(spark, req.locationOptions, snapshot, hidden = true)
        val deletes = ChangeSets.deletedIdentities(rows.filter(expr(condition)), TableLayout.of(version))
          .withColumn(VersionedOptions.ChangeColumn, lit(ChangeKind.Delete).cast(ByteType))
        val removed = CommitPlanner.plan(spark, req.copy(mode = WriteMode.Changes, replaceWhere = None, primaryKey = None),
          StagedInput(deletes), CommitPlanner.Base(Some(version), () => rows, Some(() => snapshot)), target)
        val written = removed.newObjects.map(o => o.id -> o).toMap
        val kept = removed.table.objectIds.distinct.filterNot(written.contains)
        val between = TableSnapshot(engine.config, req.ident.repo, req.ident.table,
          TableSnapshot.uncommitted(req.ident.repo, Some(h)), removed.table, written ++ engine.objects(kept))
        val replaced = CommitPlanner.plan(spark, append, staged, CommitPlanner.Base(Some(removed.table),
          () => PinnedRead.version(spark, req.locationOptions, between, hidden = true), Some(() => between)), target)
        val referenced = replaced.table.objectIds.toSet
        val newObjects = (removed.newObjects ++ replaced.newObjects).filter(o => referenced(o.id)).groupBy(_.id).values.map(_.head)
        TableUpdate.Put(replaced.table, newObjects.toSeq.sortBy(_.id))
      case _ => CommitPlanner.plan(spark, engine, append, staged, head, target) // no table yet: the data creates it
    }
  }

  /** REPLACE_WHERE_MISMATCH, naming a row, when a row of the data does not match `condition` (or it is unknown). */
  private def check(staged: StagedInput, condition: String): Unit = {
    val outside = staged.frame.where(not(coalesce(expr(condition), lit(false)))).limit(1).collect()
    outside.headOption.foreach(r => throw new DataValidationException(ErrorClass.ReplaceWhereMismatch,
      s"The data has a row that does not match the condition of the rows it replaces ($condition): " +
        s"${r.mkString("(", ", ", ")")}. Every row of the data must match it: filter the data by the condition, or " +
        "widen the condition. Nothing was committed."))
  }

  /** The SQL of the conjunction of `filters` (what Spark hands an overwrite by filter), columns quoted. */
  def sql(filters: Seq[Filter]): String =
    if (filters.size == 1) sql(filters.head) else filters.map(f => s"(${sql(f)})").mkString(" AND ")

  private def sql(f: Filter): String = f match {
    case EqualTo(a, v) => s"${name(a)} = ${value(v)}"
    case EqualNullSafe(a, v) => s"${name(a)} <=> ${value(v)}"
    case GreaterThan(a, v) => s"${name(a)} > ${value(v)}"
    case GreaterThanOrEqual(a, v) => s"${name(a)} >= ${value(v)}"
    case LessThan(a, v) => s"${name(a)} < ${value(v)}"
    case LessThanOrEqual(a, v) => s"${name(a)} <= ${value(v)}"
    case In(a, vs) if vs.isEmpty => s"${name(a)} IN (NULL) AND false"
    case In(a, vs) => s"${name(a)} IN (${vs.map(value).mkString(", ")})"
    case IsNull(a) => s"${name(a)} IS NULL"
    case IsNotNull(a) => s"${name(a)} IS NOT NULL"
    case And(l, r) => s"(${sql(l)}) AND (${sql(r)})"
    case Or(l, r) => s"(${sql(l)}) OR (${sql(r)})"
    case Not(c) => s"NOT (${sql(c)})"
    case StringStartsWith(a, v) => s"startswith(${name(a)}, ${value(v)})"
    case StringEndsWith(a, v) => s"endswith(${name(a)}, ${value(v)})"
    case StringContains(a, v) => s"contains(${name(a)}, ${value(v)})"
    case _: AlwaysTrue => "true"
    case _: AlwaysFalse => "false"
    case other => throw Errors.unsupported(s"The condition $other of the rows to replace cannot be applied by " +
      s"versioned tables. Give the condition as the write option '${VersionedOptions.ReplaceWhere}'. Nothing was committed.")
  }

  /** A filter's column (Spark quotes the parts of a name that need it, joined by dots) as a SQL name. */
  private def name(attribute: String): String =
    if (attribute.contains('`')) attribute else attribute.split('.').map(p => s"`$p`").mkString(".")

  private def value(v: Any): String = Literal.create(v).sql
}
