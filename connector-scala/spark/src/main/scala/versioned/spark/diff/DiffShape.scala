package versioned.spark.diff

import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.catalyst.expressions.RowOrdering
import org.apache.spark.sql.functions.lit
import org.apache.spark.sql.types._
import versioned.core.SchemaMismatchException
import versioned.spark.session.VersionedOptions
import versioned.spark.format.TableLayout
import versioned.spark.format.Columns.col

/**
 * The result shape of a diff between two versions of a table and how their rows are matched.
 *
 * `byKey`: rows are matched by `keys` (the shared key); the result is `_change`, the user key columns,
 * then `<c>_before`, `<c>_after` for each column of `values`. Otherwise rows are matched as whole rows
 * over `common` (with multiplicity); the result is `_change` ('insert' / 'delete') and every column of
 * `values`. Columns are the union of both versions' columns (`to`'s order, then columns only `from`
 * has); a column one version lacks is null on that side, and a column whose type was widened is read
 * as the wider type on both sides.
 *
 * @param exact both versions have the same columns, types and key (the diff can follow their objects)
 * @param renamed key columns renamed between the versions: new name -> old name (the older version's rows
 *                are read with their old name, matched by the key values)
 */
private[versioned] final case class DiffShape(
    byKey: Boolean,
    keys: Seq[StructField],
    values: Seq[StructField],
    common: Seq[String],
    exact: Boolean,
    renamed: Map[String, String] = Map.empty) {

  def userKeys: Seq[StructField] = keys.filterNot(_.name == VersionedOptions.DupColumn)

  def resultSchema: StructType = StructType(StructField(TableDiff.ChangeColumn, StringType) +:
    (if (byKey) userKeys.map(_.copy(nullable = true)) ++
      values.flatMap(v => Seq(StructField(s"${v.name}_before", v.dataType), StructField(s"${v.name}_after", v.dataType)))
     else values.map(_.copy(nullable = true))))

  /**
   * `df` (the physical rows of a version with layout `side`) as the aligned columns `k0..`, `v0..`: the
   * keys and values of this shape, cast to their types, null where the version lacks the column.
   */
  def project(side: TableLayout, df: DataFrame, prefix: String): DataFrame = {
    def aligned(f: StructField): Column =
      side.physicalSchema.fields.find(_.name == f.name).orElse(
        renamed.get(f.name).flatMap(old => side.physicalSchema.fields.find(_.name == old))) match {
        case Some(own) if own.dataType == f.dataType => col(own.name)
        case Some(own) => col(own.name).cast(f.dataType)
        case None => lit(null).cast(f.dataType)
      }
    df.select(keys.zipWithIndex.map { case (k, i) => aligned(k).as(s"${prefix}k$i") } ++
      values.zipWithIndex.map { case (v, i) => aligned(v).as(s"${prefix}v$i") }: _*)
  }
}

