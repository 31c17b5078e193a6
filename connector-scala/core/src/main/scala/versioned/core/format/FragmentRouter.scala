package versioned.core.format

/**
 * Routing: the fragment a key belongs to. Fragments partition the key order; each after the first has a
 * lower bound, ascending. A key belongs to the last fragment whose lower bound is <= the key, or to the
 * first fragment when it is below every bound. `bounds` are `(lower bound, fragment index)` pairs in
 * fragment order, the bounds as the engine's key rows; found by binary search.
 */
final class FragmentRouter[R](bounds: IndexedSeq[(R, Int)], order: KeyOrder[R]) extends Serializable {
  private val lowers = bounds.map(_._1).toArray[Any].asInstanceOf[Array[AnyRef]]
  private val indexes = bounds.map(_._2).toArray

  /** The index of the fragment holding `key`. */
  def apply(key: R): Int = {
    var lo = 0
    var hi = lowers.length
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      if (order.compare(lowers(mid).asInstanceOf[R], key) <= 0) lo = mid + 1 else hi = mid
    }
    if (lo == 0) 0 else indexes(lo - 1)
  }
}

object FragmentRouter {
  /** The router of fragments whose lower bounds are `lowers` (None for the first), converted to rows by `row`. */
  def of[R](lowers: Seq[Option[Seq[Any]]], order: KeyOrder[R])(row: Seq[Any] => R): FragmentRouter[R] =
    new FragmentRouter(lowers.zipWithIndex.collect { case (Some(l), i) => (row(l), i) }.toIndexedSeq, order)
}
