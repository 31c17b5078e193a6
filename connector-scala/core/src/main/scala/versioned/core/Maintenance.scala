package versioned.core

import org.slf4j.LoggerFactory

/** What ref-driven snapshot maintenance (MMS5) and garbage collection would do or did. */
final case class EvictionReport(evicted: Seq[(String, String)], deletedObjects: Seq[String])

/**
 * One thing garbage collection removed (or, in a dry run, would remove): an image a retention policy expired, a stale
 * branch it deleted, an object, an orphan file or a staging file; `reason` says why.
 */
final case class Collected(kind: String, name: String, path: String, reason: String = "")

object Collected {
  /** An object no table version references, with its metastore row. */
  val Object = "object"
  /** A file under `objects/` that no metastore row names (left by a writer that failed). */
  val Orphan = "orphan"
  /** A file under `_staging/` of a write that ended or died. */
  val Staging = "staging"
  /** An image a retention policy expired: its commit stays, its table versions go. */
  val Image = "image"
  /** A branch not updated for longer than a retention policy allows. */
  val Branch = "branch"
}

/**
 * Ref-driven snapshots and garbage collection (MMS5 + Splitgraph cleanup).
 *
 * Images that some ref (branch, tag, lock, or a remote-tracking ref `remotes/<remote>/...`) points at keep
 * a compacted representation; when the last ref leaves an image its compacted representation becomes
 * evictable. Objects referenced by any table version's logical fragments (history) are never deleted.
 * An object read in place elsewhere (a recorded location, docs/REMOTES.md) is kept like any other while
 * referenced; collecting it drops its row and its location, never a file outside this warehouse.
 *
 * Garbage collection cannot race a commit (docs/FORMAT.md, "Garbage collection"): it deletes an object
 * only when no table version of any repository references it and no commit has used it within the
 * retention period, re-checking both in the transaction that deletes it, under the generation lock
 * every commit takes; files without a row and staging files go only when older than the retention
 * period and than every live write lease.
 */
final class Maintenance(engine: Engine) {
  private def ms = engine.metastore
  private val log = LoggerFactory.getLogger(classOf[Maintenance])

  /** Image hashes that some ref of `repo` points at. */
  def refTargets(repo: String): Set[String] = engine.refs.all(repo).map(_.image).toSet

  /** Drops the compacted representation of images no ref points at; returns (image, table) pairs. */
  def evict(repo: String): Seq[(String, String)] = ms.tx { c =>
    if (!MetaDao.repoExists(c, repo)) throw new RepositoryNotFoundException(repo)
    val keep = MetaDao.listRefs(c, repo).map(_.image).toSet // read in the same transaction as the drop
    val victims = Sql.query(c, "SELECT image_hash, name FROM vc_tables WHERE repo = ? AND compacted IS NOT NULL", repo)(r =>
      (r.getString(1), r.getString(2))).filterNot { case (img, _) => keep(img) }
    victims.foreach { case (img, t) => MetaDao.setCompacted(c, repo, img, t, None) }
    victims
  }

  private def referencedIds(c: java.sql.Connection): Set[String] =
    MetaDao.referencedFragmentJson(c).iterator.flatMap { case (f, comp) => MetaDao.objectIdsOf(f, comp) }.toSet

  /**
   * The retention step (docs/SAFETY.md, "Retention policies"), in one transaction under the generation lock (a dry
   * run: one read): what the policies of `repos` expire (images made before `floorMs` only), carried out unless
   * `dryRun`. Returns what it expired and, per object only expired versions used, why (a dry run then lists those
   * objects as collectable).
   */
  private def expire(repos: Seq[String], floorMs: Long, dryRun: Boolean): (Seq[Collected], Map[String, String]) =
    if (dryRun) ms.read(expireIn(_, repos, floorMs, dryRun)) // a dry run only reads
    else ms.tx { c => MetaDao.lockGeneration(c, bump = false); expireIn(c, repos, floorMs, dryRun) }

