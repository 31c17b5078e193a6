package versioned.core.format

import versioned.core.{Fragment, ObjectKind, ObjectMeta}

/**
 * The compaction policy: which fragments of a table version are rewritten, and how, decided from the
 * metastore's object records alone (docs: bench/README.md, "Compaction policy"). Per fragment:
 *  - a compacted SNAP once its DIFFs hold `maxDiffRatio` of its SNAP's rows (the SNAP's rows count at
 *    least as the table's largest SNAP, capped at the target fragment size). Scans of a SNAP under DIFFs
 *    cost little more than the SNAP alone (the measured curve), so the ratio is high (1.0):
 *    re-snapshotting is the expensive step (the whole fragment);
 *  - under the ratio, once its chain reaches `maxChain` DIFFs, its DIFFs merged into one DIFF but for a
 *    leading run of large consolidated ones, each at least the size of all after it ([[limitRun]]: only
 *    changed rows are rewritten, and recent ones only), which shortens the chain almost as much as a new SNAP
 *    would, for the cost of its recent changes instead of the fragment's; a SNAP only when merging cannot
 *    shorten it (a limit of 1, or a single DIFF). A fast writer outruns a paced background compaction by tens of
 *    commits between two of its runs, so chains do reach the limit: with a SNAP rewrite there, a stream of
 *    1,000-row batches into 10M rows rewrote the whole table every few hundred batches;
 *  - otherwise tiered consolidation, which rewrites only changed rows: once `consolidateAfter` commit
 *    DIFFs follow the last SNAP or consolidated DIFF they are merged into one (tier 1); once
 *    `consolidateAfter` consolidated DIFFs are in a row (and fewer commit DIFFs follow), those are
 *    merged into one (tier 2), so chains stay under about 2 x `consolidateAfter` objects;
 *  - a fragment over the ratio, holding at least half the target fragment size, whose changes are
 *    mostly keyed above its SNAP (appends) is split instead: the appended rows become a new fragment's
 *    SNAP and the rest one merged DIFF.
 */
object CompactionPolicy {
  /** The policy's settings (`spark.versioned.compaction.*`, `spark.versioned.fragment.targetRows`). */
  final case class Limits(maxDiffRatio: Double, maxChain: Int, consolidateAfter: Int, fragmentRows: Long)

  /**
   * A tail split: the merged changes keyed at or below `snapMax` (the SNAP's largest key, canonical) stay a
   * DIFF of at most `maxBodyRows` rows; those above become a new fragment's SNAP.
   */
  final case class Split(snapMax: Any, maxBodyRows: Long)

  /**
   * What the policy selects for one table version: fragments rewritten as one SNAP each, runs of DIFFs
   * merged into one DIFF (fragment -> consecutive DIFF ids), tail splits tried first for some fragments.
   */
  final case class Plan(resnapshot: Set[Int], runs: Map[Int, Seq[String]], splits: Map[Int, Split]) {
    def isEmpty: Boolean = resnapshot.isEmpty && runs.isEmpty
  }

  def diffCount(f: Fragment, objects: Map[String, ObjectMeta]): Int = f.objects.count(id => objects(id).kind == ObjectKind.Diff)

  private def snapRows(f: Fragment, objects: Map[String, ObjectMeta]): Long =
    f.objects.map(objects).filter(_.kind == ObjectKind.Snap).map(_.rowCount).sum

  /**
   * Rows in a fragment's DIFFs relative to its SNAP's rows, or to `floor` rows when the SNAP is smaller
   * (a DIFF-only chain counts as 1.0). The floor keeps a small fragment, such as the tail split off a
   * growing table, from being rewritten after a handful of changes. A shared DIFF (format 2) counts as the
   * fragment's estimated share of it: its rows in proportion to the fragment's SNAP rows among those of the
   * version's fragments listing it (`weights`, [[sharedWeights]]), as for changes spread over the table's keys, so
   * one scattered change set does not make every fragment it touches look rewritten.
   */
  def diffRatio(f: Fragment, objects: Map[String, ObjectMeta], floor: Long = 0L,
                weights: Map[String, Long] = Map.empty): Double = {
    val snap = snapRows(f, objects)
    val diffRows = f.objects.map(id => id -> objects(id)).collect { case (id, m) if m.kind == ObjectKind.Diff =>
      if (m.shared) m.rowCount.toDouble * math.max(1L, snap) / math.max(1L, weights.getOrElse(id, math.max(1L, snap)))
      else m.rowCount.toDouble
    }.sum
    if (diffRows == 0) 0.0 else if (snap == 0) 1.0 else diffRows / math.max(snap, floor)
  }

  /**
   * For each shared object of `frags`, the SNAP rows (at least 1 per fragment) of the fragments listing it: the
   * divisor of a fragment's share of it ([[diffRatio]]).
   */
  def sharedWeights(frags: Seq[Fragment], objects: Map[String, ObjectMeta]): Map[String, Long] =
    frags.flatMap(f => f.objects.distinct.filter(id => objects(id).shared).map(_ -> math.max(1L, snapRows(f, objects))))
      .groupBy(_._1).map { case (id, ws) => id -> ws.map(_._2).sum }

  /** The ratio floor of a table version: its largest SNAP, capped at the target fragment size. */
  def ratioFloor(frags: Seq[Fragment], objects: Map[String, ObjectMeta], targetRows: Long): Long =
    math.min(targetRows, frags.map(snapRows(_, objects)).foldLeft(0L)(math.max))

