package versioned.spark.diff

import versioned.core.{Fragment, ObjectKind, ObjectMeta, TableVersion}

/**
 * How a row diff of two versions of one table (same schema and key) is computed, decided from the
 * metastore alone. Each version has one or two representations (logical, compacted); a pair of them
 * with the same fragment bounds lets the diff go fragment by fragment:
 *
 *  - equal chains: nothing to read;
 *  - chains that split into a common prefix followed only by DIFF objects on each side (one version
 *    extends the other, both extend a common ancestor, or a DIFF consolidation replaced some DIFFs):
 *    [[DiffPlan.Fast]], read from those extra DIFFs plus a lookup of the prefix's rows for their keys;
 *  - anything else (a SNAP after the split, e.g. a re-snapshot): compared whole ([[DiffPlan.ByFragment.slow]]).
 *
 * Among the pairs with equal bounds the cheapest is taken (rows of the extra DIFFs for fast fragments,
 * rows of both chains, weighted for the join, for the others). No pair with equal bounds: [[DiffPlan.Whole]].
 */
private[versioned] object DiffPlan {
  /** Which representation of a table version a plan reads. */
  sealed trait Rep
  case object Logical extends Rep
  case object Compacted extends Rep

  /**
   * A fragment diffed from its extra DIFFs: the chains split after their common prefix. `lower` / `upper`: the
   * fragment's bounds, within which its objects are read (the read rule, `read/FragmentBounds`).
   */
  final case class Fast(index: Int, prefix: Seq[String], extraFrom: Seq[String], extraTo: Seq[String],
                        lower: Option[Seq[Any]], upper: Option[Seq[Any]])

  /** The bounds (lower, upper) of fragment `i` of `fs`. */
  def boundsOf(fs: Seq[Fragment], i: Int): (Option[Seq[Any]], Option[Seq[Any]]) = (fs(i).lower, fs.lift(i + 1).flatMap(_.lower))

  sealed trait Plan
  /** Fragment by fragment over `from`'s representation `repFrom` and `to`'s `repTo` (same bounds). */
  final case class ByFragment(repFrom: Rep, repTo: Rep, fast: Seq[Fast], slow: Seq[Int]) extends Plan {
    def unchanged: Boolean = fast.isEmpty && slow.isEmpty
  }
  /** The representations have different bounds everywhere: compare the versions whole. */
  case object Whole extends Plan

  /** A full comparison reads both chains and joins them: weighted against reading extra DIFFs. */
  private val JoinWeight = 3L

  def representations(t: TableVersion): Seq[(Rep, Seq[Fragment])] =
    (Seq(Logical -> t.fragments) ++ t.compacted.map(Compacted -> _)).map { case (r, fs) => r -> normalized(fs) }

  /** A table without fragments (created empty) is one unbounded fragment with an empty chain, as writers see it. */
  private def normalized(fs: Seq[Fragment]): Seq[Fragment] = if (fs.isEmpty) Seq(Fragment(None, Nil)) else fs

  def plan(from: TableVersion, to: TableVersion, metas: Map[String, ObjectMeta]): Plan = {
    def rows(ids: Seq[String]): Long = ids.map(id => metas.get(id).map(_.rowCount).getOrElse(0L)).sum
    val candidates = for {
      (ra, fa) <- representations(from)
      (rb, fb) <- representations(to)
      if fa.map(_.lower) == fb.map(_.lower)
    } yield {
      val pairs = fa.zip(fb).zipWithIndex.filter { case ((x, y), _) => x.objects != y.objects }
      val split = pairs.map { case ((x, y), i) => i -> fast(i, x.objects, y.objects, metas, boundsOf(fa, i)) }
      val plan = ByFragment(ra, rb, split.flatMap(_._2), split.collect { case (i, None) => i })
      val cost = split.map {
        case (_, Some(f)) => rows(f.extraFrom) + rows(f.extraTo)
        case (i, None) => JoinWeight * (rows(fa(i).objects) + rows(fb(i).objects))
      }.sum
      (plan, cost, (ra == Logical) || (rb == Logical)) // ties: the representations readers use (compacted)
    }
    if (candidates.isEmpty) Whole else candidates.minBy(c => (c._2, c._3))._1
  }

  /** The split of two different chains at their common prefix, when only DIFFs follow it on both sides. */
  def fast(index: Int, a: Seq[String], b: Seq[String], metas: Map[String, ObjectMeta],
           bounds: (Option[Seq[Any]], Option[Seq[Any]])): Option[Fast] = {
    val common = a.zip(b).takeWhile { case (x, y) => x == y }.size
    val (ea, eb) = (a.drop(common), b.drop(common))
    def diffsOnly(ids: Seq[String]) = ids.forall(id => metas.get(id).exists(_.kind == ObjectKind.Diff))
    Option.when(diffsOnly(ea) && diffsOnly(eb))(Fast(index, a.take(common), ea, eb, bounds._1, bounds._2))
  }
}
