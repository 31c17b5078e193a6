package versioned.spark.diff

import org.apache.spark.sql.{Column, Row, SparkSession}
import org.apache.spark.sql.functions.{col => _, _}
import org.apache.spark.sql.types._
import versioned.core._
import versioned.spark.session.TableIdent
import versioned.spark.session.{TableSnapshot, Warehouses}
import versioned.spark.format.TableLayout
import versioned.spark.format.Columns.col

/**
 * What changed between two images, per table: rows inserted, updated and deleted, the columns whose
 * values changed in updated rows plus the columns added or dropped, per column the number of updated
 * rows whose value in it changed, and whether the schema or key changed. Tables with the same table
 * hash in both images are not read; the others are diffed with [[TableDiff]] (so the cost follows the
 * change) and counted in one aggregation each. A table whose rows cannot be compared (a column changed
 * to an unrelated type) has null counts.
 */
private[versioned] object DiffSummary {
  val Schema: StructType = StructType(Seq(
    StructField("table", StringType, nullable = false),
    StructField("inserted", LongType), StructField("updated", LongType), StructField("deleted", LongType),
    StructField("columns_changed", ArrayType(StringType, containsNull = false), nullable = false),
    StructField("cells_changed", MapType(StringType, LongType, valueContainsNull = false)),
    StructField("schema_changed", BooleanType, nullable = false)))

  /** [[rows]] between two revisions of `repo`. */
  def rows(spark: SparkSession, engine: Engine, repo: String, from: Revision, to: Revision, table: Option[String]): Seq[Row] =
    rows(spark, engine, repo, engine.resolve(repo, from), engine.resolve(repo, to), table)

  /** One row per table that differs, by table name; `table` restricts it to one table (absent from both: TABLE_NOT_FOUND). */
  def rows(spark: SparkSession, engine: Engine, repo: String, from: Image, to: Image, table: Option[String]): Seq[Row] = {
    def tables(i: Image) = engine.tables(repo, i.hash).map(t => t.name -> t).toMap
    val (a, b) = (tables(from), tables(to))
    val names = table match {
      case Some(t) => requireTable(engine, repo, from, to, t); Seq(t)
      case None => (a.keySet ++ b.keySet).toSeq.sorted
    }
    val location = Warehouses.locationOf(engine.config)
    names.filterNot(n => a.get(n).exists(x => b.get(n).exists(_.hash == x.hash))).flatMap { n =>
      summarize(spark, location, TableIdent(repo, n), from, to, a.get(n).map(TableLayout.of), b.get(n).map(TableLayout.of))
    }
  }

  /**
   * Rows upserted (inserted or updated) and rows deleted between `from` and `to` in each of `tables`, as [[rows]]
   * counts them (a table whose rows cannot be compared counts none), for many tables at the cost of their change: the
   * table versions of each image and the records of their objects are read in one metastore query each, and a table
   * whose diff is small ([[TableDiff.onDriver]]) is counted on the driver; only the others run a job each.
   */
  def changeCounts(spark: SparkSession, engine: Engine, repo: String, from: Image, to: Image,
                   tables: Seq[String]): Map[String, (Long, Long)] = {
    def versions(i: Image) = engine.tables(repo, i.hash).map(t => t.name -> t).toMap
    val (a, b) = (versions(from), versions(to))
    val changed = tables.distinct.filterNot(n => a.get(n).exists(x => b.get(n).exists(_.hash == x.hash)))
    val metas = engine.objects(changed.flatMap(n => (a.get(n) ++ b.get(n)).flatMap(_.objectIds)))
    def snapshot(i: Image, v: TableVersion) = TableSnapshot.within(engine.config, repo, i, v, metas)
    val location = Warehouses.locationOf(engine.config)
    val readers = Some(new FastDiff.ReaderCache)
    changed.map { n =>
      val (la, lb) = (a.get(n).map(TableLayout.of), b.get(n).map(TableLayout.of))
      val onDriver = for {
        (x, y) <- a.get(n).zip(b.get(n))
        shape <- scala.util.Try(DiffShape.of(s"$repo.$n", la, lb)).toOption
        rows <- TableDiff.onDriver(spark, shape, snapshot(from, x), snapshot(to, y), readers)
      } yield {
        val change = shape.resultSchema.fieldIndex(TableDiff.ChangeColumn)
        val deletes = rows.count(_.getString(change) == "delete").toLong
        (rows.size - deletes, deletes)
      }
      n -> onDriver.getOrElse(summarize(spark, location, TableIdent(repo, n), from, to, la, lb)
        .filterNot(r => r.isNullAt(1) || r.isNullAt(2) || r.isNullAt(3))
        .fold((0L, 0L))(r => (r.getLong(1) + r.getLong(2), r.getLong(3))))
    }.toMap
  }

  /** TABLE_NOT_FOUND (INVALID_NAME for a malformed name) unless `from` or `to` has table `t`. */
  def requireTable(engine: Engine, repo: String, from: Image, to: Image, t: String): Unit = {
    Names.validate(Names.Table, t)
    if (engine.tableOption(repo, from.hash, t).isEmpty && engine.tableOption(repo, to.hash, t).isEmpty)
      throw TableDiff.absent(repo, t, from, to)
  }

  private def summarize(spark: SparkSession, location: Map[String, String], ident: TableIdent, from: Image, to: Image,
                        la: Option[TableLayout], lb: Option[TableLayout]): Option[Row] = {
    val schemaChanged = !(la.isDefined && lb.isDefined && DiffShape.same(la.get, lb.get))
    val oneSide = onlyOneSide(la, lb)
    val shape = try DiffShape.of(ident.toString, la, lb) catch {
      case _: SchemaMismatchException =>
        val retyped = for { a <- la.toSeq; b <- lb.toSeq; f <- b.schema.fields
          if a.schema.fieldNames.contains(f.name) && DiffShape.wider(a.schema(f.name).dataType, f.dataType).isEmpty } yield f.name
        return Some(Row(ident.table, null, null, null, (retyped ++ oneSide).distinct, null, true))
    }
    val change = col(TableDiff.ChangeColumn)
    def counted(c: Column) = count(when(c, lit(1)))
    val values = if (shape.byKey) shape.values else Nil
    val cells = values.map(v => counted(change === "update" &&
      !versioned.spark.format.Columns.same(col(s"${v.name}_before"), col(s"${v.name}_after"), v.dataType)))
    val r = TableDiff.diff(spark, location, ident.toString, from, to)
      .agg(counted(change === "insert"), (counted(change === "update") +: counted(change === "delete") +: cells): _*).head()
    val (ins, upd, del) = (r.getLong(0), r.getLong(1), r.getLong(2))
    val perColumn = values.zipWithIndex.map { case (v, i) => v.name -> r.getLong(3 + i) }.filter(_._2 > 0).toMap
    val changed = perColumn.keySet ++ oneSide
    val columns = (lb.toSeq.flatMap(_.schema.fieldNames) ++ la.toSeq.flatMap(_.schema.fieldNames)).distinct.filter(changed)
    Option.when(ins + upd + del > 0 || schemaChanged)(Row(ident.table, ins, upd, del, columns, perColumn, schemaChanged))
  }

  /** Columns one version has and the other lacks (all columns when the table is absent from one side). */
  private def onlyOneSide(a: Option[TableLayout], b: Option[TableLayout]): Seq[String] = {
    val (x, y) = (a.toSeq.flatMap(_.schema.fieldNames), b.toSeq.flatMap(_.schema.fieldNames))
    (y.filterNot(x.contains) ++ x.filterNot(y.contains)).distinct
  }
}
