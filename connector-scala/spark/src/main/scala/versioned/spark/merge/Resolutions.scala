package versioned.spark.merge

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.functions.{col => _, _}
import org.apache.spark.sql.types.{BooleanType, ByteType}
import versioned.core._
import versioned.spark.format.Columns.col
import versioned.spark.format.TableLayout
import versioned.spark.write.{ChangeSets, Validation}
import versioned.spark.session.VersionedOptions.ChangeColumn

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
    plans.map {
      case r @ TablePlan.Rows(t, layout, changes, Some(conflicts), _, _, _) if resolutions.contains(t) =>
        settle(r, layout, changes, conflicts, resolutions(t))
      case other => other
    }
  }

  private def settle(r: TablePlan.Rows, layout: TableLayout, changes: DataFrame, conflicts: DataFrame,
                     given: DataFrame): TablePlan.Rows = {
    val cols = layout.schema.fieldNames.toSeq
    val extra = given.columns.filterNot(c => cols.contains(c) || c == MergeOptions.DeleteColumn)
    val missing = cols.filterNot(given.columns.contains)
    if (extra.nonEmpty || missing.nonEmpty) throw new SchemaMismatchException(s"The resolutions of '${r.table}' must " +
      s"have the table's columns (${cols.mkString(", ")}) and optionally a boolean ${MergeOptions.DeleteColumn}; " +
      s"${if (missing.nonEmpty) s"missing ${missing.mkString(", ")}" else ""}${if (extra.nonEmpty) s" unknown ${extra.mkString(", ")}" else ""}. " +
      "Nothing was committed.")
    if (given.columns.contains(MergeOptions.DeleteColumn) && given.schema(MergeOptions.DeleteColumn).dataType != BooleanType)
      throw new SchemaMismatchException(s"${MergeOptions.DeleteColumn} of the resolutions of '${r.table}' must be boolean.")
    val keys = layout.primaryKey
    Validation.keys(given, keys, Some(s"The resolutions of '${r.table}'"))
    val givenKeys = given.select(keys.map(k => col(k).as(s"_r_$k")): _*)
    def without(df: DataFrame, other: DataFrame) =
      df.join(other, keys.map(k => col(k) <=> col(s"_r_$k")).reduce(_ && _), "left_anti")
    val stray = without(given, conflicts.select(keys.map(k => col(k).as(s"_r_$k")): _*)).limit(1).collect()
    if (stray.nonEmpty) throw Errors.invalidOption(s"The resolutions of '${r.table}' settle key " +
      s"(${keys.map(k => s"$k=${stray.head.getAs[Any](k)}").mkString(", ")}), which is not in conflict. Pass rows " +
      "only for conflicting keys. Nothing was committed.")
    val deleteColumn = Option.when(given.columns.contains(MergeOptions.DeleteColumn))(MergeOptions.DeleteColumn)
    val typed = given.select(layout.schema.fields.toSeq.map(f => col(f.name).cast(f.dataType).as(f.name)) ++ deleteColumn.map(col): _*)
    val asChanges = ChangeSets.byKey(typed, deleteColumn, layout)
    r.copy(changes = without(changes, givenKeys).unionByName(asChanges), conflicts = Some(without(conflicts, givenKeys)))
  }
}
