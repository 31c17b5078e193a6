package versioned.spark.read

import org.apache.spark.sql.sources._
import org.apache.spark.sql.types.{DataType, StructType}
import versioned.spark.Values

/**
 * Decides from metastore statistics alone whether an object or a fragment may hold rows matching
 * filters. Always conservative: `true` unless the statistics prove that nothing can match.
 */
private[versioned] final class Pruning(schema: StructType) {
  /** Per-column inclusive bounds (lower, upper), canonical values, either side open; None = unknown. */
  type Bounds = String => Option[(Option[Any], Option[Any])]

  private def typeOf(col: String): Option[DataType] = schema.fields.find(_.name == col).map(_.dataType)
  private def le(a: Option[Any], b: Option[Any]): Boolean = a.isEmpty || b.isEmpty || Values.compare(a.get, b.get) <= 0
  private def lt(a: Option[Any], b: Option[Any]): Boolean = a.isEmpty || b.isEmpty || Values.compare(a.get, b.get) < 0

  def mayMatch(f: Filter, bounds: Bounds): Boolean = {
    def cmp(col: String, v: Any)(ok: (Option[Any], Option[Any], Option[Any]) => Boolean): Boolean =
      (for { dt <- typeOf(col); b <- bounds(col); cv <- Values.fromFilter(v, dt) } yield ok(b._1, b._2, Some(cv)))
        .getOrElse(true)
    f match {
      case And(l, r) => mayMatch(l, bounds) && mayMatch(r, bounds)
      case Or(l, r) => mayMatch(l, bounds) || mayMatch(r, bounds)
      case EqualTo(c, v) => cmp(c, v)((lo, hi, x) => le(lo, x) && le(x, hi))
      case EqualNullSafe(c, v) if v != null => cmp(c, v)((lo, hi, x) => le(lo, x) && le(x, hi))
      case In(c, vs) => vs.isEmpty || vs.exists(v => mayMatch(EqualTo(c, v), bounds))
      case LessThan(c, v) => cmp(c, v)((lo, _, x) => lt(lo, x))
      case LessThanOrEqual(c, v) => cmp(c, v)((lo, _, x) => le(lo, x))
      case GreaterThan(c, v) => cmp(c, v)((_, hi, x) => lt(x, hi))
      case GreaterThanOrEqual(c, v) => cmp(c, v)((_, hi, x) => le(x, hi))
      case _ => true
    }
  }

  /** Bounds from an object's min/max statistics. */
  def objectBounds(min: Map[String, Any], max: Map[String, Any]): Bounds = col =>
    for { dt <- typeOf(col); lo <- min.get(col); hi <- max.get(col) if lo != null && hi != null }
      yield (Some(Values.fromJson(lo, dt)), Some(Values.fromJson(hi, dt)))

  /** Bounds of a fragment's key range on its first key column: [lower, upper] (inclusive, conservative). */
  def fragmentBounds(firstKey: String, lower: Option[Seq[Any]], upper: Option[Seq[Any]]): Bounds = col =>
    if (col != firstKey) None
    else typeOf(col).map(dt => (lower.flatMap(l => Option(l.head)).map(Values.fromJson(_, dt)), upper.flatMap(u => Option(u.head)).map(Values.fromJson(_, dt))))
}
