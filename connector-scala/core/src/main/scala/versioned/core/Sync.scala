package versioned.core

import org.slf4j.LoggerFactory
import versioned.core.governance.Move

/** A remote-tracking ref a fetch created, moved or deleted; `status` is one of [[SyncStatus]]. */
final case class RefUpdate(ref: String, old: Option[String], next: Option[String], status: String) {
  private[core] def fields: Map[String, Any] = Map("ref" -> ref, "old" -> old.orNull, "new" -> next.orNull, "status" -> status)
  override def toString: String = s"$ref $status ${old.map(_.take(12)).getOrElse("(none)")} -> ${next.map(_.take(12)).getOrElse("(none)")}"
}

/** What a clone or fetch did: images and object rows recorded, objects downloaded, tracking refs changed. */
final case class FetchResult(repository: String, remote: String, images: Int, objects: Int, downloaded: Int,
                             refs: Seq[RefUpdate]) {
  /** The result as a JSON object (what the Python package reads). */
  def toJson: String = Json.write(Map("repository" -> repository, "remote" -> remote, "images" -> images,
    "objects" -> objects, "downloaded" -> downloaded, "refs" -> refs.map(_.fields)))
}

/** What a push did: the remote branch's head before and after, images and objects sent, tags created there. */
final case class PushResult(repository: String, remote: String, branch: String, old: Option[String], head: String,
                            status: String, images: Int, objects: Int, uploaded: Int, tags: Seq[String]) {
  /** The result as a JSON object (what the Python package reads). */
  def toJson: String = Json.write(Map("repository" -> repository, "remote" -> remote, "branch" -> branch,
    "old" -> old.orNull, "head" -> head, "status" -> status, "images" -> images, "objects" -> objects,
    "uploaded" -> uploaded, "tags" -> tags))
}

/** What a download did: the version it was for (None: every version), objects held elsewhere before it, objects copied. */
final case class DownloadResult(repository: String, image: Option[String], objects: Int, downloaded: Int) {
  /** The result as a JSON object (what the Python package reads). */
  def toJson: String = Json.write(Map("repository" -> repository, "image" -> image.orNull, "objects" -> objects,
    "downloaded" -> downloaded))
}

object SyncStatus {
  val New = "new"
  val Created = "created"
  val FastForward = "fast_forward"
  val Forced = "forced"
  val Deleted = "deleted"
  val UpToDate = "up_to_date"
}

/**
 * Clone, fetch, push and table import between warehouses (docs/REMOTES.md). Spark-free: `connect` opens a
 * remote's engine ([[Remotes.open]]; `true` when the remote may be created, as by a push) and `mover`
 * copies objects (Spark tasks in the Spark module). Metadata is copied in batches ([[HistoryCopy]]);
 * each side's changes are one transaction of its metastore, so a failure at any point leaves the refs of
 * both sides where they were.
 *
 * Objects are content-addressed, so an object either side has is never copied: a clone or fetch records
 * where each new object is (the remote's `objects/`, or the location the remote itself records) and
 * reads it there in place, unless asked to `download` it; a push uploads the objects the remote lacks
 * before it moves the remote branch by compare-and-swap.
 */
final class Sync(local: Engine, connect: (Remote, Boolean) => Engine, mover: ObjectMover) {
  private val log = LoggerFactory.getLogger(classOf[Sync])

  /**
   * Creates repository `into` as a copy of `remote`'s history: its images, tables and object rows, its
   * branches and tags as `remotes/<remote>/...` refs, the remote recorded under its name, and a local
   * default branch at the remote's. `download`: copy every object now (else they are read in place).
   */
  def cloneRepository(remote: Remote, into: String, download: Boolean): FetchResult = {
    Names.validate(Names.Repository, into)
    if (local.repositoryExists(into)) throw intoExists(into)
    val started = local.now()
    val src = connect(remote, false)
    val defaultBranch = src.metastore.read(MetaDao.defaultBranch(_, remote.repository)).getOrElse(throw remoteRepoMissing(remote))
    val result = transfer(into, remote.copy(fetchedSeq = 0L), src, download, clone = Some(defaultBranch))
    log.info(s"versioned: clone ${remote.describe} into $into: ${result.images} images, ${result.objects} objects " +
      s"(${result.downloaded} downloaded), ${result.refs.size} refs in ${local.now() - started} ms")
    result
  }

