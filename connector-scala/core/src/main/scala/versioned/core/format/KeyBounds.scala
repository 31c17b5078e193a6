package versioned.core.format

/**
 * The read rule of fragments: a reader reads every object of fragment i's chain restricted to the fragment's
 * bounds, `lower_i <= key < lower_{i+1}` (the first fragment has no lower bound, the last no upper bound). An
 * object listed by several fragments (a shared DIFF) holds keys of each; an object that is not shared holds only its
 * fragment's keys (every object a format 1 table lists) and is read whole, as is a shared one whose statistics show
 * all its keys within the bounds ([[covers]]).
 *
 * @param lower the fragment's lower bound (inclusive), as the engine's key row
 * @param upper the next fragment's lower bound (exclusive), as the engine's key row
 */
final class KeyBounds[R](order: KeyOrder[R], lower: Option[R], upper: Option[R]) extends Serializable {
  private val lo = lower.getOrElse(null.asInstanceOf[R])
  private val hi = upper.getOrElse(null.asInstanceOf[R])
  private val hasLo = lower.isDefined
  private val hasHi = upper.isDefined

  /** Whether the key of row `r` (its key columns, ordinals 0 until n) lies within the bounds. */
  def contains(r: R): Boolean = (!hasLo || order.compare(r, lo) >= 0) && (!hasHi || order.compare(r, hi) < 0)

  /** The rows of `rows` within the bounds. */
  def restrict(rows: Iterator[R]): Iterator[R] = rows.filter(contains)
}

object KeyBounds {
  /**
   * Whether every key of an object lies within `lower <= key < upper` (canonical key tuples, [[KeyType]]), by the
   * object's per-column statistics: `min(c)` / `max(c)` its smallest and largest non-null value of key column c
   * (None when not recorded), `nulls(c)` whether c holds nulls. The tuple of per-column minima (null where a
   * column holds nulls: nulls sort first) is at or below every key, the tuple of maxima at or above; so the object
   * is within the bounds when the first is at or above `lower` and the second below `upper`. False when a
   * statistic it needs is missing (the reader then restricts, which is always correct). An empty object is within.
   */
  def covers(types: Seq[KeyType], lower: Option[Seq[Any]], upper: Option[Seq[Any]], rows: Long,
             min: Int => Option[Any], max: Int => Option[Any], nulls: Int => Boolean): Boolean =
    rows == 0 || {
      // a column with nulls has null as its minimum (nulls first); its maximum is its largest non-null value,
      // or null when it holds only nulls
      val mins = types.indices.map(c => if (nulls(c)) Some(null) else min(c))
      val maxs = types.indices.map(c => max(c).orElse(if (nulls(c)) Some(null) else None))
      mins.forall(_.isDefined) && maxs.forall(_.isDefined) &&
        lower.forall(l => KeyOrder.compareCanonicalKeys(types, mins.map(_.get), l) >= 0) &&
        upper.forall(u => KeyOrder.compareCanonicalKeys(types, maxs.map(_.get), u) < 0)
    }

  /**
   * Whether a run of an object's rows (a Parquet row group) whose first key column lies within `[min, max]`
   * (non-null canonical values of type `first`) may hold a key within `lower <= key < upper` (canonical key
   * tuples): by the first column only, so it is never false for a run that holds such a key. A reader may skip
   * the runs of a shared object for which it is false; the rows it reads are still restricted ([[KeyBounds]]).
   */
  def runMayHold(first: KeyType, lower: Option[Seq[Any]], upper: Option[Seq[Any]], min: Any, max: Any): Boolean =
    lower.forall(l => KeyOrder.compareCanonical(first, l.head, max) <= 0) &&
      upper.forall(u => KeyOrder.compareCanonical(first, min, u.head) <= 0)
}
