package versioned.spark.merge

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.{col => _, _}
import org.apache.spark.sql.types.{DataType, StructField, StructType}
import versioned.core.{ChangeKind, SchemaMismatchException}
import versioned.spark.format.Columns.col
import versioned.spark.session.VersionedOptions
import versioned.spark.format.TableLayout
import versioned.spark.diff.{DiffShape, TableDiff}

/**
 * The column-level merge of a table whose schema changed on one or both sides (docs/MERGE.md). Columns
 * are compared by name against the base:
 *  - changed on one side only (added, dropped, or its type widened) takes that side;
 *  - the same change on both sides agrees;
 *  - different changes of one column on both sides (added with different types, retyped differently,
 *    dropped on one side and retyped on the other) are a `schema` conflict, as is a type change that is
 *    not a widening (the other side's values could not be converted without loss) and a primary key
 *    that differs between base, ours and theirs.
 * Merged column order: ours' columns, then the columns theirs added, in theirs' order. Rows of both
 * sides are then aligned to the merged columns ([[DiffShape]]'s rule: null where a side lacks the
 * column, cast to a widened type), and merged by the usual row rules ([[ThreeWay]]).
 */
private[merge] object SchemaMerge {

  /**
   * The merged layout, and the merged columns ours / theirs lack (added by the other side): a cell of
   * such a column is unchanged on the side that lacks it, so it never conflicts.
   */
  final case class Merged(layout: TableLayout, oursLacks: Set[String], theirsLacks: Set[String]) {
    /** Whether the merged table has other columns than `side` (then its version is rewritten as a SNAP). */
    def reshapes(side: TableLayout): Boolean = !TableLayout.sameColumns(side.schema, layout.schema)
  }

  /** The merged schema, or why the schemas conflict. `base` is None when the table is new on both sides. */
  def apply(base: Option[TableLayout], ours: TableLayout, theirs: TableLayout): Either[String, Merged] = {
    def key(l: TableLayout) = if (l.hidden) "no primary key" else l.primaryKey.mkString("primary key (", ", ", ")")
    val keys = (base.toSeq :+ ours :+ theirs).map(key)
    if (keys.distinct.size > 1) return Left(s"the primary key changed (base: ${base.map(key).getOrElse("none")}, " +
      s"ours: ${key(ours)}, theirs: ${key(theirs)})")
    def field(s: StructType, n: String): Option[StructField] = s.fields.find(_.name == n)
    def same(a: Option[StructField], b: Option[StructField]) = (a, b) match {
      case (Some(x), Some(y)) => DataType.equalsIgnoreNullability(x.dataType, y.dataType)
      case (x, y) => x.isEmpty && y.isEmpty
    }
    val b = base.map(_.schema).getOrElse(new StructType())
    val names = (ours.schema.fieldNames ++ theirs.schema.fieldNames ++ b.fieldNames).distinct.toSeq
    val decided = names.map { n =>
      val (fb, fo, ft) = (field(b, n), field(ours.schema, n), field(theirs.schema, n))
      val taken =
        if (same(fo, ft)) Right(fo)
        else if (same(fo, fb)) Right(ft)
        else if (same(ft, fb)) Right(fo)
        else Left(s"column '$n' changed on both sides (base: ${show(fb)}, ours: ${show(fo)}, theirs: ${show(ft)})")
      taken.flatMap {
        case Some(f) if fb.exists(x => !same(Some(x), Some(f)) && !DiffShape.wider(x.dataType, f.dataType)
            .exists(DataType.equalsIgnoreNullability(_, f.dataType))) =>
          Left(s"column '$n' changed type from ${show(fb)} to ${show(Some(f))}, which is not a widening, so the other " +
            "side's values cannot be converted")
        case Some(f) => Right(Some(if (fo.isEmpty || ft.isEmpty) f.copy(nullable = true) else f))
        case None => Right(None)
      }
    }
    decided.collectFirst { case Left(why) => why }.map(Left(_)).getOrElse {
      val kept = decided.collect { case Right(Some(f)) => f }
      val ordered = ours.schema.fieldNames.flatMap(n => kept.find(_.name == n)) ++
        theirs.schema.fieldNames.filterNot(ours.schema.fieldNames.contains).flatMap(n => kept.find(_.name == n))
      try {
        val layout = TableLayout.create(StructType(ordered.toSeq), ours.primaryKey)
        val lacks = (s: StructType) => layout.schema.fieldNames.filterNot(s.fieldNames.contains).toSet
        Right(Merged(layout, lacks(ours.schema), lacks(theirs.schema)))
      } catch { case e: SchemaMismatchException => Left(e.getMessage) }
    }
  }

  private def show(f: Option[StructField]): String = f.map(_.dataType.simpleString).getOrElse("absent")

  /** The user columns of `rows` (a version with layout `side`) aligned to the merged layout. */
  def project(rows: DataFrame, side: TableLayout, merged: TableLayout): DataFrame =
    DiffShape(byKey = true, Nil, merged.schema.fields.toSeq, Nil, exact = false).project(side, rows, "_vp_")
      .toDF(merged.schema.fieldNames.toSeq: _*)

  /**
   * A keyed diff ([[TableDiff]]'s layout, against the base) aligned to the merged layout: every merged
   * column's before and after values (null for a column the diff lacks, cast to the merged type); an
   * update that changed only dropped columns is no change any more and is left out.
   */
  def alignDiff(diff: DataFrame, merged: TableLayout): DataFrame = {
    val has = diff.columns.toSet
    def side(v: String, s: String) = {
      val dt = merged.physicalSchema(v).dataType
      (if (has(s"${v}_$s")) col(s"${v}_$s").cast(dt) else lit(null).cast(dt)).as(s"${v}_$s")
    }
    val values = merged.nonKeyColumns
    val changed = values.map(v => !versioned.spark.format.Columns.same(col(s"${v}_before"), col(s"${v}_after"),
      merged.physicalSchema(v).dataType)).foldLeft(lit(false))(_ || _)
    diff.select((col(TableDiff.ChangeColumn) +: merged.primaryKey.map(k => col(k).cast(merged.schema(k).dataType).as(k))) ++
      values.flatMap(v => Seq(side(v, "before"), side(v, "after"))): _*)
      .filter(col(TableDiff.ChangeColumn) =!= "update" || changed)
  }

  /**
   * The merged rows of a key-less table from its three versions aligned to the merged columns: per
   * distinct row, `base + added(ours) + added(theirs) - max(removed(ours), removed(theirs))` copies.
   */
  def multiset(merged: TableLayout, base: Option[DataFrame], ours: DataFrame, theirs: DataFrame): DataFrame = {
    val cols = merged.schema.fieldNames.toSeq
    def tagged(df: DataFrame, i: Int) = df.select(cols.map(col) ++ (0 until 3).map(j => lit(if (i == j) 1L else 0L)
      .as(s"_vn$j")): _*)
    val all = (base.map(tagged(_, 0)).toSeq :+ tagged(ours, 1) :+ tagged(theirs, 2)).reduce(_ unionByName _)
    val (cb, co, ct) = (col("_vn0"), col("_vn1"), col("_vn2"))
    def pos(c: org.apache.spark.sql.Column) = greatest(lit(0L), c)
    all.groupBy(cols.map(col): _*).agg(sum("_vn0").as("_vn0"), sum("_vn1").as("_vn1"), sum("_vn2").as("_vn2"))
      .withColumn("_vcount", cb + pos(co - cb) + pos(ct - cb) - greatest(pos(cb - co), pos(cb - ct)))
      .filter(col("_vcount") > 0)
      .withColumn("_vi", explode(sequence(lit(1L), col("_vcount")))).select(cols.map(col): _*)
  }

  /**
   * The merged table's rows (user columns): `current` (the target's rows aligned to the merged layout,
   * physical columns) with `changes` (DIFF layout, by the layout's key) applied.
   */
  def applied(layout: TableLayout, current: DataFrame, changes: DataFrame): DataFrame = {
    val keys = layout.keyColumns
    val changedKeys = changes.select(keys.map(k => col(k).cast(layout.physicalSchema(k).dataType).as(s"_vc_$k")): _*)
    val kept = current.join(changedKeys, keys.map(k => col(k) <=> col(s"_vc_$k")).reduce(_ && _), "left_anti")
    val typed = (df: DataFrame) => df.select(layout.schema.fields.toSeq.map(f => col(f.name).cast(f.dataType).as(f.name)): _*)
    typed(kept).unionByName(typed(changes.filter(col(VersionedOptions.ChangeColumn) =!= ChangeKind.Delete)))
  }
}
