package versioned.spark.write

import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.expressions.Window
import org.apache.spark.sql.functions.{col => _, _}
import versioned.spark.format.Columns.col
import org.apache.spark.sql.types.{ByteType, StructType}
import versioned.core.{ChangeKind, DataValidationException, ErrorClass}
import versioned.spark.format.TableLayout
import versioned.spark.format.ChangeColumns
import versioned.spark.session.VersionedOptions.{ChangeColumn, DupColumn}

/**
 * Distributed computation of conflated changes (one action per key) as DataFrames in the DIFF
 * layout: the physical columns plus `_vchange`. Nothing here collects data to the driver.
 */
private[versioned] object ChangeSets {
  private def kind(k: Byte): Column = ChangeColumns.kind(k)

  private def inDiffLayout(df: DataFrame, layout: TableLayout): DataFrame =
    df.select(layout.diffSchema.fieldNames.map(col).toIndexedSeq: _*)

  /**
   * The identities of `rows` (physical rows of a version, `_vdup` included) as a delete carries them: a keyed
   * row's key, its other columns null; a key-less row whole. In the physical layout, without the change kind.
   */
  def deletedIdentities(rows: DataFrame, layout: TableLayout): DataFrame =
    if (layout.hidden) rows
    else rows.select(layout.physicalSchema.fields.toSeq.map { f =>
      if (layout.keyColumns.contains(f.name)) col(f.name) else lit(null).cast(f.dataType).as(f.name)
    }: _*)

  /**
   * Rows of `input` as inserts; fails if any key already exists. With `upsert` the table is not read
   * at all: every row is written as an Upsert, so the cost follows the size of the change.
   */
  def append(input: DataFrame, current: Option[DataFrame], layout: TableLayout, upsert: Boolean): DataFrame = {
    val keys = layout.primaryKey
    if (upsert) return inDiffLayout(input.withColumn(ChangeColumn, kind(ChangeKind.Upsert)), layout)
    current.foreach { cur =>
      val clash = input.select(keys.map(col): _*).join(cur.select(keys.map(col): _*), keys, "left_semi").limit(1).collect()
      if (clash.nonEmpty) throw keyExists(keys, clash.head.toSeq)
    }
    inDiffLayout(input.withColumn(ChangeColumn, kind(ChangeKind.Insert)), layout)
  }

  /** The error for an inserted row whose key (`values`: external values of the `keys`) the table holds. */
  def keyExists(keys: Seq[String], values: Seq[Any]): DataValidationException =
    new DataValidationException(ErrorClass.KeyExists,
      s"Key (${keys.zip(values).map { case (k, v) => s"$k=$v" }.mkString(", ")}) already exists in the " +
        "table. Nothing was committed. Use mode 'overwrite', or an upsert (write option upsert 'true') to update existing rows.")

  /**
   * Rows applied by key without reading the table: each row an upsert, or, with `deleteColumn`, a delete
   * of its key where that column is true. The one definition of these DIFF rows: small writes apply the
   * same expressions on the driver ([[LocalCommit]]).
   */
  def byKey(input: DataFrame, deleteColumn: Option[String], layout: TableLayout): DataFrame =
    deleteColumn.fold(append(input, None, layout, upsert = true))(upsertWithDeletes(input, _, layout))

  /** Validates a delete-marker column of the data: present and boolean. */
  def checkDeleteColumn(schema: StructType, column: String): Unit = {
    val f = schema.fields.find(_.name == column).getOrElse(throw new versioned.core.SchemaMismatchException(
      s"deleteColumn '$column' is not a column of the data (${schema.fieldNames.mkString(", ")})."))
    if (f.dataType != org.apache.spark.sql.types.BooleanType) throw new versioned.core.SchemaMismatchException(
      s"deleteColumn '$column' has type ${f.dataType.simpleString}; it must be boolean (true = delete the key).")
  }

  /**
   * A change set applied by key without reading the table (CDC apply): rows whose `marker` is true
   * delete their key, the others are upserts.
   */
  def upsertWithDeletes(input: DataFrame, marker: String, layout: TableLayout): DataFrame = {
    if (layout.hidden) throw versioned.core.Errors.unsupported(
      "deleteColumn needs a primary key: a table without one identifies rows by all their values.")
    val isDelete = coalesce(col(marker), lit(false))
    val values = layout.nonKeyColumns.map { c =>
      val dt = layout.physicalSchema(c).dataType
      when(isDelete, lit(null).cast(dt)).otherwise(col(c).cast(dt)).as(c) // a tombstone: the key, null values
    }
    inDiffLayout(input.select(layout.primaryKey.map(k => col(k).cast(layout.physicalSchema(k).dataType).as(k)) ++ values :+
      when(isDelete, kind(ChangeKind.Delete)).otherwise(kind(ChangeKind.Upsert)).as(ChangeColumn): _*), layout)
  }

  /** Keyed overwrite: full outer join by key; unchanged rows produce nothing. */
  def overwrite(input: DataFrame, current: DataFrame, layout: TableLayout): DataFrame = {
    val keys = layout.primaryKey
    val cols = keys ++ layout.nonKeyColumns
    val o = current.select(cols.map(c => col(c).as(s"o_$c")) :+ lit(true).as("_vo"): _*)
    val n = input.select(cols.map(c => col(c).as(s"n_$c")) :+ lit(true).as("_vn"): _*)
    val j = o.join(n, keys.map(k => col(s"o_$k") === col(s"n_$k")).reduce(_ && _), "full_outer")
    overwriteChanges(j, layout).filter(col(ChangeColumn).isNotNull)
  }

  /**
   * The columns [[overwriteChanges]] reads, in the order the one-pass overwrite ([[OverwriteWrite]]) binds
   * them: `o_<c>` for the key and other columns of the current row, `_vo` (true: the key is current),
   * then the same for the new row (`n_<c>`, `_vn`).
   */
  def overwriteJoinedSchema(layout: TableLayout): StructType = {
    val cols = layout.keyFirst(layout.nonKeyColumns)
    def side(p: String, flag: String) = cols.fields.map(f => f.copy(name = p + f.name, nullable = true)) :+
      org.apache.spark.sql.types.StructField(flag, org.apache.spark.sql.types.BooleanType, nullable = true)
    StructType(side("o_", "_vo") ++ side("n_", "_vn"))
  }

  /**
   * The DIFF row of each key of the pairs of current and new rows (the layout of [[overwriteJoinedSchema]]):
   * the kernel's change rule ([[versioned.core.format.ChangeRule]]; `<=>` is "the same"), `_vchange` null
   * when nothing changed.
   * The one definition of an overwrite's DIFF rows: the join above and the one-pass overwrite apply it.
   */
  def overwriteChanges(joined: DataFrame, layout: TableLayout): DataFrame = {
    val keys = layout.primaryKey
    val values = layout.nonKeyColumns
    val same = values.map(v => versioned.spark.format.Columns.same(col(s"o_$v"), col(s"n_$v"), layout.physicalSchema(v).dataType)).foldLeft(lit(true))(_ && _)
    val change = ChangeColumns.change(col("_vo").isNotNull, col("_vn").isNotNull, same)
    inDiffLayout(joined.select(keys.map(k => coalesce(col(s"n_$k"), col(s"o_$k")).as(k)) ++
      values.map(v => col(s"n_$v").as(v)) :+ change.as(ChangeColumn): _*), layout)
  }

  /** Numbers duplicates of whole rows for a key-less table: ordinals continue after existing ones. */
  def appendHidden(input: DataFrame, current: Option[DataFrame], layout: TableLayout): DataFrame = {
    val cols = layout.schema.fieldNames.toSeq
    val w = Window.partitionBy(cols.map(col): _*).orderBy(lit(1))
    val numbered = input.withColumn("_vrn", row_number().over(w) - 1)
    val withBase = current match {
      case None => numbered.withColumn("_vbase", lit(0))
      case Some(cur) =>
        val base = cur.groupBy(cols.map(col): _*).agg((max(col(DupColumn)) + 1).as("_vbase"))
          .select(cols.map(c => col(c).as(s"b_$c")) :+ col("_vbase"): _*)
        numbered.join(base, cols.map(c => col(c) <=> col(s"b_$c")).reduce(_ && _), "left_outer")
          .withColumn("_vbase", coalesce(col("_vbase"), lit(0)))
    }
    inDiffLayout(withBase.withColumn(DupColumn, (col("_vbase") + col("_vrn")).cast("int"))
      .withColumn(ChangeColumn, kind(ChangeKind.Insert)), layout)
  }

  /** Key-less overwrite: compares row multiplicities; removes the highest ordinals, appends new ones. */
  def overwriteHidden(input: DataFrame, current: DataFrame, layout: TableLayout): DataFrame = {
    val cols = layout.schema.fieldNames.toSeq
    val byRow = Window.partitionBy(cols.map(col): _*).orderBy(col(DupColumn))
    val old = current.withColumn("_vrn", row_number().over(byRow) - 1)
      .withColumn("_voc", count(lit(1)).over(Window.partitionBy(cols.map(col): _*)))
      .withColumn("_vmax", max(col(DupColumn)).over(Window.partitionBy(cols.map(col): _*)))
    val newCounts = input.groupBy(cols.map(col): _*).agg(count(lit(1)).as("_vnc"))
      .select(cols.map(c => col(c).as(s"n_$c")) :+ col("_vnc"): _*)
    val cond = cols.map(c => col(c) <=> col(s"n_$c")).reduce(_ && _)
    val deletes = old.join(newCounts, cond, "left_outer")
      .filter(col("_vrn") >= coalesce(col("_vnc"), lit(0L)))
      .withColumn(ChangeColumn, kind(ChangeKind.Delete))
    val oldStats = old.groupBy(cols.map(col): _*).agg(first("_voc").as("_voc"), first("_vmax").as("_vmax"))
      .select(cols.map(c => col(c).as(s"o_$c")) ++ Seq(col("_voc"), col("_vmax")): _*)
    val inserts = newCounts.join(oldStats, cols.map(c => col(s"n_$c") <=> col(s"o_$c")).reduce(_ && _), "left_outer")
      .withColumn("_voc", coalesce(col("_voc"), lit(0L)))
      .withColumn("_vmax", coalesce(col("_vmax"), lit(-1)))
      .filter(col("_vnc") > col("_voc"))
      .withColumn("_vi", explode(sequence(lit(1L), col("_vnc") - col("_voc"))))
      .select(cols.map(c => col(s"n_$c").as(c)) ++
        Seq((col("_vmax") + col("_vi")).cast("int").as(DupColumn), kind(ChangeKind.Insert).as(ChangeColumn)): _*)
    inDiffLayout(deletes, layout).unionByName(inDiffLayout(inserts, layout))
  }
}
