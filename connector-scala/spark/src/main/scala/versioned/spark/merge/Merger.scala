package versioned.spark.merge

import versioned.core.format.WriteMode

import org.apache.spark.sql.{functions, DataFrame, Row, SparkSession}
import org.apache.spark.sql.functions.{col => _, _}
import org.apache.spark.sql.types._
import org.apache.spark.storage.StorageLevel
import versioned.core._
import versioned.spark.session.TableIdent
import versioned.spark.session.{Jobs, Settings}
import versioned.spark.write.{CommitPlanner, LocalCommit, ObjectTarget, Rebase, StagedInput, WriteRequest}

/**
 * Merge, cherry-pick and revert: each is a three-way merge onto a branch ([[TablePlans]], [[ThreeWay]])
 * committed through the one commit path ([[Engine.commit]]) — a merge with the source as second
 * parent, a cherry-pick or revert with one parent. When the branch moves while the merge is prepared,
 * it is prepared again on the new head (bounded attempts, as for writes).
 */
private[versioned] object Merger {
  /** Schema of a merge's conflicts: table, key (JSON of the key columns), column, base, ours, theirs, kind. */
  def ConflictSchema: StructType = TablePlans.schema
}

private[versioned] final class Merger(spark: SparkSession, engine: Engine) {
  private val location = versioned.spark.session.Warehouses.locationOf(engine.config)
  private val log = org.slf4j.LoggerFactory.getLogger(getClass)

  /** Merges revision `source` into branch `target`. */
  def merge(repo: String, source: String, target: String, opts: MergeOptions): MergeOutcome =
    Jobs.described(spark, s"merge $source into $repo@$target")(mergeNamed(repo, source, target, opts))

  private def mergeNamed(repo: String, source: String, target: String, opts: MergeOptions): MergeOutcome = {
    if (source == target) throw Errors.invalidOption(s"Cannot merge branch '$target' into itself. Name another source.")
    val theirs = engine.resolve(repo, Revision.Spec(source))
    // a branch whose rule requires merges moves only by merge commits (what PostgreSQL's trigger also accepts)
    val mergeCommitOnly = engine.protections.mergeCommitOnly(repo, target)
    attempts(repo, target) { ours =>
      val bases = engine.ancestry.mergeBases(repo, ours.hash, theirs.hash)
      if (bases.isEmpty && !opts.allowUnrelated) throw new NoCommonAncestorException(s"'$source' and '$target' of " +
        s"'$repo' share no history. Merge with allow unrelated histories (merge argument allow_unrelated) to merge them as if their base were empty.")
      if (bases.size > 1) log.info(s"versioned: merge $source into $target of $repo has ${bases.size} best common " +
        s"ancestors (criss-cross merges); using the newest, ${bases.head.take(12)}")
      val base = bases.headOption
      if (base.contains(theirs.hash)) MergeOutcome.done(spark, MergeOutcome.UpToDate, None, base, fastForward = false)
      else if (opts.squash) {
        if (mergeCommitOnly) throw new ProtectedRefException(s"Branch '$target' of '$repo' is protected by a rule that " +
          "requires merges (require_merge): a squash merge records a commit with one parent, not a merge commit, so it " +
          "is refused. Nothing was committed. Merge without squash, or change the rule.")
        val message = squashMessage(repo, source, target, ours, theirs, opts.message)
        threeWay(repo, target, ours, base.map(engine.image(repo, _)), Some(theirs), opts, message, Nil)
      }
      else if (base.contains(ours.hash) && opts.fastForward != MergeOptions.Never && !mergeCommitOnly) {
        if (opts.dryRun) {
          opts.probe.foreach(_(theirs)) // the image a fast-forward would land is the source's
          MergeOutcome.done(spark, MergeOutcome.FastForward, Some(theirs.hash), base, fastForward = true)
        }
        else {
          engine.refs.resetBranch(repo, target, Revision.Spec(theirs.hash), expected = Some(ours.hash), merge = true)
          log.info(s"versioned: merge $repo $source into $target: fast-forward to ${theirs.shortHash}")
          MergeOutcome.done(spark, MergeOutcome.FastForward, Some(theirs.hash), base, fastForward = true)
        }
      } else {
        if (opts.fastForward == MergeOptions.Only && mergeCommitOnly) throw new ProtectedRefException(s"Branch " +
          s"'$target' of '$repo' is protected by a rule that requires merges: a merge into it always records a merge " +
          "commit, and fast_forward='only' refuses one. Nothing was committed. Merge with fast_forward='auto'.")
        if (opts.fastForward == MergeOptions.Only) throw new MergeConflictException(s"'$target' of '$repo' is not an " +
          s"ancestor of '$source', so it cannot be fast-forwarded and fast_forward='only' refuses a merge commit. " +
          "Nothing was committed. Merge with fast_forward='auto', or rebase the source first.")
        val message = opts.message.getOrElse(s"merge $source into $target")
        threeWay(repo, target, ours, base.map(engine.image(repo, _)), Some(theirs), opts, message, Seq(theirs.hash))
      }
    }
  }

  /**
   * A squash merge's message: the given message (default: "squash merge SOURCE into TARGET"), then one line per
   * squashed commit (reachable from the source, not from the target's head), newest first: short hash, first line.
   */
  private def squashMessage(repo: String, source: String, target: String, ours: Image, theirs: Image,
                            message: Option[String]): String = {
    val theirsOnly = engine.history.reachable(repo, Seq(theirs.hash)) -- engine.history.reachable(repo, Seq(ours.hash))
    val squashed = engine.history.logOfImage(repo, theirs.hash, Int.MaxValue).filter(e => theirsOnly(e.image.hash))
    val lines = squashed.map(e => s"* ${e.image.shortHash} ${e.image.message.linesIterator.nextOption().getOrElse("")}")
    (message.getOrElse(s"squash merge $source into $target") +: (s"\nSquashed ${squashed.size} commits:" +: lines))
      .mkString("\n")
  }

  /**
   * Applies the change `commit` made (against its parent number `parent`, 1-based; required for a
   * merge commit) onto branch `onto` (cherry-pick), or its inverse (revert).
   */
  def pick(repo: String, commit: String, onto: String, parent: Option[Int], revert: Boolean,
           opts: MergeOptions): MergeOutcome =
    Jobs.described(spark, s"${if (revert) "revert" else "cherry-pick"} $commit onto $repo@$onto")(
      pickNamed(repo, commit, onto, parent, revert, opts))

  private def pickNamed(repo: String, commit: String, onto: String, parent: Option[Int], revert: Boolean,
                        opts: MergeOptions): MergeOutcome = {
    val c = engine.resolve(repo, Revision.Spec(commit))
    val verb = if (revert) "revert" else "cherry-pick"
    val p = c.parents match {
      case Seq() => if (parent.isDefined) throw Errors.invalidOption(s"${c.shortHash} has no parent to $verb against.") else None
      case Seq(only) => if (parent.exists(_ != 1)) throw Errors.invalidOption(
        s"${c.shortHash} has one parent; parent must be 1 or omitted.") else Some(only)
      case many => parent match {
        case None => throw Errors.invalidOption(s"${c.shortHash} is a merge commit with ${many.size} parents; say which " +
          s"side to $verb against: parent 1 to ${many.size} (1 = the branch it was merged into).")
        case Some(i) if i < 1 || i > many.size => throw Errors.invalidOption(
          s"Parent $i is out of range: ${c.shortHash} has ${many.size} parents; give parent 1 to ${many.size}.")
        case Some(i) => Some(many(i - 1))
      }
    }
    val parentImage = p.map(engine.image(repo, _))
    val message = opts.message.getOrElse(s"$verb ${c.shortHash}: ${c.message}")
    attempts(repo, onto) { ours =>
      if (revert) threeWay(repo, onto, ours, Some(c), parentImage, opts, message, Nil)
      // a cherry-pick keeps the picked commit's author (as git and Dolt do) and records who picked it
      else threeWay(repo, onto, ours, parentImage, Some(c), opts.copy(author = c.author), message +
        s"\n\n(cherry picked from commit ${c.hash} by ${opts.author})", Nil)
    }
  }

  /** The head of `branch`, which must be a branch (not a tag or lock), with retries when it moves. */
  private def attempts(repo: String, branch: String)(run: Image => MergeOutcome): MergeOutcome = {
    if (!engine.repositoryExists(repo)) throw new RepositoryNotFoundException(repo)
    val refs = engine.refs.all(repo)
    if (refs.exists(r => r.kind != RefKind.Branch && (r.shortName == branch))) throw new ImmutableRefException(
      s"'$branch' of '$repo' is a ${refs.find(_.shortName == branch).get.kind}; only a branch can take a merge. " +
        "Create a branch from it first.")
    def head() = engine.writableHead(repo, branch).getOrElse(throw new RefNotFoundException(
      s"Branch '$branch' does not exist in repository '$repo'."))
    Rebase.retrying(engine, Some(head()))(h => run(h.get))((_, _) => true)
  }

  private def threeWay(repo: String, branch: String, ours: Image, base: Option[Image], theirs: Option[Image],
                       opts: MergeOptions, message: String, mergeParents: Seq[String]): MergeOutcome = {
    val settings = Settings.of(spark)
    val plans = new TablePlans(spark, engine, location, repo, base, ours, theirs, opts.strategy,
      settings.localCommitMaxRows).plans()
    val resolved = Resolutions.apply(spark, plans, opts.resolutions)
    // the changes in the DIFF layout, kept (unless they derive from rows on the driver): counted here, then
    // written by the commit without computing them again
    val held = resolved.map {
      case r: TablePlan.Rows =>
        val changes = r.changes.select(r.layout.diffSchema.fieldNames.toSeq.map(versioned.spark.format.Columns.col): _*)
        r.copy(changes = if (r.local) changes else changes.persist(StorageLevel.MEMORY_AND_DISK))
      case other => other
    }
    val release = () => held.foreach { case r: TablePlan.Rows => (r.changes +: r.cached).foreach(_.unpersist()); case _ => () }
    try {
      // a merge whose every table plan is on the driver counts its conflicts there too (no job)
      val onDriver = held.forall { case r: TablePlan.Rows => r.local; case _ => true }
      val conflicts = if (onDriver) TablePlans.publicConflicts(spark, held)
        else TablePlans.publicConflicts(spark, held).persist(StorageLevel.MEMORY_AND_DISK)
      val maxLocal = settings.localCommitMaxRows
      // a whole-table conflict (schema, drop) that the strategy settles is what the strategy does, for the stats, the
      // work and the commit alike: strategy theirs takes their version (a take), ours keeps the target's (reported as
      // `keep`); the conflicts above are those of the plans as they were
      val settled = held.map {
        case w: TablePlan.Whole if opts.strategy == Strategy.Theirs => TablePlan.Take(w.table, w.theirsUpdate)
        case p => p
      }
      // the merged changes of each table, on the driver when there are few: counted there and written from there
      val (stats, local) = Jobs.described(spark, s"merge into $repo@$branch") {
        val local = held.collect {
          case l: TablePlan.Local => Some(l.table -> l.changes)
          case r: TablePlan.Rows if r.target.isEmpty =>
            (if (r.local) Some(LocalCommit.collect(r.changes)) else LocalCommit.collectSmall(r.changes, maxLocal))
              .map(r.table -> _) }.flatten.toMap
        val takes = settled.collect { case TablePlan.Take(t, _) => t }
        // every table taken whole is counted at once (most on the driver: a publish of many tables is pointer moves)
        val takenCounts = theirs.filter(_ => takes.nonEmpty).fold(Map.empty[String, (Long, Long)])(to =>
          versioned.spark.diff.DiffSummary.changeCounts(spark, engine, repo, ours, to, takes))
        (settled.map {
          case TablePlan.Take(t, u) => taken(repo, ours, theirs, t, u, takenCounts)
          case w: TablePlan.Whole if opts.strategy == Strategy.Ours => TableStat(w.table, "keep", 0, 0)
          case p => TableStat.of(p, local.get(p.table))
        }, local)
      }
      val anyConflicts = held.exists { case r: TablePlan.Rows => r.conflicts.isDefined; case _: TablePlan.Whole => true
        case _ => false }
      val conflictCount = if (!anyConflicts) 0L else if (onDriver) LocalCommit.collect(conflicts).size.toLong
        else conflicts.count()
      val baseHash = base.map(_.hash)
      if (conflictCount > 0 && opts.strategy == Strategy.Fail)
        return MergeOutcome(MergeOutcome.Conflicts, None, fastForward = false, baseHash, stats, conflicts, conflictCount)
      val work = settled.exists {
        case _: TablePlan.Take => true
        case _: TablePlan.Whole => false // kept as the target has it
        case r: TablePlan.Rows => r.target.isDefined || stats.exists(s => s.table == r.table && s.changes > 0)
        case l: TablePlan.Local => l.changes.nonEmpty
      }
      if (opts.dryRun && opts.probe.isEmpty) return MergeOutcome(if (!work && mergeParents.isEmpty) MergeOutcome.UpToDate
        else MergeOutcome.Merged, None, fastForward = false, baseHash, stats, conflicts, conflictCount)
      if (!work && mergeParents.isEmpty)
        return MergeOutcome(MergeOutcome.UpToDate, None, fastForward = false, baseHash, stats, conflicts, conflictCount)
      val author = opts.author
      val result = engine.leases.withLease(repo, "merge") { lease =>
        val target = ObjectTarget(engine.config, lease.id)
        val updates = settled.flatMap {
          case TablePlan.Take(t, u) => Some(t -> u)
          case r @ TablePlan.Rows(_, layout, changes, _, _, Some(current), _) =>
            // the merged columns differ from the target's: the merged rows as a new SNAP (as overwrite writes one)
            val rewrite = request(repo, branch, r.table, author, message).copy(mode = WriteMode.Overwrite,
              primaryKey = Some(layout.primaryKey))
            Some(r.table -> CommitPlanner.plan(spark, engine, rewrite,
              StagedInput(SchemaMerge.applied(layout, current, changes)), Some(ours), target))
          case r: TablePlan.Rows if stats.exists(s => s.table == r.table && s.changes > 0) =>
            Some(r.table -> CommitPlanner.plan(spark, engine, request(repo, branch, r.table, author, message),
              StagedInput(r.changes, local.get(r.table)),
              Some(ours), target))
          case l: TablePlan.Local if l.changes.nonEmpty =>
            Some(l.table -> CommitPlanner.plan(spark, engine, request(repo, branch, l.table, author, message),
              StagedInput.local(l.schema, l.changes), Some(ours), target))
          case _ => None
        }.toMap
        engine.commit(repo, branch, Some(ours.hash), updates, author, message, Some(lease), mergeParents,
          probe = opts.probe.filter(_ => opts.dryRun))
      }
      // a dry run with a probe made the merged image, let the probe look at it, and forgot it: nothing landed
      if (opts.dryRun) return MergeOutcome(MergeOutcome.Merged, None, fastForward = false, baseHash, stats, conflicts,
        conflictCount)
      held.collect { case r: TablePlan.Rows => r.table; case l: TablePlan.Local => l.table }
        .filter(t => result.changedTables.contains(t)).foreach(t =>
          CommitPlanner.compactAfter(spark, engine, request(repo, branch, t, author, message), result.image, settings))
      MergeOutcome(MergeOutcome.Merged, Some(result.image.hash), fastForward = false, baseHash, stats, conflicts,
        conflictCount)
    } finally release()
  }

  /**
   * What taking a table whole does to the branch: its rows inserted and updated (upserts) and deleted between
   * ours' version and the one taken (`counts`, as the diff summary counts them); a drop deletes every row.
   */
  private def taken(repo: String, ours: Image, theirs: Option[Image], table: String, update: TableUpdate,
                    counts: Map[String, (Long, Long)]): TableStat = {
    val action = if (update == TableUpdate.Drop) "drop" else "take"
    theirs match {
      case Some(_) => counts.get(table).fold(TableStat(table, action, 0, 0)) { case (u, d) => TableStat(table, action, u, d) }
      case None => // every table is dropped (the revert of a root commit)
        TableStat(table, action, 0, versioned.spark.read.PinnedRead.table(spark, location, TableIdent(repo, table),
          ours.hash).count())
    }
  }

  private def request(repo: String, branch: String, table: String, author: String, message: String) =
    WriteRequest(TableIdent(repo, table), Some(branch), WriteMode.Changes, None, upsert = false, author, message, location)
}