  /**
   * Brings the images (and object metadata) remote `remoteName` has that `repo` lacks, and points the
   * refs tracking it at the remote's branches and tags (created, moved, or deleted with the remote's).
   * Never moves a local branch. Refuses (REMOTE_HISTORY_REWRITTEN) a remote that no longer has history
   * this repository holds from it.
   */
  def fetch(repo: String, remoteName: String, download: Boolean): FetchResult = {
    val started = local.now()
    val remote = local.remotes.get(repo, remoteName)
    val result = transfer(repo, remote, connect(remote, false), download, clone = None)
    log.info(s"versioned: fetch $repo from ${remote.describe}: ${result.images} images, ${result.objects} objects " +
      s"(${result.downloaded} downloaded), refs [${result.refs.map(u => s"${u.ref} ${u.status}").mkString(", ")}] in " +
      s"${local.now() - started} ms")
    result
  }

  private def transfer(repo: String, remote: Remote, src: Engine, download: Boolean, clone: Option[String]): FetchResult = {
    val prefix = Ref.remotePrefix(remote.name)
    val tracked = if (clone.isDefined) Vector.empty
      else local.metastore.read(MetaDao.listRefs(_, repo)).filter(_.fullName.startsWith(prefix))
    val (refs, rows) = src.metastore.read { c =>
      if (!MetaDao.repoExists(c, remote.repository)) throw remoteRepoMissing(remote)
      val refs = MetaDao.listRefs(c, remote.repository) // first: every image they name is among the rows read next
      val held = MetaDao.existingImages(c, remote.repository, tracked.map(_.image))
      val lost = tracked.filterNot(r => held(r.image))
      val last = MetaDao.seqRange(c, remote.repository).map(_._2).getOrElse(0L)
      if (lost.nonEmpty || last < remote.fetchedSeq) throw new RemoteHistoryRewrittenException(s"${remote.describe} no " +
        s"longer has history '$repo' holds from it" + lost.headOption.map(r => s" (image ${r.image.take(12)}, which " +
        s"${r.fullName} points at)").getOrElse(s" (it has ${last} commits, ${remote.fetchedSeq} were fetched)") +
        ": its history was rewritten (the repository was dropped and created again, or the URIs now name another " +
        "one). Nothing was fetched. If that is intended, remove the remote and add it again (local branches keep " +
        "their history), or clone it into a new repository.")
      (refs, MetaDao.imageRowsAfter(c, remote.repository, remote.fetchedSeq))
    }
    val fetchedSeq = (remote.fetchedSeq +: rows.map(_.seq)).max
    val gathered = HistoryCopy.gather(src, remote.repository, rows, local, repo)
    // objects read in place: only those the remote never collects (see HistoryBatch.withoutCompacted)
    val batch = if (download) gathered else gathered.withoutCompacted
    val wanted: Map[String, String] = refs.collect {
      case r if r.kind == RefKind.Branch => Ref.remoteBranch(remote.name, r.shortName) -> r.image
      case r if r.kind == RefKind.Tag => Ref.remoteTag(remote.name, r.shortName) -> r.image
    }.toMap

    // objects the batch needs that this warehouse knew only at their locations: downloading brings them too; a lazy
    // fetch records the remote's places for them after those known (identical objects of two remotes share ids, and
    // each remote's copy keeps them readable when the other's goes), and for the logical objects of the remote's
    // images this repository holds already (history first fetched from another remote)
    val fetchedIds = batch.objects.map(_.id).toSet
    val heldElsewhere = local.objects(batch.referencedObjects.filterNot(fetchedIds)).values.filter(_.isRemote).toVector
    val alsoAt: Seq[(String, String)] = if (download) Nil else {
      val copied = batch.images.map(_.image.hash).toSet
      val present = rows.map(_.image.hash).filterNot(copied)
      val presentObjects = if (present.isEmpty) Vector.empty else HistoryBatch(Vector.empty,
        local.metastore.read(MetaDao.tablesHeld(_, repo, present)), Vector.empty).withoutCompacted.referencedObjects
      val known = heldElsewhere.map(_.id)
      val elsewhere = known ++ local.objects(presentObjects.filterNot(known.toSet)).values.filter(_.isRemote).map(_.id)
      if (elsewhere.isEmpty) Nil
      else src.objects(elsewhere).values.toVector.flatMap(m => m.urisIn(src.config).map(m.id -> _))
    }
    def record(lease: Option[Lease]): (Int, Map[String, String]) = {
      val downloaded = lease.map(l => mover.copy(batch.objects.map(ObjectCopy.between(_, src.config, local.config, l)) ++
        heldElsewhere.map(ObjectCopy.between(_, local.config, local.config, l)))).getOrElse(0)
      val objects = batch.objects.map(o => o.copy(locations = if (lease.isDefined) Nil else o.urisIn(src.config)))
      val before = local.metastore.tx { c =>
        val now = local.now()
        val recorded = remote.copy(fetchedSeq = fetchedSeq)
        clone match {
          case Some(b) =>
            if (MetaDao.repoExists(c, repo)) throw intoExists(repo)
            Sql.unique(MetaDao.insertRepo(c, repo, b, now))(intoExists(repo))
            MetaDao.insertUpstream(c, repo, remote.name, recorded.json)
          case None => local.remotes.update(c, repo, recorded)
        }
        HistoryCopy.write(c, repo, batch.copy(objects = objects), now)
        if (lease.isDefined) MetaDao.deleteLocations(c, heldElsewhere.map(_.id)) // now stored here
        else MetaDao.insertLocations(c, alsoAt)
        val current = MetaDao.listRefs(c, repo).filter(_.fullName.startsWith(prefix)).map(r => r.fullName -> r.image).toMap
        val why = local.cause(if (clone.isDefined) Cause.Clone else Cause.Fetch, remote.describe)
        wanted.foreach { case (name, image) =>
          if (!current.get(name).contains(image)) MetaDao.setRef(c, repo, Ref(name, RefKind.Remote, image, now), why)
        }
        current.keys.filterNot(wanted.contains).foreach(MetaDao.deleteRef(c, repo, _, why))
        for (b <- clone; image <- wanted.get(Ref.remoteBranch(remote.name, b)))
          MetaDao.insertRef(c, repo, Ref(Ref.branch(b), RefKind.Branch, image, now), why)
        current
      }
      (downloaded, before)
    }
    val (downloaded, before) =
      if (download && (batch.objects.nonEmpty || heldElsewhere.nonEmpty)) local.leases.withLease(repo, "fetch")(l => record(Some(l))) else record(None)
    val changed = (before.keySet ++ wanted.keySet).toSeq.sorted.filter(n => before.get(n) != wanted.get(n))
    // the commit graph, read once (one query) when a moved ref needs it
    lazy val graph = local.metastore.read(MetaDao.imageRowsAfter(_, repo, Long.MinValue)).map(r => r.image.hash -> r.image.parents).toMap
    val updates = changed.map { name =>
      val (old, next) = (before.get(name), wanted.get(name))
      RefUpdate(name, old, next, (old, next) match {
        case (None, _) => SyncStatus.New
        case (_, None) => SyncStatus.Deleted
        case (Some(o), Some(n)) => if (HistoryCopy.closure(graph, Seq(n))(o)) SyncStatus.FastForward else SyncStatus.Forced
      })
    }
    FetchResult(repo, remote.name, batch.images.size, batch.objects.size, downloaded, updates)
  }

