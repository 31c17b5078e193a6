package versioned.spark.read

import versioned.spark.format.SparkKeys

import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.expressions.{Literal, NamedReference}
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.sources._
import org.apache.spark.sql.types._
import versioned.spark.format.{TableLayout, Values}

/**
 * A lookup of rows by a set of values of the first primary-key column: the one mechanism behind every
 * read that knows the keys it needs (a diff's before-values, the rows a MERGE / UPDATE concerns, a
 * `deleteWhere` on keys, a scan filtered by `key IN (...)` or receiving such a runtime filter).
 *
 * Its values are canonical ([[Values]]), sorted in the key order and distinct. A scan given a lookup
 * ([[VersionedScan]]) skips fragments whose key range holds none of the values and objects whose key
 * statistics hold none, and pushes [[filter]] down to Parquet, which skips row groups and pages (column
 * indexes) holding none: runs of consecutive integers become ranges, so a clustered change costs one
 * range; the ranges form a search tree ([[guardedOr]]); more than [[MaxKeys]] runs are looked up by their
 * overall range. Rows of other keys may still
 * be returned (Parquet skips whole pages), so a lookup only prunes: whoever asked applies the exact
 * condition (Spark's filter after the scan, the MERGE's join, a semi join).
 *
 * Only keyed tables get lookups, and only on a first key column that Parquet orders like the key order
 * (not floating point: -0.0 and NaN). A primary key is never null, so null values are dropped.
 */
private[versioned] final class KeyLookup private (val field: StructField, val values: IndexedSeq[Any]) {
  private val keyType = SparkKeys.keyTypeOf(field.dataType)
  private def cmp(a: Any, b: Any): Int = versioned.core.format.KeyOrder.compareCanonical(keyType, a, b)

  /** Whether some value lies in [lo, hi] (canonical, inclusive, either side open). */
  def mayHold(lo: Option[Any], hi: Option[Any]): Boolean = {
    val l = lo.fold(0)(firstFrom(_, after = false))
    l < values.length && hi.forall(x => cmp(values(l), x) <= 0)
  }

  /** How many values lie in [lo, hi] (canonical, inclusive, either side open). */
  def count(lo: Option[Any], hi: Option[Any]): Int = {
    val from = lo.fold(0)(firstFrom(_, after = false))
    val until = hi.fold(values.length)(firstFrom(_, after = true))
    math.max(0, until - from)
  }

  /** The index of the first value >= x (with `after`: > x), by binary search. */
  private def firstFrom(x: Any, after: Boolean): Int = {
    var l = 0; var h = values.length
    while (l < h) { val m = (l + h) >>> 1; val c = cmp(values(m), x); if (c < 0 || (after && c == 0)) l = m + 1 else h = m }
    l
  }

  /** Keeps the values of both lookups. */
  def intersect(o: KeyLookup): KeyLookup = {
    val other = o.values.toSet
    new KeyLookup(field, values.filter(other.contains))
  }

  /** The values at `indexes` (consecutive indexes of the sorted values), as a lookup. */
  def slice(indexes: Range): KeyLookup = new KeyLookup(field, values.slice(indexes.start, indexes.end))

  /**
   * The lookup split by fragment: for each fragment of a table version (`lowers`: their lower bounds as the fragment
   * list holds them, in order; `keyColumns`: how many columns the key has), the values its key range may hold, by the
   * kernel's rule ([[versioned.core.format.FragmentRouter.lookupRanges]]). A reader of one fragment is given only its
   * share: the filter it pushes down is O(its values), not O(all values).
   */
  def byFragments(lowers: Seq[Option[Seq[Any]]], keyColumns: Int): IndexedSeq[KeyLookup] =
    versioned.core.format.FragmentRouter.lookupRanges(keyType, keyColumns, values,
      lowers.map(_.map(l => Values.fromJson(l.head, field.dataType))).toIndexedSeq).map(slice)

  private lazy val runs = KeyLookup.runs(values, field.dataType)

  /** How many runs of values [[filter]] pushes down ([[KeyLookup.runs]]). */
  def runCount: Int = runs.size

  /** Whether [[filter]] selects exactly the values (not only their overall range, beyond [[KeyLookup.MaxKeys]] runs). */
  def filterIsExact: Boolean = runs.size <= KeyLookup.MaxKeys

  /** The filter pushed down to Parquet; None when there is nothing to read at all. */
  def filter: Option[Filter] = {
    val name = field.name
    def lit(v: Any) = Values.toExternal(v, field.dataType)
    def range(lo: Any, hi: Any): Filter =
      if (lo == hi) EqualTo(name, lit(lo)) else And(GreaterThanOrEqual(name, lit(lo)), LessThanOrEqual(name, lit(hi)))
    if (runs.isEmpty) None
    else if (!filterIsExact) Some(range(runs.head._1, runs.last._2))
    else Some(KeyLookup.guardedOr(runs, range))
  }

  override def toString: String =
    s"${field.name} in ${values.size} value(s)" + (if (values.size <= 5) values.mkString(" [", ", ", "]") else "")
}

