package versioned.spark.diff

import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.catalyst.expressions.RowOrdering
import org.apache.spark.sql.expressions.Window
import org.apache.spark.sql.functions.{col => _, _}
import versioned.spark.format.TableLayout
import versioned.spark.format.Columns.col

/**
 * A diff computed by comparing two versions whole (or some fragments of them): a full outer join by
 * key, or, for [[DiffShape]]s that match whole rows, by the common columns plus a per-copy ordinal
 * (so duplicates count). A version that is absent (the table did not exist) contributes no rows and
 * needs no join.
 */
private[diff] object FullDiff {
  private val C = TableDiff.ChangeColumn

  /** `from` and `to`: the physical rows of each version with its layout (None: the table is absent there). */
  def apply(shape: DiffShape, from: Option[(TableLayout, DataFrame)], to: Option[(TableLayout, DataFrame)]): DataFrame = {
    val o = from.map { case (l, df) => shape.project(l, df, "_vo_") }
    val n = to.map { case (l, df) => shape.project(l, df, "_vn_") }
    (o, n) match {
      case (Some(x), Some(y)) => if (shape.byKey) byKey(shape, x, y) else wholeRow(shape, x, y)
      case (Some(x), None) => oneSide(shape, x, "_vo_", "delete")
      case (None, Some(y)) => oneSide(shape, y, "_vn_", "insert")
      case (None, None) => throw new IllegalArgumentException("no version")
    }
  }

  private def keys(shape: DiffShape, p: String): Seq[Column] =
    shape.keys.indices.filter(i => shape.userKeys.contains(shape.keys(i))).map(i => col(s"${p}k$i").as(shape.keys(i).name))

  /** Every row of one version as an insert (`to`) or a delete (`from`). */
  private def oneSide(shape: DiffShape, df: DataFrame, p: String, change: String): DataFrame = {
    val values = shape.values.zipWithIndex.map { case (v, i) => (col(s"${p}v$i"), v) }
    val cols =
      if (!shape.byKey) values.map { case (c, v) => c.as(v.name) }
      else keys(shape, p) ++ values.flatMap { case (c, v) =>
        val nothing = lit(null).cast(v.dataType)
        if (change == "insert") Seq(nothing.as(s"${v.name}_before"), c.as(s"${v.name}_after"))
        else Seq(c.as(s"${v.name}_before"), nothing.as(s"${v.name}_after"))
      }
    df.select(lit(change).as(C) +: cols: _*)
  }

  private def byKey(shape: DiffShape, o: DataFrame, n: DataFrame): DataFrame = {
    val ks = shape.keys.indices
    val vs = shape.values.indices
    val joined = o.withColumn("_vo", lit(true)).join(n.withColumn("_vn", lit(true)),
      ks.map(i => col(s"_vo_k$i") <=> col(s"_vn_k$i")).reduce(_ && _), "full_outer")
    val same = vs.map(i => versioned.spark.format.Columns.same(col(s"_vo_v$i"), col(s"_vn_v$i"), shape.values(i).dataType)).foldLeft(lit(true))(_ && _)
    val change = when(col("_vo").isNull, lit("insert")).when(col("_vn").isNull, lit("delete")).when(!same, lit("update"))
    val userKeys = ks.filter(i => shape.userKeys.contains(shape.keys(i)))
    joined.withColumn(C, change).filter(col(C).isNotNull)
      .select(col(C) +: (userKeys.map(i => coalesce(col(s"_vn_k$i"), col(s"_vo_k$i")).as(shape.keys(i).name)) ++
        vs.flatMap(i => Seq(col(s"_vo_v$i").as(s"${shape.values(i).name}_before"),
          col(s"_vn_v$i").as(s"${shape.values(i).name}_after")))): _*)
  }

  /**
   * Whole rows: copies of a row (equal on the common columns) are numbered on each side, ordered by
   * the other columns, and matched by value and number; unmatched copies are inserts or deletes and
   * carry their version's values (null for columns it lacks).
   */
  private def wholeRow(shape: DiffShape, o: DataFrame, n: DataFrame): DataFrame = {
    val vs = shape.values.indices
    val common = vs.filter(i => shape.common.contains(shape.values(i).name))
    if (common.isEmpty) return oneSide(shape, o, "_vo_", "delete").unionByName(oneSide(shape, n, "_vn_", "insert"))
    val others = vs.filterNot(common.contains).filter(i => RowOrdering.isOrderable(shape.values(i).dataType))
    def numbered(df: DataFrame, p: String) = {
      val order = if (others.isEmpty) Seq(lit(1)) else others.map(i => col(s"${p}v$i"))
      df.withColumn(s"${p}i", row_number().over(Window.partitionBy(common.map(i => col(s"${p}v$i")): _*).orderBy(order: _*)))
        .withColumn(p.dropRight(1), lit(true))
    }
    val joined = numbered(o, "_vo_").join(numbered(n, "_vn_"),
      (common.map(i => col(s"_vo_v$i") <=> col(s"_vn_v$i")) :+ (col("_vo_i") === col("_vn_i"))).reduce(_ && _), "full_outer")
    val change = when(col("_vo").isNull, lit("insert")).when(col("_vn").isNull, lit("delete"))
    joined.withColumn(C, change).filter(col(C).isNotNull)
      .select(col(C) +: vs.map(i => when(col(C) === "insert", col(s"_vn_v$i")).otherwise(col(s"_vo_v$i"))
        .as(shape.values(i).name)): _*)
  }

}
