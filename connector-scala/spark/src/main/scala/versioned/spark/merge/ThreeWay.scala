package versioned.spark.merge

import org.apache.spark.sql.{functions, Column, DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.functions.{col => _, _}
import org.apache.spark.sql.types.{ArrayType, ByteType, DataType, MapType, StringType, StructField, StructType}
import versioned.core.ChangeKind
import versioned.core.format.ThreeWayRule
import versioned.spark.format.ColumnLogic
import versioned.spark.format.Columns.col
import versioned.spark.format.TableLayout
import versioned.spark.session.VersionedOptions.ChangeColumn
import versioned.spark.diff.TableDiff
import versioned.spark.write.{ChangeSets, LocalRules}

/**
 * The row rules of a three-way merge of one table, over the two diffs from the merge base: `ours`
 * (base to the target) and `theirs` (base to the source), both in [[TableDiff]]'s layout. Only keys
 * `theirs` changed can change the target, so the result costs what the two sides changed, never the
 * table. The rules (the kernel's [[ThreeWayRule]] for cells and rows; docs/MERGE.md):
 *  - a key changed on one side only takes that side;
 *  - both sides changed a row: cells changed on one side take that side, cells changed on both to the
 *    same value agree, cells changed on both to different values conflict (`update`);
 *  - the same key inserted on both sides with different values conflicts (`insert`), cell by cell;
 *  - one side deleted a row the other updated conflicts (`delete`), for the whole row;
 *  - key-less tables merge as multisets: copies added on either side are added, copies removed on either
 *    side are removed (a copy removed on both sides is removed once); they never conflict.
 */
private[versioned] object ThreeWay {
  /** Columns of a table's conflicts: its key columns (typed), then the conflict as text. */
  val ConflictColumns: Seq[String] = Seq("column", "base", "ours", "theirs", "kind")

  /**
   * The row merge of `ours` and `theirs` (both in [[TableDiff]]'s layout): [[joined]], kept by `hold` (the
   * changes and the conflicts both derive from it, so it is computed once), then [[merged]].
   */
  def keyed(layout: TableLayout, ours: DataFrame, theirs: DataFrame, strategy: Strategy,
            broadcastOurs: Boolean, hold: DataFrame => DataFrame, oursLacks: Set[String] = Set.empty,
            theirsLacks: Set[String] = Set.empty): (DataFrame, DataFrame) =
    merged(layout, hold(joined(layout, ours, theirs, broadcastOurs)), strategy, oursLacks, theirsLacks)

  /**
   * The layout of a merge's joined sides, one row per key theirs changed: the key columns, then per value
   * column `b_<v>` (base) and `t_<v>` (theirs), theirs' change (`_ct`: insert, update, delete), per value
   * column `o_<v>` (ours), ours' change (`_co`; null when ours did not change the key). A base value is
   * null when only theirs changed the key (it is not needed then).
   */
  def joinedSchema(layout: TableLayout): StructType = {
    val values = layout.nonKeyColumns.map(layout.physicalSchema(_))
    def v(prefix: String, f: StructField) = StructField(prefix + f.name, f.dataType, nullable = true)
    StructType(layout.primaryKey.map(k => layout.physicalSchema(k).copy(nullable = true)) ++
      values.flatMap(f => Seq(v("b_", f), v("t_", f))) ++ Seq(StructField("_ct", StringType, nullable = false)) ++
      values.map(v("o_", _)) :+ StructField("_co", StringType, nullable = true))
  }

  /**
   * [[joinedSchema]]'s rows from the two diffs: only keys theirs changed can change the target; the
   * target's diff is usually small (what changed since the base), so with `broadcastOurs` it is broadcast
   * and the join needs no shuffle.
   */
  def joined(layout: TableLayout, ours: DataFrame, theirs: DataFrame, broadcastOurs: Boolean): DataFrame = {
    val keys = layout.primaryKey
    val values = layout.nonKeyColumns
    val o0 = ours.select(keys.map(k => col(k).as(s"ok_$k")) ++ values.map(v => col(s"${v}_after").as(s"o_$v")) :+
      col(TableDiff.ChangeColumn).as("_co"): _*)
    val t0 = theirs.select(keys.map(col) ++ values.flatMap(v => Seq(col(s"${v}_before").as(s"b_$v"),
      col(s"${v}_after").as(s"t_$v"))) :+ col(TableDiff.ChangeColumn).as("_ct"): _*)
    t0.join(if (broadcastOurs) broadcast(o0) else o0, keys.map(k => col(k) <=> col(s"ok_$k")).reduce(_ && _), "left_outer")
      .select(joinedSchema(layout).fieldNames.toSeq.map(col): _*)
  }

  /**
   * The merged changes to apply to the target, in the DIFF layout (upserts and deletes), and the
   * conflicts (key columns, column, base, ours, theirs, kind), from the joined sides `j`
   * ([[joinedSchema]]); see [[Rules]].
   */
  def merged(layout: TableLayout, j: DataFrame, strategy: Strategy, oursLacks: Set[String] = Set.empty,
             theirsLacks: Set[String] = Set.empty): (DataFrame, DataFrame) = {
    val rules = Rules(layout, strategy, oursLacks, theirsLacks)
    (rules.changes(j), rules.conflicts(j))
  }

  /**
   * [[merged]] of joined rows on the driver ([[joinedSchema]], a small merge), when none of them conflicts: the
   * changes in the DIFF layout ([[TableLayout.diffSchema]]), computed by the same rules without planning a query.
   * None when a row conflicts: the caller takes [[merged]], which reports the conflicts and settles them.
   */
  def mergedLocal(spark: SparkSession, layout: TableLayout, rows: IndexedSeq[InternalRow],
                  strategy: Strategy): Option[(StructType, IndexedSeq[InternalRow])] = {
    val key = (layout, strategy, spark.sessionState.conf.caseSensitiveAnalysis)
    val (conflicting, changes) = Option(boundLocal.get(key)).getOrElse {
      val rules = Rules(layout, strategy, Set.empty, Set.empty)
      val schema = joinedSchema(layout)
      val bound = (LocalRules.of(spark, schema, "merge conflicts")(_.filter(rules.conflicting)),
        LocalRules.of(spark, schema, "merged changes")(j => rules.changes(j)
          .select(layout.diffSchema.fieldNames.toSeq.map(col): _*)))
      if (boundLocal.size >= 256) boundLocal.clear()
      boundLocal.put(key, bound)
      bound
    }
    Option.when(!conflicting(rows.iterator).hasNext)((changes.schema, changes(rows.iterator).toIndexedSeq))
  }

  /** [[mergedLocal]]'s bound rules by shape (analyzing them costs a small merge more than applying them). */
  private val boundLocal = new java.util.concurrent.ConcurrentHashMap[(TableLayout, Strategy, Boolean), (LocalRules, LocalRules)]()

  /**
   * The row rules over the joined sides ([[joinedSchema]]), defined once for both the distributed and the driver
   * path. Conflicting cells and rows are settled by `strategy` in the changes (by ours for [[Strategy.Fail]],
   * whose changes are then not used). `oursLacks` / `theirsLacks`: columns the other side added
   * ([[SchemaMerge]]); such a cell is unchanged on the side that lacks it (its diff holds nulls there), so it
   * takes the other side's value and never conflicts.
   */
  private final case class Rules(layout: TableLayout, strategy: Strategy, oursLacks: Set[String], theirsLacks: Set[String]) {
    private val keys = layout.primaryKey
    private val values = layout.nonKeyColumns
    private def b(v: String) = col(s"b_$v"); private def o(v: String) = col(s"o_$v"); private def t(v: String) = col(s"t_$v")
    /** The same value (maps too: [[versioned.spark.format.Columns.same]]). */
    private def same(x: Column, y: Column, v: String) = versioned.spark.format.Columns.same(x, y, layout.physicalSchema(v).dataType)
    private val (co, ct) = (col("_co"), col("_ct"))
    private implicit val logic: ColumnLogic.type = ColumnLogic
    private val both = co.isNotNull
    // the kernel's rule (ThreeWayRule), over columns
    private val rowConflict = both && ThreeWayRule.rowConflict(co === "delete", ct === "delete")
    private val cellwise = both && co =!= "delete" && ct =!= "delete"
    private def cellConflict(v: String): Column = if (oursLacks(v) || theirsLacks(v)) lit(false)
      else cellwise && ThreeWayRule.cellConflict(co === "insert", same(b(v), o(v), v), same(b(v), t(v), v), same(o(v), t(v), v))
    private val anyCell = values.map(cellConflict).foldLeft(lit(false))(_ || _)
    private val takeTheirs = strategy == Strategy.Theirs

    /** True for a joined row that conflicts (the whole row, or some cell). */
    val conflicting: Column = rowConflict || (cellwise && anyCell)

    def changes(j: DataFrame): DataFrame = {
      def merged(v: String): Column =
        if (oursLacks(v)) t(v) else if (theirsLacks(v)) o(v)
        else when(ThreeWayRule.takesTheirs(cellConflict(v), same(b(v), o(v), v), takeTheirs), t(v)).otherwise(o(v))
      val changedFromOurs = values.filterNot(theirsLacks).map(v => !same(merged(v), o(v), v)).foldLeft(lit(false))(_ || _)
      val kind = when(!both, when(ct === "delete", lit(ChangeKind.Delete)).otherwise(lit(ChangeKind.Upsert)))
        .when(rowConflict, if (takeTheirs) when(ct === "delete", lit(ChangeKind.Delete)).otherwise(lit(ChangeKind.Upsert))
          else lit(null))
        .when(cellwise && changedFromOurs, lit(ChangeKind.Upsert))
      val rowValue = (v: String) => when(!both || rowConflict, t(v)).otherwise(merged(v))
      j.withColumn(ChangeColumn, kind.cast(ByteType)).filter(col(ChangeColumn).isNotNull)
        .select(keys.map(col) ++ values.map(v => when(col(ChangeColumn) === ChangeKind.Delete, lit(null)
          .cast(layout.physicalSchema(v).dataType)).otherwise(rowValue(v)).as(v)) :+ col(ChangeColumn): _*)
    }

    def conflicts(j: DataFrame): DataFrame = {
      def row(prefix: String, present: Column): Column =
        when(present, to_json(struct(values.map(v => col(s"$prefix$v").as(v)): _*)))
      val rows = j.filter(rowConflict).select(keys.map(col) ++ Seq(lit(null).cast(StringType).as("column"),
        row("b_", lit(true)).as("base"), row("o_", co =!= "delete").as("ours"), row("t_", ct =!= "delete").as("theirs"),
        lit("delete").as("kind")): _*)
      val cells = j.filter(cellwise && anyCell).select(keys.map(col) :+ explode(filter(array(values.map { v =>
        val dt = layout.physicalSchema(v).dataType
        when(cellConflict(v), struct(lit(v).as("column"), when(co === "insert", lit(null).cast(StringType))
          .otherwise(text(b(v), dt)).as("base"), text(o(v), dt).as("ours"), text(t(v), dt).as("theirs"),
          when(co === "insert", lit("insert")).otherwise(lit("update")).as("kind")))
      }: _*), _.isNotNull)).as("_c"): _*).select(keys.map(col) ++ ConflictColumns.map(c => functions.col("_c").getField(c).as(c)): _*)
      rows.select(keys.map(col) ++ ConflictColumns.map(col): _*).unionByName(cells)
    }
  }

  /**
   * Key-less tables: per distinct row, the copies theirs added are added and the copies theirs removed
   * beyond those ours removed too are removed. `current` is the target's rows (with `_vdup`).
   */
  def keyless(layout: TableLayout, ours: DataFrame, theirs: DataFrame, current: DataFrame): DataFrame = {
    val cols = layout.schema.fieldNames.toSeq
    def counted(d: DataFrame, p: String) = d.groupBy(cols.map(col): _*).agg(
      sum(when(col(TableDiff.ChangeColumn) === "insert", 1L).otherwise(0L)).as(s"${p}add"),
      sum(when(col(TableDiff.ChangeColumn) === "delete", 1L).otherwise(0L)).as(s"${p}rem"))
    val t = counted(theirs, "t")
    val o = counted(ours, "o").select(cols.map(c => col(c).as(s"o_$c")) :+ col("orem"): _*)
    val delta = t.join(o, cols.map(c => col(c) <=> col(s"o_$c")).reduce(_ && _), "left_outer")
      .select(cols.map(col) :+ (col("tadd") - greatest(lit(0L), col("trem") - coalesce(col("orem"), lit(0L)))).as("_d"): _*)
      .filter(col("_d") =!= 0)
    val now = current.join(delta.select(cols.map(c => col(c).as(s"d_$c")): _*),
      cols.map(c => col(c) <=> col(s"d_$c")).reduce(_ && _), "left_semi")
    val counts = now.groupBy(cols.map(col): _*).agg(count(lit(1)).as("_n")).select(cols.map(c => col(c).as(s"n_$c")) :+ col("_n"): _*)
    val desired = delta.join(counts, cols.map(c => col(c) <=> col(s"n_$c")).reduce(_ && _), "left_outer")
      .withColumn("_want", coalesce(col("_n"), lit(0L)) + col("_d")).filter(col("_want") > 0)
      .withColumn("_i", explode(sequence(lit(1L), col("_want")))).select(cols.map(col): _*)
    ChangeSets.overwriteHidden(desired, now, layout)
  }

  /** A value as conflict text: atomic values cast to string, nested ones as JSON. */
  private def text(c: Column, dt: DataType): Column = dt match {
    case _: StructType | _: ArrayType | _: MapType => to_json(c)
    case _ => c.cast(StringType)
  }
}