private[versioned] object KeyLookup {
  /** Most runs of values pushed down to Parquet one by one; more are pushed as their overall range. */
  val MaxKeys = 10000

  /** The values of all of `lookups` (of one key column), as one lookup; None when there is none. */
  def union(lookups: Seq[KeyLookup]): Option[KeyLookup] =
    if (lookups.size <= 1) lookups.headOption else Some(of(lookups.head.field, lookups.flatMap(_.values)))

  /** Whether lookups on this first key column are possible ([[versioned.core.format.KeyType.lookupable]]). */
  def supports(dt: DataType): Boolean = SparkKeys.keyType(dt).exists(versioned.core.format.KeyType.lookupable)

  /** The first key column of a keyed table whose values can be looked up. */
  def keyField(layout: TableLayout): Option[StructField] =
    Option.when(!layout.hidden)(layout.keyFields.head).filter(f => supports(f.dataType))

  /** A lookup of canonical values (nulls dropped). */
  def of(field: StructField, canonical: Iterable[Any]): KeyLookup = {
    new KeyLookup(field, versioned.core.format.KeyOrder.sortedDistinct(SparkKeys.keyTypeOf(field.dataType), canonical))
  }

  /**
   * The lookup that data source filters imply (their conjunction), if they restrict the first key column
   * of `layout` to a set of values: `k = v`, `k <=> v`, `k IN (...)`, an OR of such restrictions, an AND
   * with one. Filters on other columns are left to the scan's other pruning.
   */
  def fromFilters(layout: TableLayout, filters: Seq[Filter]): Option[KeyLookup] = keyField(layout).flatMap { f =>
    filters.flatMap(keySet(f, _)).map { case (values, _) => of(f, values) }.reduceOption(_ intersect _)
  }

  /**
   * Whether `filter` is exactly a set of values of the first key column of `layout` ([[fromFilters]] takes all of
   * it: `=`, `<=>`, `IN` and AND / OR of those). A scan's lookup then implies it, and it need not be pushed to
   * Parquet besides the lookup's own filter; when the readers apply the lookup exactly, Spark does not evaluate
   * it after the scan either ([[VersionedScanBuilder]]).
   */
  def isKeySet(layout: TableLayout, filter: Filter): Boolean =
    keyField(layout).flatMap(keySet(_, filter)).exists { case (_, exact) => exact }

  /**
   * The values of key column `f` that `x` allows, when it restricts them (else None), and whether it is exactly
   * that restriction (no other condition in it).
   */
  private def keySet(f: StructField, x: Filter): Option[(Seq[Any], Boolean)] = {
    def canon(vs: Seq[Any]): Option[(Seq[Any], Boolean)] = {
      val cs = vs.filter(_ != null).map(Values.fromFilter(_, f.dataType))
      Option.when(cs.forall(_.isDefined))((cs.flatten, true))
    }
    x match {
      case EqualTo(c, v) if c == f.name => canon(Seq(v))
      case EqualNullSafe(c, v) if c == f.name => canon(Seq(v))
      case In(c, vs) if c == f.name => canon(vs.toSeq)
      case Or(l, r) => for { (a, ea) <- keySet(f, l); (b, eb) <- keySet(f, r) } yield (a ++ b, ea && eb)
      case And(l, r) => (keySet(f, l), keySet(f, r)) match {
        case (Some((a, ea)), Some((b, eb))) => Some((a.filter(b.toSet.contains), ea && eb))
        case (a, b) => a.orElse(b).map { case (vs, _) => (vs, false) }
      }
      case _ => None
    }
  }

  /**
   * The lookup of runtime filters (Spark's `SupportsRuntimeV2Filtering`): `k IN (...)` and `k = v` on the
   * first key column; other predicates are ignored (the scan just reads more).
   */
  def fromPredicates(layout: TableLayout, predicates: Seq[Predicate]): Option[KeyLookup] = keyField(layout).flatMap { f =>
    def onKey(e: Any) = e match { case r: NamedReference => r.fieldNames().toSeq == Seq(f.name); case _ => false }
    def canon(e: Any): Option[Any] = e match {
      case l: Literal[_] if l.value() == null => Some(null)
      case l: Literal[_] if l.dataType() == f.dataType =>
        Some(Values.fromInternal(new GenericInternalRow(Array[Any](l.value())), 0, f.dataType))
      case _ => None
    }
    def set(p: Predicate): Option[Seq[Any]] = {
      val cs = p.children().toSeq
      p.name() match {
        case "IN" | "=" if cs.nonEmpty && onKey(cs.head) =>
          val vs = cs.tail.map(canon)
          Option.when(vs.forall(_.isDefined))(vs.flatten)
        case "ALWAYS_FALSE" => Some(Nil)
        case _ => None
      }
    }
    predicates.flatMap(set).map(of(f, _)).reduceOption(_ intersect _)
  }

  /** Sorted canonical values as inclusive ranges: consecutive integers (and dates) merge into one range. */
  def runs(values: IndexedSeq[Any], dt: DataType): IndexedSeq[(Any, Any)] = dt match {
    case ByteType | ShortType | IntegerType | LongType | DateType =>
      val out = IndexedSeq.newBuilder[(Any, Any)]
      var i = 0
      while (i < values.length) {
        val lo = values(i).asInstanceOf[Long]; var hi = lo
        while (i + 1 < values.length && values(i + 1).asInstanceOf[Long] == hi + 1) { i += 1; hi += 1 }
        out += ((lo, hi)); i += 1
      }
      out.result()
    case _ => values.map(v => (v, v))
  }

  /** An OR of filters as a balanced tree (Parquet evaluates predicates recursively). */
  def balancedOr(fs: IndexedSeq[Filter]): Filter =
    if (fs.size == 1) fs.head else { val (l, r) = fs.splitAt(fs.size / 2); Or(balancedOr(l), balancedOr(r)) }

  /** Most children of a node of [[guardedOr]]. */
  val Fanout = 16

  /**
   * The OR of `range` over sorted, disjoint `runs`, as a search tree: groups of at most [[Fanout]] children,
   * each behind a guard, `range(first, last)` of its runs (`guard AND (OR of children)`, which selects
   * the same rows). Every file and page is checked against the whole predicate: Parquet evaluates a
   * page index leaf by leaf, at a cost that grows with the file's pages, and skips the right side of an
   * AND whose left side selects nothing. A flat OR of 1,000 scattered keys costs 1,000 leaves per file,
   * which made a lookup of them as slow as a full scan; behind guards a file evaluates the few groups
   * that reach its key range.
   */
  def guardedOr(runs: IndexedSeq[(Any, Any)], range: (Any, Any) => Filter): Filter =
    if (runs.size <= Fanout) balancedOr(runs.map { case (lo, hi) => range(lo, hi) })
    else {
      val size = math.ceil(runs.size.toDouble / Fanout).toInt
      // groups of equal size, each at least Fanout runs: a tree of depth log_Fanout(runs)
      val groups = runs.grouped(math.max(size, Fanout)).toIndexedSeq
      balancedOr(groups.map(g => if (g.size == 1) range(g.head._1, g.head._2) else And(range(g.head._1, g.last._2), guardedOr(g, range))))
    }
}