  /**
   * Copies into this warehouse the objects of `repo` it knows only at other places (a lazy clone's or fetch's):
   * those of the tables of `at` (its logical fragments and compacted forms), or with None those of every
   * version of the repository. Each copy is verified against its checksum (from the first place that holds
   * it intact) before it is renamed into `objects/`; then, in one transaction, the objects' places are
   * forgotten, so reads no longer depend on the remotes. Nothing is recorded when a copy fails, and a retry
   * copies only what is not yet here intact. Refs and history do not change.
   */
  def download(repo: String, at: Option[Revision]): DownloadResult = {
    val started = local.now()
    if (!local.repositoryExists(repo)) throw new RepositoryNotFoundException(repo)
    val image = at.map(local.resolve(repo, _).hash)
    val tables = local.metastore.read(c => image.fold(MetaDao.tablesOfRepo(c, repo))(MetaDao.tablesOf(c, repo, _).toVector))
    val remote = local.objects(HistoryBatch(Vector.empty, tables, Vector.empty).referencedObjects).values.filter(_.isRemote).toVector
    val downloaded = if (remote.isEmpty) 0 else local.leases.withLease(repo, "download") { l =>
      val n = mover.copy(remote.map(ObjectCopy.between(_, local.config, local.config, l)))
      local.metastore.tx(MetaDao.deleteLocations(_, remote.map(_.id))) // now stored here
      n
    }
    log.info(s"versioned: download of $repo${image.fold(" (every version)")(h => s" at ${h.take(12)}")}: " +
      s"${remote.size} objects held elsewhere, $downloaded copied in ${local.now() - started} ms")
    DownloadResult(repo, image, remote.size, downloaded)
  }