private[versioned] object DiffShape {

  /** The shape of a diff from `from` to `to` (either may be absent, not both). */
  def of(table: String, from: Option[TableLayout], to: Option[TableLayout]): DiffShape = {
    val shape = (from, to) match {
      case (Some(a), Some(b)) if same(a, b) => exact(b)
      case (Some(a), None) => exact(a)
      case (None, Some(b)) => exact(b)
      case (Some(a), Some(b)) => aligned(table, a, b)
      case (None, None) => throw new IllegalArgumentException("no version")
    }
    // new tables cannot have such names (TableLayout.create); a table of an older warehouse, or a key renamed to one
    if (shape.byKey) versioned.core.format.Reserved.diffClashes(shape.userKeys.map(_.name), shape.values.map(_.name))
      .headOption.foreach { case (k, v) => throw new SchemaMismatchException(s"Cannot diff $table: key column '$k' " +
        s"has the name of the diff's before or after column of column '$v'. Rename one of them (ALTER TABLE ... " +
        "RENAME COLUMN), then diff again.") }
    shape
  }

  def same(a: TableLayout, b: TableLayout): Boolean =
    TableLayout.sameColumns(a.schema, b.schema) && a.primaryKey == b.primaryKey && a.hidden == b.hidden

  private def exact(l: TableLayout): DiffShape =
    DiffShape(byKey = true, l.keyFields, l.nonKeyColumns.map(l.physicalSchema(_)), Nil, exact = true)

  private def aligned(table: String, a: TableLayout, b: TableLayout): DiffShape = {
    val renames = keyRenames(a, b)
    val names = (b.schema.fieldNames ++ a.schema.fieldNames.filterNot(renames.values.toSet)).distinct.toSeq
    def field(n: String): StructField = (a.schema.find(_.name == renames.getOrElse(n, n)), b.schema.find(_.name == n)) match {
      case (Some(x), Some(y)) => StructField(n, wider(x.dataType, y.dataType).getOrElse(throw new SchemaMismatchException(
        s"Cannot diff $table: column '$n' changed type from ${x.dataType.simpleString} to ${y.dataType.simpleString}, " +
          "and neither widens to the other, so their values cannot be compared. Diff each side of the type change " +
          "separately, or rename the column when changing its type (a rename shows as a dropped and an added column).")))
      case (x, y) => y.orElse(x).get
    }
    val union = names.map(field)
    val oldNames = renames.map(_.swap)
    val sameKey = !a.hidden && !b.hidden && a.primaryKey.map(k => oldNames.getOrElse(k, k)).toSet == b.primaryKey.toSet
    if (sameKey) {
      val keys = b.primaryKey.map(k => union.find(_.name == k).get)
      DiffShape(byKey = true, keys, union.filterNot(f => b.primaryKey.contains(f.name)), Nil, exact = false, renames)
    } else {
      val common = names.filter(n => a.schema.fieldNames.contains(n) && b.schema.fieldNames.contains(n))
      union.filter(f => common.contains(f.name)).find(f => !RowOrdering.isOrderable(f.dataType)).foreach { f =>
        throw new SchemaMismatchException(s"Cannot diff $table: its key changed (${describe(a)} to ${describe(b)}), so " +
          s"rows are matched as whole rows, and column '${f.name}' has type ${f.dataType.simpleString}, which cannot " +
          "be compared. Diff the versions before and after the key change separately.")
      }
      DiffShape(byKey = false, Nil, union, common, exact = false)
    }
  }

  /**
   * Key columns `b` renamed from `a`'s (new name -> old name): `b`'s key is `a`'s with some columns renamed, each
   * renamed column at the same place in the schema, absent under its other name from the other version, and of a
   * type that widens to the other's (as Dolt matches rows across a key rename: a row whose key value is unchanged
   * is the same row). Empty when the key changed otherwise.
   */
  private def keyRenames(a: TableLayout, b: TableLayout): Map[String, String] =
    if (a.hidden || b.hidden || a.primaryKey.size != b.primaryKey.size) Map.empty
    else {
      val (an, bn) = (a.schema.fieldNames.toSeq, b.schema.fieldNames.toSeq)
      val pairs = a.primaryKey.zip(b.primaryKey).filter { case (o, n) => o != n }
      val renames = pairs.forall { case (o, n) =>
        !bn.contains(o) && !an.contains(n) && an.indexOf(o) == bn.indexOf(n) &&
          wider(a.schema(o).dataType, b.schema(n).dataType).isDefined
      }
      if (pairs.nonEmpty && renames) pairs.map { case (o, n) => n -> o }.toMap else Map.empty
    }

  private def describe(l: TableLayout): String =
    if (l.hidden) "no primary key" else l.primaryKey.mkString("primary key (", ", ", ")")

  /** The type both `a` and `b` convert to without loss, if any (integral and decimal widening, float to double, date to timestamp). */
  def wider(a: DataType, b: DataType): Option[DataType] = {
    def rank(t: DataType): Int = t match { case ByteType => 1; case ShortType => 2; case IntegerType => 3; case LongType => 4; case _ => 0 }
    def asDecimal(t: DataType): Option[DecimalType] = t match {
      case d: DecimalType => Some(d)
      case ByteType => Some(DecimalType(3, 0)); case ShortType => Some(DecimalType(5, 0))
      case IntegerType => Some(DecimalType(10, 0)); case LongType => Some(DecimalType(20, 0))
      case _ => None
    }
    (a, b) match {
      case _ if DataType.equalsIgnoreNullability(a, b) => Some(b)
      case _ if rank(a) > 0 && rank(b) > 0 => Some(if (rank(a) >= rank(b)) a else b)
      case (FloatType | DoubleType, FloatType | DoubleType) => Some(DoubleType)
      case (FloatType | DoubleType, _) if rank(b) > 0 => Some(DoubleType)
      case (_, FloatType | DoubleType) if rank(a) > 0 => Some(DoubleType)
      case (_: DecimalType, FloatType | DoubleType) | (FloatType | DoubleType, _: DecimalType) => Some(DoubleType)
      case (_: DecimalType, _) | (_, _: DecimalType) =>
        for { x <- asDecimal(a); y <- asDecimal(b) } yield {
          val scale = math.max(x.scale, y.scale)
          val digits = math.max(x.precision - x.scale, y.precision - y.scale)
          DecimalType(math.min(DecimalType.MAX_PRECISION, digits + scale), scale)
        }
      case (DateType, TimestampType) | (TimestampType, DateType) => Some(TimestampType)
      case (DateType, TimestampNTZType) | (TimestampNTZType, DateType) => Some(TimestampNTZType)
      case _ => None
    }
  }
}