  private def expireIn(c: java.sql.Connection, repos: Seq[String], floorMs: Long,
                       dryRun: Boolean): (Seq[Collected], Map[String, String]) = {
    val now = engine.now()
    val plans = repos.map(r => r -> engine.retention.plan(c, r, now, floorMs)).filterNot(_._2.isEmpty)
    val freed = scala.collection.mutable.HashMap.empty[String, String]
    plans.foreach { case (r, plan) =>
      MetaDao.tableObjectIds(c, r, plan.images.keys.toSeq).foreach { case (img, id) =>
        freed.getOrElseUpdate(id, s"only expired versions used it (${img.take(12)}: ${plan.images(img)})") }
      if (!dryRun) engine.retention.expire(c, r, plan)
    }
    val stillUsed = if (freed.isEmpty) Set.empty[String] else {
      val expired = plans.flatMap { case (r, p) => p.images.keys.map(r -> _) }.toSet
      MetaDao.referencedFragmentJsonOf(c).iterator.collect { case (r, img, f, comp) if !expired((r, img)) =>
        MetaDao.objectIdsOf(f, comp) }.flatten.toSet
    }
    val done = plans.flatMap { case (r, p) =>
      p.branches.toSeq.sorted.map { case (b, why) => Collected(Collected.Branch, s"$r@$b", "", why) } ++
        p.images.toSeq.sorted.map { case (h, why) => Collected(Collected.Image, s"$r@$h", "", why) }
    }
    (done, freed.toMap -- stillUsed)
  }

  /** Ids of objects no table version (logical or compacted) of any repository refers to. */
  def unreferencedObjects(): Seq[String] = ms.read { c =>
    val referenced = referencedIds(c)
    MetaDao.allObjectIds(c).filterNot(referenced)
  }

  /**
   * Deletes what nothing needs, and returns it (with `dryRun`, only lists it).
   *
   * @param repo        only objects first stored by this repository (the default of the public API);
   *                    None: the whole warehouse, including orphan and staging files
   * @param retentionMs an object must have been unused, and a file unmodified, for this long
   * @param force       required for a retention below [[Maintenance.MinRetentionMs]]
   */
  def collectGarbage(repo: Option[String], retentionMs: Long, force: Boolean, dryRun: Boolean): Seq[Collected] = {
    if (retentionMs < 0) throw Errors.invalidOption(s"The retention period must not be negative (got $retentionMs ms).")
    if (retentionMs < Maintenance.MinRetentionMs && !force) throw Errors.invalidOption(s"A retention period of " +
      s"${retentionMs / 1000} s is below the minimum of ${Maintenance.MinRetentionMs / 1000} s without force: readers " +
      "and writers still using recent objects could fail. Run gc with force to collect anyway.")
    requireIdentity()
    repo.foreach(r => if (!ms.read(MetaDao.repoExists(_, r))) throw new RepositoryNotFoundException(r))
    val started = engine.now()
    // retention policies first: what they expire, no longer referenced, is collected below like anything unreferenced
    val (expired, freed) = expire(repo.map(Seq(_)).getOrElse(ms.read(MetaDao.listRepos)), started - retentionMs, dryRun)
    var (generation, referenced) = ms.read(c => (MetaDao.generation(c), referencedIds(c) -- (if (dryRun) freed.keySet else Nil)))
    val rows = ms.read(MetaDao.objectAges(_, repo))
    val known = if (repo.isEmpty) rows.map(_._1).toSet else ms.read(MetaDao.allObjectIds).toSet
    val candidates = rows.collect { case (id, _) if !referenced(id) => id }
    val out = Vector.newBuilder[Collected] ++= expired

    /** One batch under the generation lock: references re-read if a commit added any since. */
    def sweep[A](batch: Seq[A])(pick: (java.sql.Connection, Seq[A], Horizon) => Seq[Collected]): Unit = ms.tx { c =>
      val g = MetaDao.lockGeneration(c, bump = false)
      if (g != generation) { referenced = referencedIds(c) -- (if (dryRun) freed.keySet else Nil); generation = g }
      val picked = pick(c, batch, horizon(c, retentionMs))
      if (!dryRun) picked.foreach(p => engine.store.delete(new org.apache.hadoop.fs.Path(p.path)))
      out ++= picked
    }

    candidates.grouped(Maintenance.Batch).foreach(sweep(_) { (c, ids, horizon) =>
      val ages = MetaDao.objectAges(c, ids)
      val dead = ids.filter(id => ages.get(id).exists(_ < horizon.before) && !referenced(id))
      if (!dryRun) MetaDao.deleteObjects(c, dead)
      dead.map(id => Collected(Collected.Object, id, engine.store.objectPath(id).toString,
        freed.getOrElse(id, "no table version references it")))
    })
    if (repo.isEmpty) {
      val orphans = engine.store.listFiles("objects").filter(f => !known(f.name.stripSuffix(".parquet")))
      orphans.grouped(Maintenance.Batch).foreach(sweep(_) { (c, files, horizon) =>
        val registered = MetaDao.existingObjectIds(c, files.map(_.name.stripSuffix(".parquet")))
        files.filter(f => f.modifiedMs < horizon.before && !registered(f.name.stripSuffix(".parquet")))
          .map(f => Collected(Collected.Orphan, f.name.stripSuffix(".parquet"), f.path.toString, "no metastore row names it"))
      })
      engine.store.listFiles("_staging").grouped(Maintenance.Batch).foreach(sweep(_) { (c, files, horizon) =>
        files.filter(f => f.modifiedMs < horizon.before &&
          !horizon.liveLeases.exists(l => f.path.toString.contains(s"/_staging/$l/")))
          .map(f => Collected(Collected.Staging, f.name, f.path.toString, "staging file of a write that ended"))
      })
    }
    val result = out.result()
    log.info(s"versioned: gc ${repo.getOrElse("(warehouse)")} ${if (dryRun) "would delete" else "deleted"} " +
      s"${result.count(_.kind == Collected.Image)} expired images, ${result.count(_.kind == Collected.Branch)} stale branches, " +
      s"${result.count(_.kind == Collected.Object)} objects, ${result.count(_.kind == Collected.Orphan)} orphan and " +
      s"${result.count(_.kind == Collected.Staging)} staging files (retention ${retentionMs / 1000} s) in ${engine.now() - started} ms")
    result
  }

