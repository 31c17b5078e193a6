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
  /**
   * Which values of a key lookup each fragment may hold: `values` are canonical values ([[KeyType]]) of the first
   * key column, sorted in the key order and distinct; `lowers` are the fragments' lower bounds' first columns, in
   * fragment order (None for the first fragment; a null first column sorts first). Fragment i may hold
   * the values from its bound `l_i` (inclusive) up to the next bound `l_{i+1}`: exclusive when the key is one
   * column (`keyColumns == 1`: a key equal to `l_{i+1}` belongs to fragment i+1 alone), inclusive otherwise (keys
   * sharing their first column with a bound may lie on both sides of it). Returns, per fragment, the range of
   * indexes into `values` it may hold, by binary search over the sorted values: O(fragments x log values).
   */
  def lookupRanges(first: KeyType, keyColumns: Int, values: IndexedSeq[Any], lowers: IndexedSeq[Option[Any]]): IndexedSeq[Range] = {
    /** The index of the first value >= x (with `after`: > x). */
    def firstFrom(x: Any, after: Boolean): Int = {
      var l = 0; var h = values.length
      while (l < h) {
        val m = (l + h) >>> 1
        val c = KeyOrder.compareCanonical(first, values(m), x)
        if (c < 0 || (after && c == 0)) l = m + 1 else h = m
      }
      l
    }
    lowers.indices.map { i =>
      val from = lowers(i).fold(0)(firstFrom(_, after = false))
      val until = lowers.lift(i + 1).flatten.fold(values.length)(firstFrom(_, after = keyColumns > 1))
      from until math.max(from, until)
    }
  }

  /** The router of fragments whose lower bounds are `lowers` (None for the first), converted to rows by `row`. */
  def of[R](lowers: Seq[Option[Seq[Any]]], order: KeyOrder[R])(row: Seq[Any] => R): FragmentRouter[R] =
    new FragmentRouter(lowers.zipWithIndex.collect { case (Some(l), i) => (row(l), i) }.toIndexedSeq, order)
}
