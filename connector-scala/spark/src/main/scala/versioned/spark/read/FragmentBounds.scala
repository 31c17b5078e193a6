package versioned.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types.DataType
import versioned.core.{Fragment, ObjectMeta}
import versioned.core.format.KeyBounds
import versioned.spark.format.{SparkKeys, TableLayout, Values}

/**
 * The key bounds of one fragment of a table version (`lower <= key < upper`, metastore values as the fragment
 * list holds them): the kernel's read rule ([[KeyBounds]]) in Spark's types. [[file]] gives an object of the
 * fragment's chain the bounds to read it within when it is shared (`vc_objects.shared`: it may hold keys of other
 * fragments) and its statistics do not show every key of it within them. Other objects hold only their fragment's
 * keys (every object of a format 1 table), so old tables are read as before.
 *
 * @param names the key columns' names (the statistics are recorded by name), `types` their types
 */
private[versioned] final case class FragmentBounds(names: Seq[String], types: Seq[DataType], lower: Option[Seq[Any]],
                                                   upper: Option[Seq[Any]]) {
  /** The rule over key rows (key columns at ordinals 0 until n), built where rows are read. */
  @transient lazy val rule: KeyBounds[InternalRow] = new KeyBounds(SparkKeys.order(types),
    lower.map(Values.internalRow(_, types)), upper.map(Values.internalRow(_, types)))

  /** The bounds as canonical key tuples ([[versioned.core.format.KeyType]]). */
  @transient lazy val canonical: (Option[Seq[Any]], Option[Seq[Any]]) = {
    def canon(v: Option[Seq[Any]]) = v.map(_.zip(types).map { case (x, dt) => Values.fromJson(x, dt) })
    (canon(lower), canon(upper))
  }

  /** Whether every key of object `m` lies within the bounds, by its statistics ([[KeyBounds.covers]]). */
  def covers(m: ObjectMeta): Boolean = {
    def stat(s: Map[String, Any])(c: Int) = s.get(names(c)).filter(_ != null).map(Values.fromJson(_, types(c)))
    KeyBounds.covers(types.map(SparkKeys.keyTypeOf), canonical._1, canonical._2, m.rowCount, stat(m.minValues),
      stat(m.maxValues), c => m.nullCounts.get(names(c)).exists(_ > 0))
  }

  /** Object `m` of the fragment's chain, to be read within the bounds when it is shared, unless they [[covers]] it. */
  def file(config: versioned.core.WarehouseConfig, m: ObjectMeta): ObjectFile =
    ObjectFile.of(config, m).copy(bounds = if (!m.shared || (lower.isEmpty && upper.isEmpty) || covers(m)) None else Some(this))
}

private[versioned] object FragmentBounds {
  /** The bounds of each of `fragments` (a table version's, in order) of a table of `layout`. */
  def of(layout: TableLayout, fragments: Seq[Fragment]): IndexedSeq[FragmentBounds] =
    fragments.indices.map(i => FragmentBounds(layout.keyColumns, layout.keyTypes, fragments(i).lower,
      fragments.lift(i + 1).flatMap(_.lower)))
}
