package versioned.core.format

import versioned.core.{Fragment, TableVersion}

/**
 * Carrying a compacted form forward (docs/FORMAT.md, "Compacted representations"): a version `v` of a table
 * whose fragments' chains are an ancestor's chains plus DIFFs appended since has the same rows as the ancestor's
 * compacted chains plus those DIFFs. Compaction uses it to start from its own last result instead of the logical
 * chains; a commit planned on a parent without a compacted form uses it so its chains build on the shorter ones
 * (its metadata then stays as long as the compacted chains, not the history since the last re-snapshot).
 *
 * The rule, per fragment `i` of `v` (the ancestor has the same schema, key and fragment bounds as `v`):
 *  - `v`'s chain starts with the ancestor's logical chain: the ancestor's compacted chain(s) for that fragment,
 *    then the DIFFs `v` has after it;
 *  - when the ancestor's compaction split the fragment (a tail split: several compacted fragments for it), the
 *    split fragments, and the DIFFs that follow divided at the split bounds ([[Division]]), which writes objects:
 *    only a compaction of a table split by its one key does that (`divisible`); otherwise the fragment keeps
 *    `v`'s chain (so a commit never changes its table's fragment bounds by carrying);
 *  - anything else (the chain does not extend the ancestor's logical one): `v`'s chain as it is.
 */
object CarryForward {
  /** How many first parents a search for the ancestor whose compacted form was carried looks back. */
  val Depth = 64

  /**
   * DIFFs that commits appended to a fragment after an ancestor's compaction split it into `parts` fragments
   * (the carried fragments `at` .. `at + parts - 1`): to be merged and divided at those fragments' bounds, one
   * DIFF appended to each.
   */
  final case class Division(at: Int, parts: Int, diffs: Seq[String])

  /** Carried chains (fragments of the carried form) and the divisions they still need. */
  final case class Carried(fragments: Seq[Fragment], divisions: Seq[Division])

  /** Whether `ancestor` can lend its compacted form to `v`: same schema, key and fragment bounds, and compacted. */
  def sameShape(v: TableVersion, ancestor: TableVersion): Boolean =
    ancestor.fragments.map(_.lower) == v.fragments.map(_.lower) && ancestor.schemaJson == v.schemaJson &&
      ancestor.primaryKey == v.primaryKey && ancestor.hiddenKey == v.hiddenKey

  /**
   * `v`'s chains carried from `ancestor`'s compacted form by the rule above; None when `ancestor` has no
   * compacted form, has another shape, or carrying changes nothing.
   */
  def carry(v: TableVersion, ancestor: TableVersion, divisible: Boolean): Option[Carried] =
    for {
      byFragment <- aligned(v, ancestor)
      carried <- {
        val divisions = Vector.newBuilder[Division]
        var at = 0
        val next = v.fragments.indices.flatMap { i =>
          val (logical, own, g) = (ancestor.fragments(i).objects, v.fragments(i).objects, byFragment(i))
          val extra = own.drop(logical.size)
          val out =
            if (!own.startsWith(logical) || (g.size == 1 && logical == g.head.objects) || (g.size > 1 && !divisible))
              Seq(v.fragments(i))
            else if (g.size == 1) Seq(v.fragments(i).copy(objects = g.head.objects ++ extra))
            else {
              if (extra.nonEmpty) divisions += Division(at, g.size, extra)
              g
            }
          at += out.size
          out
        }
        val d = divisions.result()
        Option.when(next != v.fragments || d.nonEmpty)(Carried(next, d))
      }
    } yield carried

  /**
   * Whether `v` was planned on `ancestor`'s compacted form: each fragment whose compacted chain in `ancestor` differs
   * from its logical one (and was not split) has a chain in `v` that starts with the compacted chain. True when they
   * differ in shape or `ancestor` has no compacted form. A version planned before that form was recorded builds on
   * the logical chains or an older compacted form instead: its chains carry `ancestor`'s form by the rule (when they
   * extend its logical chains), but the commits planned on them after that, which build on `ancestor`'s form, do not
   * extend them; so a compaction that records a form for it leaves those commits' chains without a form to carry.
   */
  def buildsOn(v: TableVersion, ancestor: TableVersion): Boolean =
    aligned(v, ancestor).forall(byFragment => v.fragments.indices.forall { i =>
      val g = byFragment(i)
      g.size > 1 || g.head.objects == ancestor.fragments(i).objects || v.fragments(i).objects.startsWith(g.head.objects)
    })

  /** `ancestor`'s compacted fragments by `v`'s fragment they lie in, when it has a compacted form and `v`'s shape. */
  private def aligned(v: TableVersion, ancestor: TableVersion): Option[Seq[Seq[Fragment]]] =
    ancestor.compacted.filter(_ => sameShape(v, ancestor)).flatMap(groups(v.fragments.map(_.lower), _))

  /** The compacted fragments by the logical fragment (of `bounds`) they lie in; None when they do not line up. */
  private def groups(bounds: Seq[Option[Seq[Any]]], compacted: Seq[Fragment]): Option[Seq[Seq[Fragment]]] = {
    val starts = bounds.toSet
    val grouped = compacted.foldLeft(Vector.empty[Vector[Fragment]]) { (acc, f) =>
      if (acc.isEmpty || starts.contains(f.lower)) acc :+ Vector(f) else acc.init :+ (acc.last :+ f)
    }
    Option.when(grouped.map(_.head.lower) == bounds)(grouped)
  }
}