/** What a merge did (or would do) to one table. */
private[versioned] final case class TableStat(table: String, action: String, upserts: Long, deletes: Long) {
  def changes: Long = upserts + deletes
}

private[merge] object TableStat {
  /** What `p` does; a table's merged changes are counted from `local` (them, in the DIFF layout) when given. */
  def of(p: TablePlan, local: Option[IndexedSeq[org.apache.spark.sql.catalyst.InternalRow]]): TableStat = p match {
    case TablePlan.Take(t, TableUpdate.Drop) => TableStat(t, "drop", 0, 0)
    case TablePlan.Take(t, _) => TableStat(t, "take", 0, 0)
    case w: TablePlan.Whole => TableStat(w.table, s"conflict:${w.kind}", 0, 0)
    case l: TablePlan.Local => counted(l.table, l.schema, l.changes)
    case r: TablePlan.Rows => local match {
      case Some(rows) => counted(r.table, r.changes.schema, rows)
      case None =>
        val kind = functions.col(versioned.spark.session.VersionedOptions.ChangeColumn)
        val counts = r.changes.agg(functions.count(functions.lit(1)),
          functions.sum(functions.when(kind === ChangeKind.Delete, 1L).otherwise(0L))).head()
        val deletes = if (counts.isNullAt(1)) 0L else counts.getLong(1)
        TableStat(r.table, "merge", counts.getLong(0) - deletes, deletes)
    }
  }

  /** The stat of a table's merged changes on the driver (rows of `schema`, the DIFF layout). */
  private def counted(table: String, schema: StructType, rows: IndexedSeq[org.apache.spark.sql.catalyst.InternalRow]) = {
    val change = schema.fieldIndex(versioned.spark.session.VersionedOptions.ChangeColumn)
    val deletes = rows.count(_.getByte(change) == ChangeKind.Delete).toLong
    TableStat(table, "merge", rows.size - deletes, deletes)
  }
}
