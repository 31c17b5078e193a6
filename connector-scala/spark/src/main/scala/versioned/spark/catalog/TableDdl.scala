package versioned.spark.catalog

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.connector.catalog.TableChange
import org.apache.spark.sql.connector.catalog.TableChange._
import org.apache.spark.sql.connector.catalog.constraints.PrimaryKey
import org.apache.spark.sql.expressions.Window
import org.apache.spark.sql.functions._
import org.apache.spark.sql.types.StructType
import versioned.core._
import versioned.spark.session.{Settings, VersionedOptions}
import versioned.spark.format.TableLayout
import versioned.spark.write.{CommitPlanner, ObjectTarget, Validation}

/**
 * DDL as commits: every statement records exactly one image on the target branch, moved by
 * compare-and-swap from the head it was planned on. CREATE records an empty table version (zero
 * fragments); DROP and RENAME change only the image's table list; ALTER rewrites the table as a new
 * SNAP with the transformed schema.
 */
private[catalog] final class TableDdl(engine: Engine, locationOptions: Map[String, String]) {
  private def spark = SparkSession.active

  def author: String = Settings.of(spark).authorOr(None)

  def branchOf(t: TableTarget): String = t.ref.getOrElse(engine.defaultBranchOrConfig(t.repo))

  /** Head of the target branch and the table in it, if any. */
  def current(t: TableTarget): (Option[Image], Option[TableVersion]) = {
    val head = engine.writableHead(t.repo, branchOf(t))
    (head, head.flatMap(h => engine.tableOption(t.repo, h.hash, t.table)))
  }

  /** Commits an empty table version. `replace`: the table may exist (REPLACE TABLE); else it must not. */
  def createEmpty(t: TableTarget, schema: StructType, primaryKey: Seq[String], replace: Boolean): CommitResult = {
    val layout = TableLayout.create(schema, primaryKey)
    val (head, existing) = current(t)
    if (existing.isDefined && !replace) throw new VersionedException(ErrorClass.TableExists,
      s"Table '${t.table}' already exists in '${t.repo}' on branch '${branchOf(t)}'.")
    val version = TableVersion(t.table, layout.schemaJson, layout.primaryKey, layout.hidden, Seq.empty)
    engine.commit(t.repo, branchOf(t), head.map(_.hash), Map(t.table -> TableUpdate.Put(version, Seq.empty)), author,
      s"${if (existing.isDefined) "replace" else "create"} table ${t.table}")
  }

  /** Returns false when the table does not exist on the branch. */
  def drop(t: TableTarget): Boolean = {
    val (head, existing) = current(t)
    existing.foreach { _ =>
      engine.commit(t.repo, branchOf(t), head.map(_.hash), Map(t.table -> TableUpdate.Drop), author, s"drop table ${t.table}")
    }
    existing.isDefined
  }

  def rename(from: TableTarget, to: TableTarget): Unit = {
    if (from.repo != to.repo) throw Errors.unsupported(
      s"Cannot rename ${from.repo}.${from.table} to another repository (${to.repo}); tables live in one repository.")
    if (to.ref.exists(r => r != branchOf(from))) throw Errors.unsupported(
      "RENAME TO names the new table without a branch; the rename happens on the branch of the old name.")
    val (head, existing) = current(from)
    val version = existing.getOrElse(throw new TableNotFoundException(from.repo, from.table, s"branch '${branchOf(from)}'"))
    if (engine.tableOption(from.repo, head.get.hash, to.table).isDefined) throw new VersionedException(ErrorClass.TableExists,
      s"Table '${to.table}' already exists in '${to.repo}' on branch '${branchOf(from)}'.")
    engine.commit(from.repo, branchOf(from), head.map(_.hash),
      Map(from.table -> TableUpdate.Drop, to.table -> TableUpdate.Put(version.copy(name = to.table), Seq.empty)),
      author, s"rename table ${from.table} to ${to.table}")
  }

  /** ADD / DROP / RENAME COLUMN, column type changes and a new primary key: one rewrite, one new SNAP. */
  def alter(t: TableTarget, changes: Seq[TableChange]): CommitResult = {
    val (head, existing) = current(t)
    val version = existing.getOrElse(throw new TableNotFoundException(t.repo, t.table, s"branch '${branchOf(t)}'"))
    var df: DataFrame = spark.read.format("versioned").options(locationOptions)
      .option(VersionedOptions.Image, head.get.hash).load(s"${t.repo}.${t.table}")
    var key = version.primaryKey
    var newKey = false
    def single(path: Array[String], what: String): String =
      if (path.length == 1) path(0) else throw Errors.unsupported(s"$what of nested field ${path.mkString(".")} is not supported.")
    def exists(n: String) = df.columns.contains(n)
    val described = changes.map {
      case a: AddColumn =>
        val n = single(a.fieldNames(), "ADD COLUMN")
        if (exists(n)) throw new SchemaMismatchException(s"Column '$n' already exists in ${t.repo}.${t.table}.")
        if (a.defaultValue() != null) throw Errors.unsupported(s"ADD COLUMN $n with a DEFAULT value is not supported.")
        if (!a.isNullable) throw Errors.unsupported(s"ADD COLUMN $n NOT NULL is not supported: the rows the table has " +
          s"would hold NULL in it. Add it without NOT NULL.")
        df = df.withColumn(n, lit(null).cast(a.dataType()))
        Option(a.position()).foreach {
          case _: First => df = df.select((n +: df.columns.filterNot(_ == n)).map(c => col(s"`$c`")).toIndexedSeq: _*)
          case after: After =>
            val rest = df.columns.filterNot(_ == n)
            val at = rest.indexOf(after.column()) + 1
            df = df.select(((rest.take(at) :+ n) ++ rest.drop(at)).map(c => col(s"`$c`")).toIndexedSeq: _*)
          case _ =>
        }
        Some(s"add column $n")
      case d: DeleteColumn =>
        val n = single(d.fieldNames(), "DROP COLUMN")
        if (key.contains(n)) throw Errors.unsupported(s"Column '$n' is part of the primary key (${key.mkString(", ")}) " +
          "and cannot be dropped.")
        if (!exists(n) && !Boolean.unbox(d.ifExists())) throw new SchemaMismatchException(s"Column '$n' does not exist.")
        if (!exists(n)) None // IF EXISTS of a column the table does not have: nothing changes
        else { df = df.drop(n); Some(s"drop column $n") }
      case r: RenameColumn =>
        val n = single(r.fieldNames(), "RENAME COLUMN")
        if (exists(r.newName())) throw new SchemaMismatchException(s"Column '${r.newName()}' already exists.")
        df = df.withColumnRenamed(n, r.newName())
        key = key.map(k => if (k == n) r.newName() else k)
        Some(s"rename column $n to ${r.newName()}")
      case u: UpdateColumnType =>
        val n = single(u.fieldNames(), "ALTER COLUMN TYPE")
        if (df.schema.find(_.name == n).exists(_.dataType == u.newDataType())) None // the type it has: nothing changes
        else { df = df.withColumn(n, col(s"`$n`").cast(u.newDataType())); Some(s"change type of $n to ${u.newDataType().sql}") }
      case a: AddConstraint if a.constraint().isInstanceOf[PrimaryKey] =>
        key = a.constraint().asInstanceOf[PrimaryKey].columns().map(_.fieldNames().mkString(".")).toSeq
        newKey = key != version.primaryKey || version.hiddenKey
        Some(s"set primary key (${key.mkString(", ")})").filter(_ => newKey)
      case other => throw Errors.unsupported(s"ALTER TABLE change ${other.getClass.getSimpleName} is not supported by " +
        "versioned tables. Supported: ADD/DROP/RENAME COLUMN, ALTER COLUMN TYPE, ADD PRIMARY KEY.")
    }
    // a statement that changes nothing (DROP COLUMN IF EXISTS of a missing column, a column's own type) commits nothing
    if (described.flatten.isEmpty) return CommitResult(head.get, branchOf(t), Seq.empty, empty = true)
    val layout = TableLayout.create(df.schema, key)
    if (newKey) Validation.check(df, layout)
    val physical = if (!layout.hidden) df else df.withColumn(VersionedOptions.DupColumn,
      (row_number().over(Window.partitionBy(df.columns.map(c => col(s"`$c`")).toIndexedSeq: _*).orderBy(lit(1))) - 1).cast("int"))
    engine.leases.withLease(t.repo, "alter table") { lease =>
      val (next, objects) = CommitPlanner.writeSnapshot(spark, ObjectTarget(engine.config, lease.id), layout, physical, t.table)
      engine.commit(t.repo, branchOf(t), head.map(_.hash), Map(t.table -> TableUpdate.Put(next, objects)), author,
        s"alter table ${t.table}: ${described.flatten.mkString(", ")}", Some(lease))
    }
  }
}

