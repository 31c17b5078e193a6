package versioned.core.format

import scala.reflect.ClassTag

/**
 * Conflation: the one rule that turns a chain of objects into one row per key. The sources are
 * sorted in the key order ([[KeyOrder]]) and given oldest first (a fragment's SNAP, then its DIFFs);
 * for every key the newest source holding it wins, and every source at that key moves past it.
 * Whether a winning delete hides the key is the caller's choice ([[ChangeRule.hides]]): a read drops
 * it, conflating DIFFs among themselves keeps it.
 *
 * A streaming k-way merge. Implementations say how the sources' current rows compare and how a source
 * advances, so one rule serves rows read from files, rows held in arrays, and primitive `long` keys.
 * The winner's row stays valid until the next call of [[next]] (sources advance lazily), so engines that
 * reuse row buffers can copy or project it first.
 */
abstract class Conflation(sources: Int) {
  /** Compares the current rows of sources `a` and `b` (both not exhausted) in the key order. */
  protected def compareHeads(a: Int, b: Int): Int
  /** Moves source `s` to its next row; false when it has none. */
  protected def advance(s: Int): Boolean

  private val live = new Array[Boolean](sources)
  private val atKey = new Array[Boolean](sources)
  private var started = false
  private var current = -1

  /** Moves to the next key; false when every source is exhausted. */
  final def next(): Boolean = {
    if (!started) { var s = 0; while (s < sources) { live(s) = advance(s); s += 1 }; started = true }
    else { var s = 0; while (s < sources) { if (atKey(s)) live(s) = advance(s); s += 1 } }
    var min = -1
    var s = 0
    while (s < sources) {
      if (live(s) && (min < 0 || compareHeads(s, min) <= 0)) min = s // ties: the newer source wins
      s += 1
    }
    current = min
    s = 0
    while (s < sources) { atKey(s) = live(s) && (s == min || (min >= 0 && compareHeads(s, min) == 0)); s += 1 }
    min >= 0
  }

  /** The source whose row wins at the current key. */
  final def winner: Int = current
}

object Conflation {
  /**
   * Conflates sources held in memory (each sorted, oldest first) compared by `order`: the winning rows in key
   * order. A single integral key is compared as primitive `long`s, read once per row.
   */
  def rows[R <: AnyRef : ClassTag](sources: Array[Array[R]], order: KeyOrder[R]): Array[R] = {
    if (sources.length == 1) return sources.head
    val sizes = sources.map(_.length)
    val pos = Array.fill(sources.length)(-1)
    val c: Conflation =
      if (order.integralKeyed) {
        val keys = sources.map { src =>
          val k = new Array[Long](src.length)
          var i = 0
          while (i < k.length) { k(i) = order.integralKey(src(i)); i += 1 }
          k
        }
        new Positions(sizes, pos) {
          override protected def compareHeads(a: Int, b: Int): Int = java.lang.Long.compare(keys(a)(pos(a)), keys(b)(pos(b)))
        }
      } else new Positions(sizes, pos) {
        override protected def compareHeads(a: Int, b: Int): Int = order.compare(sources(a)(pos(a)), sources(b)(pos(b)))
      }
    val out = new Array[R](sizes.sum)
    var n = 0
    while (c.next()) { out(n) = sources(c.winner)(pos(c.winner)); n += 1 }
    if (n == out.length) out else out.take(n)
  }

  /** A conflation of sources held in arrays: source `s` is at index `pos(s)` of its `sizes(s)` rows. */
  private abstract class Positions(sizes: Array[Int], pos: Array[Int]) extends Conflation(sizes.length) {
    override protected def advance(s: Int): Boolean = { pos(s) += 1; pos(s) < sizes(s) }
  }

  /** Conflates sorted streams (oldest first): each key once, from the newest stream holding it. */
  def streams[R](sources: Array[Iterator[R]], order: KeyOrder[R]): Conflating[R] = new Conflating(sources, order)

  /** [[Conflation]] over iterators; [[row]] and [[source]] describe the winner of the current key. */
  final class Conflating[R](sources: Array[Iterator[R]], order: KeyOrder[R]) extends Conflation(sources.length) {
    private val heads = new Array[AnyRef](sources.length)
    private def head(s: Int): R = heads(s).asInstanceOf[R]
    override protected def compareHeads(a: Int, b: Int): Int = order.compare(head(a), head(b))
    override protected def advance(s: Int): Boolean =
      sources(s).hasNext && { heads(s) = sources(s).next().asInstanceOf[AnyRef]; true }
    def row: R = head(winner)
    def source: Int = winner
  }
}
