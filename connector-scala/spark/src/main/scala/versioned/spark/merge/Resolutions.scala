package versioned.spark.merge

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.functions.{col => _, _}
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection}
import org.apache.spark.sql.types.{BooleanType, StructType}
import versioned.core._
import versioned.spark.format.Columns.col
import versioned.spark.format.{SparkKeys, TableLayout}
import versioned.spark.write.{ChangeSets, LocalCommit, LocalRules, StagedInput, Validation}

/**
 * Rows a user passes to settle a merge's conflicts: per table, rows with the table's columns (and an
 * optional boolean `_delete`); each row's key must be in conflict. A settled key takes the given row (or
 * is deleted) and is no longer a conflict; keys not settled stay conflicts.
 */
private[merge] object Resolutions {
  def apply(spark: SparkSession, plans: Seq[TablePlan], resolutions: Map[String, DataFrame]): Seq[TablePlan] = {
    val byTable = plans.map(p => p.table -> p).toMap
    resolutions.keys.toSeq.sorted.foreach { t =>
      byTable.get(t) match {
        case Some(TablePlan.Rows(_, _, _, Some(_), _, _, _)) => ()
        case Some(w: TablePlan.Whole) => throw Errors.invalidOption(s"Table '$t' is in a ${w.kind} conflict (the whole " +
          "table); it cannot be settled row by row. Use strategy 'ours' or 'theirs'. Nothing was committed.")
        case _ => throw Errors.invalidOption(s"resolutions name table '$t', which has no conflicts in this merge. " +
          "Nothing was committed.")
      }
    }
    val maxLocal = versioned.spark.session.Settings.of(spark).localCommitMaxRows
    plans.map {
      case r @ TablePlan.Rows(t, layout, changes, Some(conflicts), _, _, _) if resolutions.contains(t) =>
        val given = resolutions(t)
        checkColumns(t, layout, given.schema)
        // a small merge (its rows on the driver) settled by a few rows: settled on the driver, no query planned
        val small = if (r.local) LocalCommit.collectSmall(given, maxLocal) else None
        small.fold(settle(r, layout, changes, conflicts, given))(rows => settleLocal(spark, r, layout, given.schema, rows))
      case other => other
    }
  }

  /** The resolutions of `table` have its columns and optionally a boolean [[MergeOptions.DeleteColumn]]. */
  private def checkColumns(table: String, layout: TableLayout, given: StructType): Unit = {
    val cols = layout.schema.fieldNames.toSeq
    val extra = given.fieldNames.filterNot(c => cols.contains(c) || c == MergeOptions.DeleteColumn)
    val missing = cols.filterNot(given.fieldNames.contains)
    if (extra.nonEmpty || missing.nonEmpty) throw new SchemaMismatchException(s"The resolutions of '$table' must " +
      s"have the table's columns (${cols.mkString(", ")}) and optionally a boolean ${MergeOptions.DeleteColumn}; " +
      s"${if (missing.nonEmpty) s"missing ${missing.mkString(", ")}" else ""}${if (extra.nonEmpty) s" unknown ${extra.mkString(", ")}" else ""}. " +
      "Nothing was committed.")
    if (given.fieldNames.contains(MergeOptions.DeleteColumn) && given(MergeOptions.DeleteColumn).dataType != BooleanType)
      throw new SchemaMismatchException(s"${MergeOptions.DeleteColumn} of the resolutions of '$table' must be boolean.")
  }

  /** The given rows as changes in the DIFF layout (cast to the table's types; `_delete` rows delete their key). */
  private def asChanges(given: DataFrame, layout: TableLayout): DataFrame = {
    val deleteColumn = Option.when(given.columns.contains(MergeOptions.DeleteColumn))(MergeOptions.DeleteColumn)
    val typed = given.select(layout.schema.fields.toSeq.map(f => col(f.name).cast(f.dataType).as(f.name)) ++ deleteColumn.map(col): _*)
    ChangeSets.byKey(typed, deleteColumn, layout)
  }

  private def strayKey(table: String, keys: Seq[String], values: Seq[Any]) = Errors.invalidOption(s"The resolutions " +
    s"of '$table' settle key (${keys.zip(values).map { case (k, v) => s"$k=$v" }.mkString(", ")}), which is not in " +
    "conflict. Pass rows only for conflicting keys. Nothing was committed.")

  /**
   * [[settle]] on the driver, for a small merge's plan (`r.local`: its changes and conflicts derive from rows on the
   * driver) and the `rows` given for it (of `schema`): the same rules and errors, applied to rows, with keys compared
   * in the kernel's key order (the order of the format: -0.0 and 0.0 are one key).
   */
  private def settleLocal(spark: SparkSession, r: TablePlan.Rows, layout: TableLayout, schema: StructType,
                          rows: IndexedSeq[InternalRow]): TablePlan.Rows = {
    val keys = layout.primaryKey
    val changeSchema = r.changes.schema
    val settled = LocalRules.of(spark, schema, "merge resolutions")(g =>
      asChanges(g, layout).select(changeSchema.fieldNames.toSeq.map(col): _*))
    val given = settled(rows.iterator).toIndexedSeq
    val changes = LocalCommit.collect(r.changes)
    val conflicts = LocalCommit.collect(r.conflicts.get)
    val order = SparkKeys.order(keys.map(layout.physicalSchema(_).dataType))
    implicit val ordering: Ordering[InternalRow] = (a: InternalRow, b: InternalRow) => order.compare(a, b)
    def keyOf(of: StructType): InternalRow => InternalRow = {
      val p = UnsafeProjection.create(keys.map(k => BoundReference(of.fieldIndex(k), layout.physicalSchema(k).dataType, nullable = true)))
      row => p(row).copy()
    }
    val (givenKey, conflictKey) = (keyOf(changeSchema), keyOf(r.conflicts.get.schema))
    def values(row: InternalRow) = keys.map { k =>
      val dt = layout.physicalSchema(k).dataType
      CatalystTypeConverters.convertToScala(row.get(changeSchema.fieldIndex(k), dt), dt)
    }
    val what = Some(s"The resolutions of '${r.table}'")
    given.find(g => keys.exists(k => g.isNullAt(changeSchema.fieldIndex(k)))).foreach(_ => throw Validation.nullKey(keys, what))
    val givenKeys = given.foldLeft(scala.collection.immutable.TreeMap.empty[InternalRow, Vector[InternalRow]]) { (m, g) =>
      val k = givenKey(g); m.updated(k, m.getOrElse(k, Vector.empty) :+ g) }
    givenKeys.find(_._2.size > 1).foreach { case (_, same) =>
      throw Validation.duplicateKey(keys, same.size.toLong, values(same.head), what) }
    val inConflict = scala.collection.immutable.TreeSet.from(conflicts.map(conflictKey))
    given.find(g => !inConflict(givenKey(g))).foreach(g => throw strayKey(r.table, keys, values(g)))
    def kept(rows: IndexedSeq[InternalRow], key: InternalRow => InternalRow) = rows.filterNot(row => givenKeys.contains(key(row)))
    r.copy(changes = StagedInput.local(changeSchema, kept(changes, givenKey) ++ given).frame,
      conflicts = Some(StagedInput.local(r.conflicts.get.schema, kept(conflicts, conflictKey)).frame))
  }

  private def settle(r: TablePlan.Rows, layout: TableLayout, changes: DataFrame, conflicts: DataFrame,
                     given: DataFrame): TablePlan.Rows = {
    val keys = layout.primaryKey
    Validation.keys(given, keys, Some(s"The resolutions of '${r.table}'"))
    val givenKeys = given.select(keys.map(k => col(k).as(s"_r_$k")): _*)
    def without(df: DataFrame, other: DataFrame) =
      df.join(other, keys.map(k => col(k) <=> col(s"_r_$k")).reduce(_ && _), "left_anti")
    val stray = without(given, conflicts.select(keys.map(k => col(k).as(s"_r_$k")): _*)).limit(1).collect()
    if (stray.nonEmpty) throw strayKey(r.table, keys, keys.map(stray.head.getAs[Any](_)))
    r.copy(changes = without(changes, givenKeys).unionByName(asChanges(given, layout)),
      conflicts = Some(without(conflicts, givenKeys)))
  }
}
