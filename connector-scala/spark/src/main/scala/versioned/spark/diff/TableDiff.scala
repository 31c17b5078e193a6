package versioned.spark.diff

import org.apache.spark.sql.{Column, DataFrame, SparkSession}
import org.apache.spark.sql.functions.{col => _, _}
import versioned.spark.Columns.col
import versioned.core.{Revision, SchemaMismatchException}
import versioned.spark._

/**
 * Row-level diff of one table between two revisions, as a DataFrame with `_change` ('insert',
 * 'delete', 'update'), the key columns and, for every other column, `<c>_before` / `<c>_after`.
 * Key-less tables compare whole rows (with multiplicity): only inserts and deletes.
 *
 * Cost follows the change: when both versions have the same fragment bounds, fragments whose object
 * chains are identical are not read at all.
 */
private[versioned] object TableDiff {
  val ChangeColumn = "_change"

  def diff(spark: SparkSession, location: Map[String, String], table: String, from: Revision, to: Revision): DataFrame = {
    val ident = TableIdent.parse(table)
    val engine = Warehouses.engine(spark, location)
    def snap(r: Revision): Option[TableSnapshot] = {
      val img = engine.resolve(ident.repo, r)
      engine.tableOption(ident.repo, img.hash, ident.table).map(_ => TableSnapshot.load(engine, ident.repo, ident.table, img))
    }
    val (a, b) = (snap(from), snap(to))
    val layout = b.orElse(a).map(_.layout).getOrElse(
      throw new versioned.core.TableNotFoundException(ident.repo, ident.table, "either revision"))
    if (a.isDefined && b.isDefined && !TableLayout.sameColumns(a.get.layout.schema, b.get.layout.schema))
      throw new SchemaMismatchException(s"Table $table changed schema between the two revisions " +
        s"(${a.get.layout.schema.toDDL} vs ${b.get.layout.schema.toDDL}); a row diff needs one schema.")
    val only = changedFragments(a, b)
    def read(s: Option[TableSnapshot]): DataFrame = s match {
      case None => spark.createDataFrame(spark.sparkContext.emptyRDD[org.apache.spark.sql.Row], layout.physicalSchema)
      case Some(t) =>
        versioned.spark.read.PinnedRead.table(spark, location, ident, t.image.hash, only)
    }
    if (only.exists(_.isEmpty)) return spark.createDataFrame(spark.sparkContext.emptyRDD[org.apache.spark.sql.Row],
      resultSchema(layout))
    val (old, neu) = (read(a), read(b))
    val keys = layout.keyColumns
    val values = layout.nonKeyColumns
    val o = old.select(keys.map(k => col(k).as(s"o_$k")) ++ values.map(v => col(v).as(s"${v}_before")) :+ lit(true).as("_o"): _*)
    val n = neu.select(keys.map(k => col(k).as(s"n_$k")) ++ values.map(v => col(v).as(s"${v}_after")) :+ lit(true).as("_n"): _*)
    val joined = o.join(n, keys.map(k => col(s"o_$k") <=> col(s"n_$k")).reduce(_ && _), "full_outer")
    val same = values.map(v => col(s"${v}_before") <=> col(s"${v}_after")).foldLeft(lit(true))(_ && _)
    val change = when(col("_o").isNull, lit("insert")).when(col("_n").isNull, lit("delete")).when(!same, lit("update"))
    val userKeys = keys.filterNot(_ == VersionedOptions.DupColumn)
    joined.withColumn(ChangeColumn, change).filter(col(ChangeColumn).isNotNull)
      .select((col(ChangeColumn) +: userKeys.map(k => coalesce(col(s"n_$k"), col(s"o_$k")).as(k))) ++
        values.flatMap(v => Seq(col(s"${v}_before"), col(s"${v}_after"))): _*)
  }

  private def resultSchema(layout: TableLayout) = {
    val df = org.apache.spark.sql.types.StructType(
      org.apache.spark.sql.types.StructField(ChangeColumn, org.apache.spark.sql.types.StringType) +:
        (layout.keyColumns.filterNot(_ == VersionedOptions.DupColumn).map(layout.physicalSchema(_)) ++
          layout.nonKeyColumns.flatMap(v => Seq(layout.physicalSchema(v).copy(name = s"${v}_before"),
            layout.physicalSchema(v).copy(name = s"${v}_after")))))
    df
  }

  /** Fragment indexes worth reading, or None to read everything (different fragment layouts). */
  private def changedFragments(a: Option[TableSnapshot], b: Option[TableSnapshot]): Option[Seq[Int]] =
    for { x <- a; y <- b if x.version.effectiveFragments.map(_.lower) == y.version.effectiveFragments.map(_.lower) }
      yield x.version.effectiveFragments.zip(y.version.effectiveFragments).zipWithIndex
        .collect { case ((f, g), i) if f.objects != g.objects => i }
}
