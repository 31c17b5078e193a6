package versioned.spark.rowlevel

import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.connector.write.RowLevelOperation.Command
import org.apache.spark.sql.functions._
import org.apache.spark.sql.types.ByteType
import versioned.core.{ChangeKind, DataValidationException, ErrorClass}
import versioned.spark.TableLayout
import versioned.spark.VersionedOptions.{ChangeColumn, DupColumn, RowIdColumn}
import versioned.spark.write.{ChangeSets, Validation}

/**
 * Turns staged delta rows (operation, old row id `o_*`, new row `n_*`) into conflated changes in the
 * DIFF layout, one per key, checking first that the result is a valid table: no null or duplicate
 * keys, and no new key that collides with a row the operation leaves in place.
 *
 *  - keyed tables: an update that keeps its key is an Update (dropped when the values are unchanged);
 *    one that changes its key removes the old key and writes the new one; a key removed and written
 *    by the same operation becomes one Update.
 *  - key-less tables: a delete removes one identity (row + `_vdup`); an update that changes values
 *    removes the old identity and inserts the new row under a fresh `_vdup` ordinal.
 */
private[rowlevel] object DeltaChanges {
  val OpColumn = "_vop"
  val Old = "o_"
  val New = "n_"

  def verb(cmd: Command): String = cmd match {
    case Command.DELETE => "delete from"
    case Command.UPDATE => "update"
    case Command.MERGE => "merge into"
    case other => other.toString.toLowerCase
  }

  private def kind(k: Byte): Column = lit(k).cast(ByteType)
  /** A top-level column, whatever characters its name has. */
  private def c(name: String): Column = col("`" + name.replace("`", "``") + "`")
  private def op: Column = col(OpColumn)
  private def inDiffLayout(df: DataFrame, layout: TableLayout): DataFrame =
    df.select(layout.diffSchema.fieldNames.map(col).toIndexedSeq: _*)

  /**
   * The rows of `current` that staged changes can concern: same key (keyed tables) or same values as
   * a row being added (key-less tables, for duplicate ordinals). One scan of the table, no shuffle of
   * it when the changes are `small` enough to broadcast; everything after works on this subset.
   */
  def touchedRows(staged: DataFrame, current: DataFrame, layout: TableLayout, small: Boolean): DataFrame = {
    def maybeBroadcast(df: DataFrame) = if (small) broadcast(df) else df
    if (layout.hidden) {
      val cols = layout.schema.fieldNames.toSeq
      val probe = maybeBroadcast(staged.filter(op =!= ChangeKind.Delete)
        .select(cols.map(x => c(New + x).as(s"p_$x")): _*).distinct())
      current.join(probe, cols.map(x => c(x) <=> c(s"p_$x")).reduce(_ && _), "left_semi")
    } else {
      val keys = layout.primaryKey
      val probe = maybeBroadcast(staged.select(keys.map(k => c(Old + k).as(k)): _*)
        .union(staged.select(keys.map(k => c(New + k).as(k)): _*)).distinct())
      current.join(probe, keys, "left_semi")
    }
  }

  /**
   * The canonical values of the first key column that staged changes name (old and new keys), for a
   * key lookup of the rows they concern; None for key-less tables and keys that cannot be looked up.
   */
  def stagedKeys(staged: DataFrame, layout: TableLayout): Option[Seq[Any]] =
    versioned.spark.read.KeyLookup.keyField(layout).flatMap { f =>
      val vs = staged.select(c(Old + f.name).as("k")).union(staged.select(c(New + f.name).as("k"))).distinct().collect()
        .toSeq.map(_.get(0)).filter(_ != null).map(versioned.spark.Values.fromFilter(_, f.dataType))
      Option.when(vs.forall(_.isDefined))(vs.flatten) // a value that cannot be compared: no lookup
    }

  /**
   * `current` may be restricted to [[touchedRows]]: rows no change concerns do not affect the result.
   * A DELETE needs no table rows at all (`current` is not used): every staged row id was read from it.
   */
  def compute(staged: DataFrame, current: => DataFrame, layout: TableLayout, cmd: Command): DataFrame =
    if (cmd == Command.DELETE) deletes(staged, layout)
    else if (layout.hidden) keyless(staged, current, layout)
    else keyed(staged, current, layout, cmd)

  private def deletes(staged: DataFrame, layout: TableLayout): DataFrame = {
    val ids =
      if (layout.hidden) (layout.schema.fieldNames.toSeq :+ DupColumn).map(x => c(Old + RowIdColumn).getField(x).as(x))
      else layout.primaryKey.map(k => c(Old + k).as(k)) ++
        layout.nonKeyColumns.map(v => lit(null).cast(layout.physicalSchema(v).dataType).as(v))
    inDiffLayout(staged.filter(op === ChangeKind.Delete).select(ids: _*).distinct()
      .withColumn(ChangeColumn, kind(ChangeKind.Delete)), layout)
  }

  private def keyed(staged: DataFrame, current: DataFrame, layout: TableLayout, cmd: Command): DataFrame = {
    val keys = layout.primaryKey
    val values = layout.nonKeyColumns
    val keyMoved = keys.map(k => !(c(Old + k) <=> c(New + k))).reduce(_ || _)
    val removed = staged.filter(op === ChangeKind.Delete || (op === ChangeKind.Update && keyMoved))
      .select(keys.map(k => c(Old + k).as(k)): _*).distinct()
    val written = staged.filter(op =!= ChangeKind.Delete)
      .select(keys.map(k => c(New + k).as(k)) ++ values.map(v => c(New + v).as(v)) :+
        (op === ChangeKind.Update && !keyMoved).as("_vinplace"): _*)
    validate(written, removed, current, keys, cmd)

    val w = written.select(keys.map(k => c(k).as(s"w_$k")) ++ values.map(v => c(v).as(s"w_$v")) :+ lit(true).as("_vw"): _*)
    val r = removed.select(keys.map(k => c(k).as(s"r_$k")) :+ lit(true).as("_vr"): _*)
    val touched = w.join(r, keys.map(k => c(s"w_$k") === c(s"r_$k")).reduce(_ && _), "full_outer")
      .select(keys.map(k => coalesce(c(s"w_$k"), c(s"r_$k")).as(k)) ++ values.map(v => c(s"w_$v")) ++
        Seq(col("_vw"), col("_vr")): _*)
    val cur = current.select(keys.map(k => c(k).as(s"c_$k")) ++ values.map(v => c(v).as(s"c_$v")) :+ lit(true).as("_vc"): _*)
    val j = touched.join(cur, keys.map(k => c(k) === c(s"c_$k")).reduce(_ && _), "left_outer")
    val same = values.map(v => c(s"w_$v") <=> c(s"c_$v")).foldLeft(lit(true))(_ && _)
    val change = when(col("_vw").isNull && col("_vc").isNotNull, kind(ChangeKind.Delete))
      .when(col("_vw").isNotNull && col("_vc").isNull, kind(ChangeKind.Insert))
      .when(col("_vw").isNotNull && !same, kind(ChangeKind.Update))
    inDiffLayout(j.select(keys.map(c) ++ values.map(v => c(s"w_$v").as(v)) :+ change.as(ChangeColumn): _*)
      .filter(c(ChangeColumn).isNotNull), layout)
  }

  private def render(keys: Seq[String], row: org.apache.spark.sql.Row): String =
    keys.zipWithIndex.map { case (k, i) => s"$k=${row.get(i)}" }.mkString(", ")

  private def validate(written: DataFrame, removed: DataFrame, current: DataFrame, keys: Seq[String], cmd: Command): Unit = {
    val what = verb(cmd).split(' ').head.toUpperCase
    Validation.keys(written, keys, Some(what))
    val clash = written.filter(!col("_vinplace")).select(keys.map(c): _*)
      .join(current.select(keys.map(c): _*), keys, "left_semi")
      .join(removed, keys, "left_anti").limit(1).collect()
    if (clash.nonEmpty) throw new DataValidationException(ErrorClass.KeyExists,
      s"$what would write key (${render(keys, clash.head)}), which another row of the table already has. " +
        "Nothing was committed.")
  }

  private def keyless(staged: DataFrame, current: DataFrame, layout: TableLayout): DataFrame = {
    val cols = layout.schema.fieldNames.toSeq
    val unchanged = cols.map(x => c(New + x) <=> c(Old + RowIdColumn).getField(x)).foldLeft(lit(true))(_ && _)
    val gone = staged.filter(op === ChangeKind.Delete || (op === ChangeKind.Update && !unchanged))
      .select((cols :+ DupColumn).map(x => c(Old + RowIdColumn).getField(x).as(x)): _*).distinct()
      .withColumn(ChangeColumn, kind(ChangeKind.Delete))
    val added = staged.filter(op === ChangeKind.Insert || (op === ChangeKind.Update && !unchanged))
      .select(cols.map(x => c(New + x).as(x)): _*)
    inDiffLayout(gone, layout).unionByName(ChangeSets.appendHidden(added, Some(current), layout))
  }
}