private[catalog] object TableDdl {

  /** The primary key of a CREATE TABLE: its PRIMARY KEY constraint, else the `primaryKey` property. */
  def primaryKeyOf(constraints: Array[org.apache.spark.sql.connector.catalog.constraints.Constraint],
                   properties: java.util.Map[String, String]): Seq[String] = {
    val given = Option(constraints).toSeq.flatten
    // a CHECK, UNIQUE or FOREIGN KEY constraint would be kept by nobody and enforced by nothing: refused, as ALTER
    // TABLE ADD CONSTRAINT refuses them, rather than dropped in silence
    given.filterNot(_.isInstanceOf[PrimaryKey]).headOption.foreach(c => throw Errors.unsupported(
      s"Constraint ${c.toDDL} is not supported by versioned tables: only a PRIMARY KEY is kept (and enforced). Remove " +
        "it, and check the rule in the query that writes, or as a check on a protected branch (docs/GOVERNANCE.md)."))
    val fromConstraint = given.collect { case pk: PrimaryKey =>
      pk.columns().map(_.fieldNames().mkString(".")).toSeq
    }
    if (fromConstraint.size > 1) throw new SchemaMismatchException("A table has at most one PRIMARY KEY.")
    val fromProps = Option(properties).flatMap(p => Option(p.get(VersionedOptions.PrimaryKey)))
      .filter(_.trim.nonEmpty).map(VersionedOptions.primaryKey) // "": no key (as properties() reports key-less tables)
    (fromConstraint.headOption, fromProps) match {
      case (Some(a), Some(b)) if a != b => throw new SchemaMismatchException(
        s"PRIMARY KEY (${a.mkString(", ")}) and property primaryKey='${b.mkString(",")}' disagree; give one.")
      case (a, b) => a.orElse(b).getOrElse(Seq.empty)
    }
  }
}