  /**
   * Sends branch `branch` of `repo` to remote `remoteName`: the images the remote lacks, after the objects
   * it lacks (uploaded first, verified), then moves the remote's branch by compare-and-swap on the head
   * read at the start, in the remote metastore's transaction. Only a fast-forward unless `force`. With
   * `tags`, the local tags whose images the remote has afterwards are created there (a tag the remote has
   * at another image is IMMUTABLE_REF, before anything is sent). A push that is rejected or fails moves
   * nothing on the remote (objects it uploaded stay unreferenced until the remote's garbage collection, or
   * are found there by the retry); the ref tracking the branch moves last.
   */
  def push(repo: String, remoteName: String, branch: String, force: Boolean, tags: Boolean): PushResult = {
    Names.validate(Names.Branch, branch)
    val started = local.now()
    val remote = local.remotes.get(repo, remoteName)
    val head = local.metastore.read(MetaDao.getRef(_, repo, Ref.branch(branch))).map(_.image).getOrElse(
      throw new RefNotFoundException(s"Branch '$branch' does not exist in '$repo', so it cannot be pushed."))
    val dst = connect(remote, true)
    val rr = remote.repository
    val remoteRefs = dst.metastore.read(c => if (MetaDao.repoExists(c, rr)) MetaDao.listRefs(c, rr) else Vector.empty)
    val old = remoteRefs.find(_.fullName == Ref.branch(branch)).map(_.image)
    val rows = local.metastore.read(HistoryCopy.reachable(_, repo, Seq(head)))
    val reach = rows.map(_.image.hash).toSet
    val status = old match {
      case None => SyncStatus.Created
      case Some(h) if h == head => SyncStatus.UpToDate
      case Some(h) if reach(h) => SyncStatus.FastForward
      case Some(_) if force => SyncStatus.Forced
      // the local branch only behind (its head an ancestor of the remote's, known here after a fetch): nothing to push
      case Some(h) if local.ancestry.isAncestor(repo, head, h) => throw new NonFastForwardException(s"Push of " +
        s"'$branch' to ${remote.describe} rejected: the local branch is behind the remote's, which is at ${h.take(12)} " +
        s"and has every commit of ${head.take(12)}. Nothing was changed and there is nothing to push: pull to bring " +
        "the local branch up to date; or push with force to move the remote branch back.")
      case Some(h) => throw new NonFastForwardException(s"Push of '$branch' to ${remote.describe} rejected: the remote " +
        s"branch is at ${h.take(12)}, which is not an ancestor of ${head.take(12)} (the remote has commits this " +
        s"repository does not). Nothing was changed. Pull (fetch and merge) first, then push again; or push with " +
        "force to replace the remote branch.")
    }
    // refused before anything is sent; checked again in the transaction that moves the remote branch
    if (old.exists(_ != head)) dst.metastore.read(dst.protections.guard(_, rr, branch, Move.Push(forced = status == SyncStatus.Forced)))
    val localTags = if (!tags) Vector.empty else local.metastore.read(MetaDao.listRefs(_, repo)).filter(_.kind == RefKind.Tag)
    val outside = localTags.map(_.image).filterNot(reach)
    val remoteHas = if (outside.isEmpty) Set.empty[String] else dst.metastore.read(MetaDao.existingImages(_, rr, outside))
    val pushedTags = localTags.filter(t => reach(t.image) || remoteHas(t.image))
    def tagTaken(t: Ref, at: String) = new ImmutableRefException(s"Tag '${t.shortName}' exists on ${remote.describe} at " +
      s"${at.take(12)}, not at ${t.image.take(12)} as here; tags never move. Nothing was pushed. Delete or rename the " +
      "local tag, or push without tags.")
    pushedTags.foreach(t => remoteRefs.find(_.fullName == t.fullName).filter(_.image != t.image).foreach(r => throw tagTaken(t, r.image)))
    val newTags = pushedTags.filterNot(t => remoteRefs.exists(_.fullName == t.fullName))
    val batch = HistoryCopy.gather(local, repo, rows, dst, rr)
    val uploaded = if (status == SyncStatus.UpToDate && newTags.isEmpty && batch.isEmpty) 0 else dst.leases.withLease(rr, "push") { lease =>
      val sent = mover.copy(batch.objects.map(ObjectCopy.between(_, local.config, dst.config, lease)))
      dst.metastore.tx { c =>
        val now = dst.now()
        def moved = new NonFastForwardException(s"Push of '$branch' to ${remote.describe} rejected: the remote branch moved " +
          s"while this push ran (it was at ${old.map(_.take(12)).getOrElse("nothing")}). Nothing was changed there. Pull, then push again.")
        if (!MetaDao.repoExists(c, rr)) Sql.unique(MetaDao.insertRepo(c, rr, branch, now))(moved)
        // the remote's reflog records the push as this session's (who, application, client)
        val why = local.cause(Cause.Push, s"from $repo${if (status == SyncStatus.Forced) ", forced" else ""}")
        if (old.exists(_ != head)) dst.protections.guard(c, rr, branch, Move.Push(forced = status == SyncStatus.Forced))
        HistoryCopy.write(c, rr, batch.copy(objects = batch.objects.map(_.copy(locations = Nil))), now)
        old match {
          case None => Sql.unique(MetaDao.insertRef(c, rr, Ref(Ref.branch(branch), RefKind.Branch, head, now), why))(moved)
          case Some(o) => if (o != head && !MetaDao.casRef(c, rr, Ref.branch(branch), o, head, why)) throw moved
        }
        newTags.foreach { t =>
          MetaDao.getRef(c, rr, t.fullName) match {
            case Some(r) => if (r.image != t.image) throw tagTaken(t, r.image)
            case None => MetaDao.insertRef(c, rr, Ref(t.fullName, RefKind.Tag, t.image, now), why)
          }
        }
      }
      sent
    }
    local.metastore.tx { c =>
      val now = local.now()
      val why = local.cause(Cause.Push, remote.describe)
      MetaDao.setRef(c, repo, Ref(Ref.remoteBranch(remote.name, branch), RefKind.Remote, head, now), why)
      pushedTags.foreach(t => MetaDao.setRef(c, repo, Ref(Ref.remoteTag(remote.name, t.shortName), RefKind.Remote, t.image, now), why))
    }
    val result = PushResult(repo, remote.name, branch, old, head, status, batch.images.size, batch.objects.size, uploaded,
      newTags.map(_.shortName))
    log.info(s"versioned: push $repo@$branch to ${remote.describe}: $status ${old.map(_.take(12)).getOrElse("(none)")} -> " +
      s"${head.take(12)}, ${result.images} images, ${result.objects} objects ($uploaded uploaded), tags " +
      s"[${result.tags.mkString(",")}] in ${local.now() - started} ms")
    result
  }

