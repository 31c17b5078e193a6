package versioned.spark.rowlevel

import scala.jdk.CollectionConverters._
import org.apache.spark.sql.{Column, DataFrame, Row, SparkSession}
import org.apache.spark.sql.connector.write.RowLevelOperation.Command
import org.apache.spark.sql.functions._
import org.apache.spark.sql.types._
import versioned.core.{ChangeKind, DataValidationException, ErrorClass}
import versioned.spark.format.TableLayout
import versioned.spark.format.ChangeColumns
import versioned.spark.session.VersionedOptions.{ChangeColumn, DupColumn, RowIdColumn}
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.expressions.{BoundReference, EqualNullSafe, RowOrdering}
import versioned.core.format.ChangeRule
import versioned.spark.write.{ChangeSets, LocalCommit, StagedInput, Validation}

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
  /** Prefix of the old non-key values of an update or delete (`_vbefore`, when the operation read it). */
  val Before = "b_"
  /** Whether a staged row carries the old values of its old key (`b_*`). */
  val KnownColumn = "_vknown"

  def verb(cmd: Command): String = cmd match {
    case Command.DELETE => "delete from"
    case Command.UPDATE => "update"
    case Command.MERGE => "merge into"
    case other => other.toString.toLowerCase
  }

  /** The statement's keyword, as errors name it: DELETE, UPDATE, MERGE. */
  private def keyword(cmd: Command): String = verb(cmd).split(' ').head.toUpperCase

  private def kind(k: Byte): Column = ChangeColumns.kind(k)
  /** A top-level column, whatever characters its name has. */
  private def c(name: String): Column = col("`" + name.replace("`", "``") + "`")
  private def op: Column = col(OpColumn)
  private def inDiffLayout(df: DataFrame, layout: TableLayout): DataFrame =
    df.select(layout.diffSchema.fieldNames.map(c).toIndexedSeq: _*)

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
        .toSeq.map(_.get(0)).filter(_ != null).map(versioned.spark.format.Values.fromFilter(_, f.dataType))
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
    val rows = staged.filter(op === ChangeKind.Delete).select(ids: _*)
    // a keyed table's deletes by key (its value columns are nulls, of types that may have no equality: maps)
    inDiffLayout((if (layout.hidden) rows.distinct() else rows.dropDuplicates(layout.primaryKey))
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
    resolve(touched.join(cur, keys.map(k => c(k) === c(s"c_$k")).reduce(_ && _), "left_outer"), layout)
  }

  /**
   * A touched key's row: the key columns, what the operation writes there (`w_*` values, `_vw` true when it
   * writes a row) and what the table holds (`c_*` values, `_vc` true when it has a row), absent values null.
   * [[resolve]] reads it as columns of a frame, [[localChanges]] by position ([[Touched]]).
   */
  private final case class Touched(layout: TableLayout) {
    val (nk, nv) = (layout.primaryKey.size, layout.nonKeyColumns.size)
    def written(r: Row): Boolean = r.get(nk + nv) != null
    def held(r: Row): Boolean = r.get(nk + nv + 1 + nv) != null
    def writtenValues(r: Row): Seq[Any] = (nk until nk + nv).map(r.get)
    def heldValues(r: Row): Seq[Any] = (nk + nv + 1 until nk + 2 * nv + 1).map(r.get)
    def row(key: Seq[Any], w: Option[Seq[Any]], t: Option[Seq[Any]]): Row = {
      val nulls = Seq.fill(nv)(null)
      Row.fromSeq(key ++ w.getOrElse(nulls) ++ Seq(present(w)) ++ t.getOrElse(nulls) ++ Seq(present(t)))
    }
    private def present(o: Option[_]): Any = if (o.isDefined) true else null
    def schema: StructType = {
      val s = layout.physicalSchema
      def valueFields(prefix: String) = layout.nonKeyColumns.map(v => StructField(prefix + v, s(v).dataType, nullable = true))
      StructType(layout.primaryKey.map(s(_)) ++ valueFields("w_") ++ Seq(StructField("_vw", BooleanType)) ++
        valueFields("c_") :+ StructField("_vc", BooleanType))
    }
  }

  /** The change of each touched key of a keyed table ([[Touched]]) by the kernel's change rule ([[ChangeRule]]). */
  private def resolve(touched: DataFrame, layout: TableLayout): DataFrame = {
    val keys = layout.primaryKey
    val values = layout.nonKeyColumns
    val same = values.map(v => versioned.spark.format.Columns.same(c(s"w_$v"), c(s"c_$v"), layout.physicalSchema(v).dataType)).foldLeft(lit(true))(_ && _)
    val change = ChangeColumns.change(col("_vc").isNotNull, col("_vw").isNotNull, same)
    inDiffLayout(touched.select(keys.map(c) ++ values.map(v => c(s"w_$v").as(v)) :+ change.as(ChangeColumn): _*)
      .filter(c(ChangeColumn).isNotNull), layout)
  }

  /**
   * Whether [[computeLocal]] applies to a keyed table: its key values compare as external objects the way
   * Spark compares them (integral, string of the default collation, date, timestamp, boolean, decimal).
   */
  def local(layout: TableLayout): Boolean = !layout.hidden && layout.keyTypes.forall {
    case ByteType | ShortType | IntegerType | LongType | DateType | TimestampType | TimestampNTZType | BooleanType => true
    case _: DecimalType => true
    case s: StringType => s == StringType
    case _ => false
  }

  /**
   * [[compute]] of an UPDATE or MERGE on a keyed table ([[local]]) whose staged rows (`stagedSchema`) and the
   * table rows of their keys (`current`, in the table's columns) are on the driver: the same validation and
   * the same change rule, with the rows paired by key in hash maps instead of joins, so no Spark job runs.
   * The result is the changes as rows on the driver (DIFF layout): decided row by row ([[localChanges]]) when
   * every value column is orderable, else by [[resolve]] over a frame of the local rows, evaluated on the driver.
   */
  def computeLocal(spark: SparkSession, staged: Seq[Row], stagedSchema: StructType, current: Seq[Row],
                   layout: TableLayout, cmd: Command): StagedInput = {
    val keys = layout.primaryKey
    val values = layout.nonKeyColumns
    final case class Written(key: Seq[Any], values: Seq[Any], inPlace: Boolean)
    val removed = scala.collection.mutable.LinkedHashSet.empty[Seq[Any]]
    val written = Seq.newBuilder[Written]
    staged.foreach { r =>
      val op = r.getAs[Byte](OpColumn)
      val (oldKey, newKey) = (at(r, keys.map(Old + _)), at(r, keys.map(New + _)))
      val moved = oldKey != newKey // null-safe, as `<=>`
      if (op == ChangeKind.Delete || (op == ChangeKind.Update && moved)) removed += oldKey
      if (op != ChangeKind.Delete) written += Written(newKey, at(r, values.map(New + _)), op == ChangeKind.Update && !moved)
    }
    val writes = written.result()
    val what = keyword(cmd)
    if (writes.exists(_.key.contains(null))) throw Validation.nullKey(keys, Some(what))
    writes.groupBy(_.key).find(_._2.size > 1).foreach { case (k, ws) => throw Validation.duplicateKey(keys, ws.size, k, Some(what)) }
    // the table's rows: those looked up, and those whose old values the operation read (the same version)
    val table = current.map(r => at(r, keys) -> at(r, values)).toMap ++ knownRows(staged).map {
      r => at(r, keys.map(Old + _)) -> at(r, values.map(Before + _))
    }
    writes.find(w => !w.inPlace && table.contains(w.key) && !removed.contains(w.key))
      .foreach(w => throw keyExists(what, keys, w.key))
    val byKey = writes.map(w => w.key -> w.values).toMap
    val shape = Touched(layout)
    val touched: Seq[Row] = (writes.map(_.key) ++ removed.filterNot(byKey.contains)).map(k => shape.row(k, byKey.get(k), table.get(k)))
    if (values.forall(v => RowOrdering.isOrderable(layout.physicalSchema(v).dataType)))
      return StagedInput.local(layout.diffSchema, localChanges(touched, shape))
    val changes = resolve(spark.createDataFrame(touched.asJava, shape.schema), layout)
    StagedInput(changes, Some(LocalCommit.collect(changes)))
  }

  /**
   * What [[resolve]] computes, for touched rows on the driver (external values): the change of each key by the
   * kernel's rule ([[ChangeRule.change]]), its values compared null-safely as Spark's `<=>` compares them (the same
   * expression, interpreted: -0.0 equals 0.0, NaN equals NaN, collations apply), as rows in the DIFF layout. Keys
   * without a change give no row.
   */
  private def localChanges(touched: Seq[Row], shape: Touched): IndexedSeq[InternalRow] = {
    val layout = shape.layout
    val keys = layout.primaryKey
    val values = layout.nonKeyColumns
    val schema = layout.physicalSchema
    val (nk, nv) = (shape.nk, shape.nv)
    val types = values.map(schema(_).dataType)
    val pair = CatalystTypeConverters.createToCatalystConverter(
      StructType((types ++ types).zipWithIndex.map { case (t, i) => StructField(s"v$i", t, nullable = true) }))
    val same = types.zipWithIndex.map { case (t, i) => EqualNullSafe(BoundReference(i, t, nullable = true), BoundReference(nv + i, t, nullable = true)) }
    val diff = layout.diffSchema
    val toDiff = CatalystTypeConverters.createToCatalystConverter(diff)
    // the DIFF columns in order: a key, a value (the written one), or the change
    val source: Seq[Either[Int, Int]] = diff.fieldNames.toSeq.dropRight(1).map { n =>
      val k = keys.indexOf(n); if (k >= 0) Left(k) else Right(values.indexOf(n))
    }
    touched.flatMap { r =>
      lazy val unchanged = {
        val both = pair(Row.fromSeq(shape.writtenValues(r) ++ shape.heldValues(r))).asInstanceOf[InternalRow]
        same.forall(_.eval(both) == true)
      }
      ChangeRule.change(before = shape.held(r), after = shape.written(r), same = unchanged).map { kind =>
        val cols = source.map { case Left(k) => r.get(k); case Right(v) => r.get(nk + v) }
        toDiff(Row.fromSeq(cols :+ kind)).asInstanceOf[InternalRow]
      }
    }.toIndexedSeq
  }

  /** The values of the named fields of a row. */
  private def at(r: Row, names: Seq[String]): Seq[Any] = names.map(n => r.get(r.fieldIndex(n)))

  /** Staged updates and deletes that carry the old values of their old key. */
  private def knownRows(staged: Seq[Row]): Seq[Row] =
    staged.filter(r => r.schema.fieldNames.contains(KnownColumn) && r.getAs[Boolean](KnownColumn))

  /**
   * The values of the first key column whose table rows [[computeLocal]] needs and the staged rows do not carry
   * (keys of rows written in place of no row the operation read: inserts, updates that move a key, and any
   * update or delete without old values), for a key lookup. Empty when every key the operation writes or
   * removes was read by it, as in a MERGE or UPDATE that changes only existing rows in place.
   */
  def unknownKeys(staged: Seq[Row], layout: TableLayout): Seq[Any] = {
    val keys = layout.primaryKey
    def key(r: Row, prefix: String): Seq[Any] = at(r, keys.map(prefix + _))
    val known = knownRows(staged).map(key(_, Old)).toSet
    staged.flatMap { r =>
      val op = r.getAs[Byte](OpColumn)
      val removedKey = Option.when(op != ChangeKind.Insert)(key(r, Old)).filterNot(known)
      val writtenKey = Option.when(op != ChangeKind.Delete)(key(r, New)).filterNot(known)
      removedKey.toSeq ++ writtenKey
    }.map(_.head).distinct
  }

  private def validate(written: DataFrame, removed: DataFrame, current: DataFrame, keys: Seq[String], cmd: Command): Unit = {
    val what = keyword(cmd)
    Validation.keys(written, keys, Some(what))
    val clash = written.filter(!col("_vinplace")).select(keys.map(c): _*)
      .join(current.select(keys.map(c): _*), keys, "left_semi")
      .join(removed, keys, "left_anti").limit(1).collect()
    if (clash.nonEmpty) throw keyExists(what, keys, keys.indices.map(clash.head.get))
  }

  /** The error for an operation that would write a key another row of the table keeps. */
  private def keyExists(what: String, keys: Seq[String], values: Seq[Any]): DataValidationException =
    new DataValidationException(ErrorClass.KeyExists, s"$what would write key (" +
      keys.zip(values).map { case (k, v) => s"$k=$v" }.mkString(", ") + "), which another row of the table already has. " +
      "Nothing was committed.")

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