  /**
   * What one batch may collect: objects unused since, and files older than, `before` (the retention period
   * before now, and before the oldest live write lease less a margin for clock differences), and never
   * the staging files of `liveLeases`.
   */
  private def horizon(c: java.sql.Connection, retentionMs: Long): Horizon = {
    val now = engine.now()
    val live = MetaDao.liveLeases(c, now - Leases.TimeoutMs)
    val oldestLease = live.map(_._2).minOption
    Horizon(math.min(now - retentionMs, oldestLease.map(_ - Leases.ClockSkewMs).getOrElse(Long.MaxValue)), live.map(_._1).toSet)
  }

  /** Refuses to collect when the metastore and the object store no longer describe the same warehouse. */
  private def requireIdentity(): Unit = {
    val recorded = ms.read(MetaDao.metaValue(_, "warehouse_id"))
    val marker = engine.store.readMarker()
    if (recorded.isEmpty || recorded != marker || !recorded.contains(engine.warehouseId))
      throw Errors.warehouseMismatch(s"Garbage collection refused: the metastore records warehouse " +
        s"${recorded.getOrElse("(none)")} and the object store ${marker.getOrElse("(none)")}, opened as " +
        s"${engine.warehouseId}. Nothing was deleted; check spark.versioned.warehouse and spark.versioned.metastore.url.")
  }
}

private final case class Horizon(before: Long, liveLeases: Set[String])

object Maintenance {
  /** Default retention period of garbage collection: a day (Iceberg and Delta keep days by default). */
  val DefaultRetentionMs: Long = 24L * 60 * 60 * 1000
  /** Below this retention, collection needs force. */
  val MinRetentionMs: Long = 60L * 60 * 1000
  private val Batch = 500
}
