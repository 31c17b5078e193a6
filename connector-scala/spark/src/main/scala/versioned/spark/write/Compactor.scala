package versioned.spark.write

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.types.StructType
import versioned.core._
import versioned.core.format.{CarryForward, CompactionPolicy}
import versioned.spark.session._
import versioned.spark.format._
import versioned.spark.read.VersionedScan

/**
 * Bounded chains: rewrites fragments whose DIFF chain grew too long into one compacted SNAP each and
 * records the result as an equivalent representation of the same table version (the image hash does
 * not change; the original objects stay for history). Later commits build on the compacted form.
 */
private[versioned] object Compactor {
  /** The kernel's policy limits of a session's settings. */
  def limits(settings: Settings): CompactionPolicy.Limits =
    CompactionPolicy.Limits(settings.maxDiffRatio, settings.maxChain, settings.consolidateAfter, settings.fragmentRows)

  /** The kernel's compaction policy ([[CompactionPolicy.plan]]) for one table version. */
  def plan(snap: TableSnapshot, settings: Settings): CompactionPolicy.Plan = {
    val key = snap.layout.keyColumns
    CompactionPolicy.plan(snap.version.effectiveFragments, snap.objects,
      Option.when(key.size == 1 && !snap.layout.hidden)(key.head), limits(settings))
  }

  /** How many first parents [[carried]] looks back for a compacted form. */
  val CarryDepth: Int = CarryForward.Depth

  /**
   * A version's carried form ([[carried]]): `snap` with the compacted chains taken from an ancestor, complete once
   * `divisions` are written ([[divide]]).
   */
  final case class Carry(snap: TableSnapshot, divisions: Seq[CarryForward.Division])

  /**
   * `snap` (a version without a compacted form) with the compacted chains of its nearest first-parent ancestor
   * that has them, carried forward by the kernel's rule ([[CarryForward]]; the DIFFs added to fragments the
   * ancestor's compaction split are divided at their bounds). Ancestors are searched up to [[CarryDepth]] first
   * parents, while the table keeps its schema, key and fragment bounds; past that depth, `lastCompacted` (the
   * version a compaction of the table in this driver recorded last, [[CompactedHints]]) stands in, so a compaction
   * that fell further behind still starts from its own last result.
   * Commits planned while an ancestor was still being compacted (in the background) so start from the shorter
   * chains, the consolidation or split is not done again, and a compaction that fell behind several commits
   * does not leave their chains to grow to the re-snapshot limit.
   */
  def carried(engine: Engine, snap: TableSnapshot, lastCompacted: Option[String] = None): Option[Carry] = {
    val v = snap.version
    // Right(the nearest compacted ancestor, or None: a change of shape or the first commit ends the search); Left:
    // none within CarryDepth first parents
    @scala.annotation.tailrec
    def nearest(parents: Seq[String], depth: Int): Either[Unit, Option[TableVersion]] =
      if (parents.nonEmpty && depth >= CarryDepth) Left(())
      else parents.headOption.flatMap(p => engine.tableIfHeld(snap.repo, p, snap.table).map(p -> _)) match {
        case Some((_, t)) if !CarryForward.sameShape(v, t) => Right(None)
        case Some((_, t)) if t.compacted.isDefined => Right(Some(t))
        case Some((p, _)) => nearest(engine.image(snap.repo, p).parents, depth + 1)
        case None => Right(None)
      }
    // further back than CarryDepth, the version compacted last: its chains are a prefix of this version's
    // (checked per fragment by the rule) when the commits since only appended DIFFs to them
    def last: Option[TableVersion] = lastCompacted.flatMap(h => engine.tableIfHeld(snap.repo, h, snap.table))
    val ancestor = if (v.compacted.isDefined) None else nearest(snap.image.parents, 0).fold(_ => last, identity)
    // splits are by the first key of single-key tables (tailSplit): other refinements are not divided
    val divisible = snap.layout.keyColumns.size == 1 && !snap.layout.hidden
    for (pv <- ancestor; c <- CarryForward.carry(v, pv, divisible))
      yield Carry(snap.copy(version = v.copy(compacted = Some(c.fragments)),
        objects = snap.objects ++ engine.objects(pv.compacted.get.flatMap(_.objects))), c.divisions)
  }

  /**
   * Writes `c`'s divisions (a compaction of its own, under its own lease) and records the complete carried form;
   * returns it with the objects written.
   */
  private def divide(spark: SparkSession, engine: Engine, c: Carry): (TableSnapshot, Seq[ObjectMeta]) = {
    val snap = c.snap
    engine.leases.withLease(snap.repo, "compaction") { lease =>
      val work = DiffConsolidation.Work(spark, snap.layout, ObjectTarget(engine.config, lease.id), splits = false)
      val carriedForm = snap.version.compacted.get
      val keyType = snap.layout.keyTypes.head
      val written = c.divisions.map { d =>
        val bounds = (1 until d.parts).map(j => Values.toInternal(carriedForm(d.at + j).lower.get.head, keyType))
        // the read rule: the DIFFs within the logical fragment the division covers
        val within = versioned.spark.read.FragmentBounds(snap.layout.keyColumns, snap.layout.keyTypes, carriedForm(d.at).lower,
          carriedForm.lift(d.at + d.parts).flatMap(_.lower))
        d -> work.divide(d.diffs.map(id => within.file(snap.config, snap.objects(id))), d.diffs, bounds)
      }
      val appended = written.flatMap { case (d, parts) => parts.zipWithIndex.collect { case (Some(m), j) => (d.at + j) -> m } }.toMap
      val next = carriedForm.zipWithIndex.map { case (f, i) => appended.get(i).fold(f)(m => f.copy(objects = f.objects :+ m.id)) }
      val metas = appended.values.toSeq
      record(engine, snap.repo, snap.image.hash, snap.table, next, metas, Some(lease))
      log.info(s"versioned: compaction ${snap.repo}.${snap.table}@${snap.image.shortHash} carried a split form forward: " +
        s"divided the DIFFs of ${c.divisions.size} split fragment(s) into ${metas.size} new object(s)")
      (snap.copy(version = snap.version.copy(compacted = Some(next)), objects = snap.objects ++ metas.map(m => m.id -> m)), metas)
    }
  }

  /**
   * Evaluates [[plan]] on `req`'s table at `image` (with its parent's compacted chains carried forward)
   * and runs it; a carried form alone is recorded as it is. Returns the number of objects written.
   * `slots` and `pause`: see [[compact]]; `lastCompacted`: see [[carried]].
   */
  def maybeCompact(spark: SparkSession, engine: Engine, req: WriteRequest, image: Image, settings: Settings,
                   slots: Int = Int.MaxValue, pause: () => Unit = () => (), lastCompacted: Option[String] = None): Int = {
    val loaded = TableSnapshot.load(engine, req.ident.repo, req.ident.table, image)
    val carry = carried(engine, loaded, lastCompacted)
    val (snap, divided) = carry match {
      case Some(c) if c.divisions.nonEmpty => divide(spark, engine, c)
      case other => (other.fold(loaded)(_.snap), Seq.empty)
    }
    val p = plan(snap, settings)
    if (!p.isEmpty) divided.size + compact(spark, engine, snap, p.resnapshot, req.locationOptions, p.runs, p.splits, slots, pause).size
    else {
      // no object to write: one metastore transaction (which checks that the objects still exist)
      carry.filter(_.divisions.isEmpty).foreach(c => record(engine, c.snap.repo, image.hash, c.snap.table,
        c.snap.version.compacted.get, Seq.empty, None))
      divided.size
    }
  }

  /**
   * Compacts `fragments` (indexes into the effective representation) of one table version to one
   * SNAP each, merges each of `runs` (fragment -> consecutive DIFF ids) into one DIFF, and tries a tail
   * split first for the fragments in `splits` (those whose split is refused get the SNAP); all of it
   * is recorded together as the version's compacted representation. The work runs as jobs of at most `slots`
   * fragments each, one task per fragment (DIFF merges first, on the driver when a group's DIFFs hold at most
   * `localCommitMaxRows` rows or in local mode, then SNAP rewrites), and `pause` is called before each group: background
   * compaction leaves task slots to the commits that run meanwhile and waits for them between its jobs
   * ([[Compactions]]).
   */
  def compact(spark: SparkSession, engine: Engine, snap: TableSnapshot, fragments: Set[Int],
              options: Map[String, String], runs: Map[Int, Seq[String]] = Map.empty,
              splits: Map[Int, DiffConsolidation.Split] = Map.empty, slots: Int = Int.MaxValue,
              pause: () => Unit = () => ()): Seq[ObjectMeta] =
    Jobs.described(spark, s"compaction ${snap.repo}.${snap.table}@${snap.image.shortHash}") {
      engine.leases.withLease(snap.repo, "compaction") { lease =>
      val t0 = System.nanoTime()
      val metas = rewrite(spark, engine, snap, fragments, options, runs, splits, lease, math.max(1, slots), pause)
      log.info(s"versioned: compaction ${snap.repo}.${snap.table}@${snap.image.shortHash} rewrote ${fragments.size} " +
        s"fragment(s), consolidated ${runs.size} (${runs.values.map(_.size).sum} DIFFs), split ${splits.size}: " +
        s"${metas.size} new object(s) in ${(System.nanoTime() - t0) / 1000000} ms (rests and waits for writes included)")
        metas
      }
    }

  private val log = org.slf4j.LoggerFactory.getLogger(getClass)

  private def rewrite(spark: SparkSession, engine: Engine, snap: TableSnapshot, fragments: Set[Int],
                      options: Map[String, String], runs: Map[Int, Seq[String]], splits: Map[Int, DiffConsolidation.Split],
                      lease: Lease, slots: Int, pause: () => Unit): Seq[ObjectMeta] = {
    val target = ObjectTarget(engine.config, lease.id)
    val layout = snap.layout
    val base = snap.version.effectiveFragments
    val tasks = runs.toSeq.map { case (i, ids) => DiffConsolidation.Task(i, ids) } ++
      splits.toSeq.map { case (i, s) => DiffConsolidation.Task(i, base(i).objects.tail, Some(s)) }
    // the readers and writers are made once for all groups. Unless driver-side work is off (localCommitMaxRows
    // = 0), a group is merged on the driver when its DIFFs hold few rows, or in local mode whatever their size:
    // there a task would run in this JVM too (same heap), but hold one of the task slots the commits need until
    // it ends, while the compaction thread only shares the CPU (and is paced), as many fragments at once as a job.
    lazy val work = DiffConsolidation.Work(spark, layout, target, splits = splits.nonEmpty)
    val driverRows = Warehouses.localCommitMaxRows(spark)
    val sc = spark.sparkContext
    val merged = tasks.sortBy(_.fragment).grouped(slots).flatMap { group =>
      pause()
      if (driverRows > 0 && (sc.isLocal || group.flatMap(_.diffs).map(snap.objects(_).rowCount).sum <= driverRows))
        DiffConsolidation.runOnDriver(snap, group, work, if (sc.isLocal) math.min(slots, sc.defaultParallelism) else Jobs.DriverThreads)
      else DiffConsolidation.run(spark, snap, group, work)
    }.toMap
    val split = merged.filter { case (i, r) => splits.contains(i) && !r.rewrite }
    val rewrite = fragments -- split.keySet
    val written =
      if (rewrite.isEmpty) Seq.empty
      // in groups of at most `slots` fragments, one job each (a fragment is read by one task)
      else rewrite.toSeq.sorted.grouped(slots).toSeq.flatMap { group =>
        pause()
        val restricted = snap.restrictedTo(group.toSet)
        val planned = new VersionedScan(restricted, layout.physicalSchema, Nil).partitions.map(_.index)
        val df = versioned.spark.read.PinnedRead.table(spark, options, TableIdent(snap.repo, snap.table),
          snap.image.hash, Some(group))
        FragmentWriter.write(df, layout.physicalSchema, layout.keyColumns, ObjectKind.Snap, target, Some(planned))
      }
    val byFrag = written.map(w => w.fragment -> w).toMap
    val next = base.zipWithIndex.flatMap { case (f, i) =>
      if (rewrite.contains(i)) Seq(f.copy(objects = byFrag.get(i).map(w => Seq(w.meta.id)).getOrElse(Seq.empty)))
      else split.get(i) match {
        case Some(r) => f.copy(objects = f.objects.take(1) ++ r.diff.map(_.id)) +:
          r.tail.toSeq.map(t => Fragment(Some(t.firstKey), Seq(t.meta.id)))
        case None => Seq(merged.get(i).flatMap(_.diff).fold(f) { m =>
          val at = f.objects.indexOfSlice(runs(i)) // a run is consecutive, not always at the end (tier 2)
          f.copy(objects = f.objects.take(at) ++ (m.id +: f.objects.drop(at + runs(i).size)))
        })
      }
    }
    val metas = written.map(w => w.meta.copy(parents = base(w.fragment).objects)) ++
      merged.values.toSeq.filterNot(_.rewrite).flatMap(r => r.diff.toSeq ++ r.tail.map(_.meta))
    record(engine, snap.repo, snap.image.hash, snap.table, next, metas, Some(lease))
    metas
  }

  /** Records `compacted` as the form of `image`'s version of the table and notes it ([[CompactedHints]]). */
  private def record(engine: Engine, repo: String, image: String, table: String, compacted: Seq[Fragment],
                     metas: Seq[ObjectMeta], lease: Option[Lease]): Unit = {
    engine.setCompacted(repo, image, table, compacted, metas, lease)
    CompactedHints.noted(engine, repo, table, image)
  }
}
