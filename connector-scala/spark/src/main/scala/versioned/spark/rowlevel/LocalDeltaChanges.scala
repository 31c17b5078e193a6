package versioned.spark.rowlevel

import org.apache.spark.sql.Row
import org.apache.spark.sql.connector.write.RowLevelOperation.Command
import org.apache.spark.sql.types._
import versioned.core.{ChangeKind, DataValidationException, ErrorClass}
import versioned.spark.TableLayout
import versioned.spark.write.Validation

/**
 * [[DeltaChanges]] of a keyed table computed on the driver, for the few staged rows of a typical UPDATE
 * or MERGE: the staged delta rows and the table rows of their keys (read by a key lookup) are small, so
 * the same rules run over them in memory instead of as a chain of Spark joins (one job each). Same
 * results and the same errors as the distributed path; only for tables whose columns are all of atomic
 * types compared by value here exactly as Spark's `<=>` does ([[supports]]).
 */
private[rowlevel] object LocalDeltaChanges {
  import DeltaChanges.{New, Old, OpColumn}

  /** Keyed tables whose values compare here as in Spark (no binary, nested or collated values). */
  def supports(layout: TableLayout): Boolean = !layout.hidden && layout.physicalSchema.fields.forall(f => f.dataType match {
    case BooleanType | ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType | DateType |
         TimestampType | TimestampNTZType | _: DecimalType => true
    case s: StringType => s == StringType
    case _ => false
  })

  /** Floating-point values as Spark compares them in joins and `<=>`: -0.0 = 0.0, NaN = NaN. */
  private def norm(v: Any): Any = v match {
    case d: java.lang.Double if d.doubleValue() == 0.0 => java.lang.Double.valueOf(0.0)
    case f: java.lang.Float if f.floatValue() == 0.0f => java.lang.Float.valueOf(0.0f)
    case d: java.math.BigDecimal => d.stripTrailingZeros()
    case other => other
  }

  private def same(a: Any, b: Any): Boolean = (a, b) match {
    case (null, null) => true
    case (null, _) | (_, null) => false
    case (x: java.math.BigDecimal, y: java.math.BigDecimal) => x.compareTo(y) == 0
    case (x: java.lang.Double, y: java.lang.Double) => (x.isNaN && y.isNaN) || x.doubleValue() == y.doubleValue()
    case (x: java.lang.Float, y: java.lang.Float) => (x.isNaN && y.isNaN) || x.floatValue() == y.floatValue()
    case _ => a == b
  }

  /**
   * Conflated DIFF rows (layout `layout.diffSchema`) of `staged` rows (schema `stagedSchema`) applied to
   * `current`, the table rows (physical schema) of at least every key the staged rows name.
   */
  def keyed(staged: Seq[Row], stagedSchema: StructType, current: Seq[Row], layout: TableLayout, cmd: Command): Seq[Row] = {
    val keys = layout.primaryKey
    val fields = layout.physicalSchema.fields.toSeq
    val what = DeltaChanges.verb(cmd).split(' ').head.toUpperCase
    val op = stagedSchema.fieldIndex(OpColumn)
    val oldKey = keys.map(k => stagedSchema.fieldIndex(Old + k))
    val newCols = fields.map(f => stagedSchema.fieldIndex(New + f.name))
    val keyPos = keys.map(k => fields.indexWhere(_.name == k))
    def keyOf(r: Row, cols: Seq[Int]): Seq[Any] = cols.map(i => norm(r.get(i)))

    val removed = scala.collection.mutable.HashSet.empty[Seq[Any]]
    // written: key -> (row values in physical order, in place)
    val written = scala.collection.mutable.LinkedHashMap.empty[Seq[Any], (Seq[Any], Boolean)]
    val counts = scala.collection.mutable.HashMap.empty[Seq[Any], Long]
    var nullKey = false
    staged.foreach { r =>
      val kind = r.getByte(op)
      val o = keyOf(r, oldKey)
      val n = keyOf(r, keyPos.map(newCols))
      val moved = o != n
      if (kind == ChangeKind.Delete || (kind == ChangeKind.Update && moved)) removed += o
      if (kind != ChangeKind.Delete) {
        if (n.contains(null)) nullKey = true
        counts(n) = counts.getOrElse(n, 0L) + 1
        written(n) = (newCols.map(r.get), kind == ChangeKind.Update && !moved)
      }
    }
    if (nullKey) throw Validation.nullKey(keys, Some(what))
    counts.find(_._2 > 1).foreach { case (k, c) => throw Validation.duplicateKey(keys, c, k, Some(what)) }

    val cur = current.iterator.map(r => keyPos.map(i => norm(r.get(i))) -> r).toMap
    written.find { case (k, (_, inPlace)) => !inPlace && cur.contains(k) && !removed.contains(k) }.foreach { case (k, _) =>
      throw new DataValidationException(ErrorClass.KeyExists,
        s"$what would write key (${keys.zip(k).map { case (n, v) => s"$n=$v" }.mkString(", ")}), which another row of " +
          "the table already has. Nothing was committed.")
    }

    val touched = written.keys.toSeq ++ removed.iterator.filterNot(written.contains)
    touched.flatMap { k =>
      (written.get(k).map(_._1), cur.get(k)) match {
        case (None, Some(c)) => // removed: the DIFF delete carries the key only
          Some(Row.fromSeq(fields.indices.map(i => if (keyPos.contains(i)) c.get(i) else null) :+ ChangeKind.Delete))
        case (Some(w), None) => Some(Row.fromSeq(w :+ ChangeKind.Insert))
        case (Some(w), Some(c)) if fields.indices.exists(i => !keyPos.contains(i) && !same(w(i), c.get(i))) =>
          Some(Row.fromSeq(w :+ ChangeKind.Update))
        case _ => None
      }
    }
  }
}
