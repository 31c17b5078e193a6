package versioned.spark.read

import versioned.spark.format.SparkKeys

import org.apache.spark.sql.sources._
import org.apache.spark.sql.types.{DataType, StructType}
import versioned.spark.format.Values

/**
 * Decides from metastore statistics alone whether an object or a fragment may hold rows matching
 * filters. Always conservative: `true` unless the statistics prove that nothing can match.
 */
private[versioned] final class Pruning(schema: StructType) {
  /** Per-column inclusive bounds (lower, upper), canonical values, either side open; None = unknown. */
  type Bounds = String => Option[(Option[Any], Option[Any])]

  private def typeOf(col: String): Option[DataType] = schema.fields.find(_.name == col).map(_.dataType)

  /** The order of one column's canonical values: the key order ([[versioned.core.format.KeyOrder]]), so pruning and the writer agree. */
  private final class Order(dt: DataType) {
    def le(a: Option[Any], b: Option[Any]): Boolean = a.isEmpty || b.isEmpty || SparkKeys.compareCanonical(dt, a.get, b.get) <= 0
    def lt(a: Option[Any], b: Option[Any]): Boolean = a.isEmpty || b.isEmpty || SparkKeys.compareCanonical(dt, a.get, b.get) < 0
  }

  def mayMatch(f: Filter, bounds: Bounds): Boolean = {
    def cmp(col: String, v: Any)(ok: (Order, Option[Any], Option[Any], Option[Any]) => Boolean): Boolean =
      (for { dt <- typeOf(col); b <- bounds(col); cv <- Values.fromFilter(v, dt) } yield ok(new Order(dt), b._1, b._2, Some(cv)))
        .getOrElse(true)
    f match {
      case And(l, r) => mayMatch(l, bounds) && mayMatch(r, bounds)
      case Or(l, r) => mayMatch(l, bounds) || mayMatch(r, bounds)
      case EqualTo(c, v) => cmp(c, v)((o, lo, hi, x) => o.le(lo, x) && o.le(x, hi))
      case EqualNullSafe(c, v) if v != null => cmp(c, v)((o, lo, hi, x) => o.le(lo, x) && o.le(x, hi))
      case In(c, vs) => vs.isEmpty || vs.exists(v => mayMatch(EqualTo(c, v), bounds))
      case LessThan(c, v) => cmp(c, v)((o, lo, _, x) => o.lt(lo, x))
      case LessThanOrEqual(c, v) => cmp(c, v)((o, lo, _, x) => o.le(lo, x))
      case GreaterThan(c, v) => cmp(c, v)((o, _, hi, x) => o.lt(x, hi))
      case GreaterThanOrEqual(c, v) => cmp(c, v)((o, _, hi, x) => o.le(x, hi))
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

private[versioned] object Pruning {
  /**
   * Whether Parquet's own row-group and page statistics may evaluate `f`. Parquet compares floating-point
   * statistics with `Double.compare`, so -0.0 and 0.0 differ there: a comparison with a floating-point
   * zero can skip row groups holding matching rows (plain Parquet reads in Spark 4.3 lose them). Such
   * filters are left to [[Pruning]] (key order, -0.0 = 0.0) and to Spark after the scan.
   */
  def safeForParquet(f: Filter): Boolean = {
    def zero(v: Any): Boolean = v match {
      case d: java.lang.Double => d.doubleValue() == 0.0
      case x: java.lang.Float => x.floatValue() == 0.0f
      case _ => false
    }
    f match {
      case And(l, r) => safeForParquet(l) && safeForParquet(r)
      case Or(l, r) => safeForParquet(l) && safeForParquet(r)
      case Not(c) => safeForParquet(c)
      case EqualTo(_, v) => !zero(v)
      case EqualNullSafe(_, v) => !zero(v)
      case LessThan(_, v) => !zero(v)
      case LessThanOrEqual(_, v) => !zero(v)
      case GreaterThan(_, v) => !zero(v)
      case GreaterThanOrEqual(_, v) => !zero(v)
      case In(_, vs) => !vs.exists(zero)
      case _ => true
    }
  }
}
