package versioned.core

import scala.collection.mutable

/**
 * The commit graph of a repository, walked in the metastore: merge bases (lowest common ancestors) and
 * ancestry. Images are visited newest first by `seq` (a parent always has a smaller `seq` than its
 * child), so a walk stops as soon as nothing newer than the answer is left, as git's merge-base does.
 */
final class Ancestry(engine: Engine) {
  private val A = 1
  private val B = 2
  private val Stale = 4

  /**
   * The best common ancestors of `a` and `b`: common ancestors (each image counts as its own ancestor)
   * that are not ancestors of another common ancestor, newest first. Empty when the two histories are
   * unrelated. Several candidates happen after criss-cross merges; callers use the newest.
   */
  def mergeBases(repo: String, a: String, b: String): Seq[String] = engine.metastore.read { c =>
    def load(h: String) = MetaDao.getSeqImage(c, repo, h).getOrElse(throw new ImageNotFoundException(
      s"Image $h not found in '$repo'."))
    val flags = mutable.HashMap.empty[String, Int]
    val images = mutable.HashMap.empty[String, SeqImage]
    val queue = mutable.PriorityQueue.empty[SeqImage](Ordering.by[SeqImage, Long](_.seq))
    def push(i: SeqImage, f: Int): Unit = {
      val old = flags.getOrElse(i.image.hash, 0)
      if ((old | f) != old) {
        flags(i.image.hash) = old | f
        images(i.image.hash) = i
        queue.enqueue(i)
      }
    }
    push(load(a), A); push(load(b), B)
    val found = mutable.ArrayBuffer.empty[String]
    def live = queue.exists(i => (flags(i.image.hash) & Stale) == 0)
    while (queue.nonEmpty && live) {
      val i = queue.dequeue()
      var f = flags(i.image.hash)
      if ((f & (A | B)) == (A | B) && (f & Stale) == 0) {
        found += i.image.hash
        f |= Stale
        flags(i.image.hash) = f
      }
      i.image.parents.foreach(p => push(images.getOrElse(p, load(p)), f))
    }
    // a candidate reachable from another candidate is not a best one
    found.filterNot(x => found.exists(y => y != x && isAncestor(c, repo, x, y))).toSeq
  }

  /** Whether `ancestor` is `descendant` or one of its ancestors. */
  def isAncestor(repo: String, ancestor: String, descendant: String): Boolean =
    engine.metastore.read(isAncestor(_, repo, ancestor, descendant))

  private[core] def isAncestor(c: java.sql.Connection, repo: String, ancestor: String, descendant: String): Boolean = {
    val target = MetaDao.getSeqImage(c, repo, ancestor).getOrElse(return false)
    val seen = mutable.HashSet.empty[String]
    val stack = mutable.Stack(descendant)
    while (stack.nonEmpty) {
      val h = stack.pop()
      if (h == ancestor) return true
      if (seen.add(h)) MetaDao.getSeqImage(c, repo, h).filter(_.seq > target.seq).foreach(i => i.image.parents.foreach(stack.push))
    }
    false
  }
}