  /** A DIFF written by a consolidation: it records the two or more DIFFs it merged as its parents. */
  private def consolidated(m: ObjectMeta): Boolean = m.kind == ObjectKind.Diff && m.parents.size > 1

  /**
   * The DIFFs at the end of a fragment's chain that were written by commits (not by an earlier
   * consolidation, whose objects record the two or more DIFFs they merged as parents).
   */
  def trailingCommitDiffs(f: Fragment, objects: Map[String, ObjectMeta]): Seq[String] =
    f.objects.reverse.takeWhile(id => objects(id).kind == ObjectKind.Diff && !consolidated(objects(id))).reverse

  /**
   * The consolidated DIFFs (objects that record the two or more DIFFs they merged as parents) directly
   * before a fragment's trailing commit DIFFs.
   */
  def consolidatedRun(f: Fragment, objects: Map[String, ObjectMeta]): Seq[String] = {
    val before = f.objects.dropRight(trailingCommitDiffs(f, objects).size)
    before.reverse.takeWhile(id => consolidated(objects(id))).reverse
  }

  /**
   * A fragment's DIFFs when they are the rest of its chain after its SNAP (or the whole chain): what a full
   * consolidation merges into one DIFF (empty when a SNAP follows a DIFF).
   */
  def chainDiffs(f: Fragment, objects: Map[String, ObjectMeta]): Seq[String] = {
    val diffs = f.objects.dropWhile(id => objects(id).kind == ObjectKind.Snap)
    if (diffs.forall(id => objects(id).kind == ObjectKind.Diff)) diffs else Nil
  }

  /**
   * What a chain at the length limit `maxChain` (above 1) merges: its [[chainDiffs]] but for a leading run of large
   * consolidated DIFFs, each holding at least as many rows as all the DIFFs after it (not shared ones: merging those
   * pushes them down into the fragment), and at most `maxChain - 2` of them, so that the chain ends below the limit.
   * The DIFFs kept halve (at least) from one to the next, so at most about log2 of the changed rows are kept; a row
   * is rewritten about as many times before its fragment gets a SNAP, where merging the whole chain each time would
   * rewrite every change since the SNAP at every limit (a fast writer reaches it every few hundred commits).
   */
  def limitRun(f: Fragment, objects: Map[String, ObjectMeta], maxChain: Int): Seq[String] = {
    val diffs = chainDiffs(f, objects)
    val after = diffs.map(objects(_).rowCount).scanRight(0L)(_ + _).tail // rows of the DIFFs after each
    val kept = diffs.indices.takeWhile { i =>
      val m = objects(diffs(i))
      i < maxChain - 2 && consolidated(m) && !m.shared && m.rowCount >= after(i)
    }.size
    diffs.drop(kept)
  }

  /**
   * A tail split for a fragment over the ratio (not one over the chain limit only): possible when the table
   * has one key column (`singleKey`), the chain starts with a non-empty SNAP, and the merged changes at or
   * below the SNAP's largest key stay under half the ratio (else the SNAP is rewritten).
   */
  private def tailSplit(f: Fragment, objects: Map[String, ObjectMeta], singleKey: Option[String], ratio: Double,
                        floor: Long): Option[Split] = for {
    k <- singleKey
    s <- f.objects.headOption.map(objects) if s.kind == ObjectKind.Snap && s.rowCount > 0 && f.objects.size > 1
    max <- s.maxValues.get(k)
  } yield Split(max, (ratio * math.max(s.rowCount, floor) / 2).toLong)

  /**
   * The plan for the effective fragments `frags` of a table version whose objects are `objects`;
   * `singleKey` names the key column of a table keyed by one column (tail splits need one).
   */
  def plan(frags: Seq[Fragment], objects: Map[String, ObjectMeta], singleKey: Option[String], limits: Limits): Plan = {
    val floor = ratioFloor(frags, objects, limits.fragmentRows)
    val weights = sharedWeights(frags, objects)
    val overRatio = frags.indices.filter(i => diffRatio(frags(i), objects, floor, weights) >= limits.maxDiffRatio).toSet
    val atLimit = frags.indices.filter(i => diffCount(frags(i), objects) >= limits.maxChain).toSet -- overRatio
    // a chain at the limit, under the ratio: its DIFFs (two or more, since the limit is) merged into one but for large
    // consolidated ones first in it (limitRun), unless one DIFF is still at the limit (a limit of 1)
    val merged = if (limits.maxChain == 1) Map.empty[Int, Seq[String]]
      else atLimit.toSeq.map(i => i -> limitRun(frags(i), objects, limits.maxChain)).filter(_._2.nonEmpty).toMap
    val resnapshot = overRatio ++ (atLimit -- merged.keySet)
    // Only fragments at least half the target size are split: smaller ones are cheap to rewrite, and
    // splitting them would leave a small table in many tiny fragments.
    val splits = overRatio.filter(i => snapRows(frags(i), objects) >= limits.fragmentRows / 2)
      .flatMap(i => tailSplit(frags(i), objects, singleKey, limits.maxDiffRatio, floor).map(i -> _)).toMap
    val runs = merged ++ frags.indices.filterNot(i => resnapshot.contains(i) || merged.contains(i)).flatMap { i =>
      val commits = trailingCommitDiffs(frags(i), objects)
      if (commits.size >= limits.consolidateAfter) Some(i -> commits)
      else Some(consolidatedRun(frags(i), objects)).filter(_.size >= limits.consolidateAfter).map(i -> _)
    }.toMap
    Plan(resnapshot, runs, splits)
  }
}