  /**
   * Commits, on `branch` of `repo`, table `table` as it is at `at` in repository `from` (of this warehouse,
   * or of `repo`'s remote `remote`), named `as`, through the one commit path ([[Engine.commit]]). No data is
   * copied: objects of this warehouse are linked, those of a remote recorded at their location there and
   * read in place. A table `as` that exists on the branch is TABLE_EXISTS.
   */
  def importTable(repo: String, branch: String, from: String, table: String, at: Revision, as: String,
                  remote: Option[String], author: String, message: Option[String]): CommitResult = {
    Names.validate(Names.Repository, repo); Names.validate(Names.Repository, from)
    Names.validate(Names.Table, table); Names.validate(Names.Table, as)
    val src = remote.map(r => connect(local.remotes.get(repo, r), false)).getOrElse(local)
    val image = src.resolve(from, at)
    // a version read in place elsewhere keeps only its logical fragments (see HistoryBatch.withoutCompacted)
    val version = if (src eq local) src.table(from, image, table) else src.table(from, image, table).copy(compacted = None)
    val ids = (version.fragments.flatMap(_.objects) ++ version.compacted.toSeq.flatten.flatMap(_.objects)).distinct
    val linked: Seq[ObjectMeta] = if (src eq local) Seq.empty else {
      val known = local.metastore.read(MetaDao.existingObjectIds(_, ids))
      val metas = src.objects(ids.filterNot(known))
      ids.filterNot(known).map(id => metas.getOrElse(id, throw new ObjectMissingException(id,
        s"the metastore of ${src.config.warehouse} has no row for it, though '$from.$table' needs it")))
        .map(m => m.copy(locations = m.urisIn(src.config)))
    }
    val head = local.writableHead(repo, branch)
    head.foreach(h => if (local.tableOption(repo, h.hash, as).isDefined) throw new VersionedException(ErrorClass.TableExists,
      s"Table '$as' already exists on branch '$branch' of '$repo'. Import it under another name (as_table), or drop it first."))
    val source = remote.map(r => s"$r:$from").getOrElse(from)
    local.commit(repo, branch, head.map(_.hash), Map(as -> TableUpdate.Put(version.copy(name = as), linked)), author,
      message.getOrElse(s"import $source.$table@${image.shortHash}" + (if (as != table) s" as $as" else "")))
  }

  private def intoExists(repo: String) = new VersionedException(ErrorClass.RepositoryExists, s"Repository '$repo' " +
    "already exists, so nothing was cloned into it. Clone into a new name, or add the remote to it (add_remote) and fetch or pull.")

  private def remoteRepoMissing(remote: Remote) = new NotFoundException(ErrorClass.RepositoryNotFound,
    s"${remote.describe}: the remote warehouse has no repository '${remote.repository}'. Check the name (add_remote " +
      "repository=...), or push to create it.")
}
