package versioned.core

import java.util.concurrent.ConcurrentHashMap
import org.apache.hadoop.conf.Configuration
import org.slf4j.LoggerFactory
import versioned.core.governance.Move

/**
 * The versioning engine: repositories, images, tables, refs and history. Spark-free. All version
 * selection goes through [[resolver]]. Opening it checks that the metastore and the object store belong
 * to the same warehouse ([[WarehouseIdentity]]).
 *
 * @param hadoopConf how to reach the object store (credentials, file system implementations)
 */
final class Engine(val config: WarehouseConfig, hadoopConf: Configuration = new Configuration()) extends AutoCloseable {
  val store = new WarehouseStore(config, hadoopConf)
  store.fs // a scheme this JVM has no file system for fails here, before any metastore is created or opened
  WarehouseIdentity.requireMetastoreFile(config, store)
  Metastore.sqliteFile(config.metastoreUrl).flatMap(f => Option(f.getAbsoluteFile.getParentFile)).foreach { d =>
    if (!d.isDirectory && !d.mkdirs() || !d.canWrite) throw Errors.storage(s"The warehouse directory $d cannot be " +
      s"${if (d.isDirectory) "written" else "created"} (a file is in the way, or no permission): the embedded metastore " +
      "lives there. Choose a writable location for spark.versioned.warehouse.", null)
  }
  val metastore: Metastore = new Metastore(config.metastoreUrl)
  /** The id both the metastore and the object store record. */
  val warehouseId: String = try WarehouseIdentity.check(config, store, metastore.init()) catch {
    case e: Throwable => metastore.close(); throw e
  }
  val resolver = new Resolver(metastore)
  val refs = new RefOps(this)
  val history = new History(this)
  val lineage = new Lineage(this)
  val ancestry = new Ancestry(this)
  val maintenance = new Maintenance(this)
  val leases = new Leases(this)
  val remotes = new RemoteOps(this)
  /** Listeners told of every branch move this engine makes, after it is recorded. */
  val moves = new BranchMoves
  val protections = new Protections(this)
  val checks = new Checks(this)
  val retention = new Retention(this)
  /** What runs required checks on a gated commit's image (set by the Spark layer; none: such commits are refused). */
  @volatile var checkGate: Option[CheckGate] = CheckGate.discovered
  /** Who is doing what this thread asks of the engine (set by the Spark layer: the session's identity). */
  @volatile var actors: () => Actor = () => Actor.process
  /** The reflog: every ref movement, hash-chained (docs/AUDIT.md). */
  val reflog = new Reflog(this)
  private val log = LoggerFactory.getLogger(classOf[Engine])

  private[core] def now(): Long = System.currentTimeMillis()

  /** Why a ref moves in this thread's operation: `operation` by the current [[Actor]]. */
  private[core] def cause(operation: String, detail: String = ""): Cause = causeOf(operation, detail, actors())

  private def causeOf(operation: String, detail: String, actor: Actor): Cause = within.get match {
    case Some((op, what)) => Cause(op, actor, s"$what ($operation)")
    case None => Cause(operation, actor, detail)
  }

  private val within = new ThreadLocal[Option[(String, String)]] { override def initialValue(): Option[(String, String)] = None }

  /**
   * Runs `f` with every ref move it makes in this thread recorded as `operation`, detail `detail` followed by the
   * move's own operation in parentheses: a pull's moves of its local branch are `pull` (`from remotes/origin/main
   * (merge)`), whether it creates, fast-forwards or merges it.
   */
  def recordedAs[T](operation: String, detail: String)(f: => T): T = {
    val before = within.get
    within.set(Some((operation, detail)))
    try f finally within.set(before)
  }

  override def close(): Unit = metastore.close()

  def repositories(): Seq[String] = metastore.read(MetaDao.listRepos)
  def repositoryExists(repo: String): Boolean = metastore.read(MetaDao.repoExists(_, repo))

  def createRepository(repo: String, defaultBranch: String = config.defaultBranch): Unit = {
    Names.validate(Names.Repository, repo); Names.validate(Names.Branch, defaultBranch)
    metastore.tx { c =>
      if (MetaDao.repoExists(c, repo))
        throw new VersionedException(ErrorClass.RepositoryExists, s"Repository '$repo' already exists.")
      Sql.unique(MetaDao.insertRepo(c, repo, defaultBranch, now()))(
        new VersionedException(ErrorClass.RepositoryExists, s"Repository '$repo' already exists."))
    }
  }

  /** Drops a repository's metadata (its objects are removed by the next garbage collection). */
  def dropRepository(repo: String): Unit = metastore.tx { c =>
    if (!MetaDao.repoExists(c, repo)) throw new RepositoryNotFoundException(repo)
    MetaDao.deleteRepo(c, repo)
  }

  def defaultBranch(repo: String): String = metastore.read { c =>
    MetaDao.defaultBranch(c, repo).getOrElse(throw new RepositoryNotFoundException(repo))
  }

  /** The repository's default branch, or the configured default for a repository not created yet. */
  def defaultBranchOrConfig(repo: String): String =
    metastore.read(MetaDao.defaultBranch(_, repo)).getOrElse(config.defaultBranch)

  /**
   * Head of a branch a write may go to: None for a new repository (the branch is created by the
   * commit). A tag, or a missing branch of an existing repository, is an error.
   */
  def writableHead(repo: String, branch: String): Option[Image] = {
    Names.validate(Names.Repository, repo)
    // a lock (`namespace:name`) is no branch name, but naming one is the immutable ref it is, not a bad name
    if (branch != null && branch.contains(':') && metastore.read(MetaDao.getRef(_, repo, s"locks/$branch")).isDefined)
      throw new ImmutableRefException(s"'$branch' is a lock of '$repo'; locks never move. Commit to a branch " +
        "(create one from the lock first).")
    Names.validate(Names.Branch, branch)
    metastore.read(writableHead(_, repo, branch))
  }

  private def writableHead(c: java.sql.Connection, repo: String, branch: String): Option[Image] =
    MetaDao.getRef(c, repo, Ref.branch(branch)) match {
      case Some(r) => MetaDao.getImage(c, repo, r.image)
      case None =>
        if (MetaDao.getRef(c, repo, Ref.tag(branch)).isDefined) throw new ImmutableRefException(
          s"'$branch' is a tag of '$repo'; tags never move. Commit to a branch (create one from the tag first).")
        val refs = MetaDao.listRefs(c, repo)
        // Read-committed databases (PostgreSQL) may show a branch created by a concurrent first commit.
        if (refs.exists(_.fullName == Ref.branch(branch))) throw new RefConflictException(
          s"Branch '$branch' of '$repo' was just created by another writer. Nothing was committed; retry.")
        if (MetaDao.repoExists(c, repo) && refs.exists(_.kind == RefKind.Branch))
          throw new RefNotFoundException(s"Branch '$branch' does not exist in repository '$repo'. " +
            "Create it first (procedure create_branch, or the API's create branch).")
        None
    }

  def resolve(repo: String, rev: Revision): Image = resolver.resolve(repo, rev)

  /** Head image of a branch, or None when the repository or branch does not exist yet. */
  def branchHeadOption(repo: String, branch: String): Option[Image] = metastore.read { c =>
    MetaDao.getRef(c, repo, Ref.branch(branch)).flatMap(r => MetaDao.getImage(c, repo, r.image))
  }

  def tables(repo: String, image: String): Seq[TableVersion] = metastore.read(MetaDao.tablesOf(_, repo, image)).map(_.table)

  def table(repo: String, image: Image, name: String): TableVersion = tableOption(repo, image.hash, name).getOrElse(
    throw new TableNotFoundException(repo, name, s"image ${image.shortHash}"))

  def tableOption(repo: String, image: String, name: String): Option[TableVersion] =
    metastore.read(MetaDao.tableOf(_, repo, image, name)).map(_.table)

  /**
   * The table of an image when the metastore still holds it: None also for an image garbage collection expired
   * (where [[tableOption]] raises VERSION_EXPIRED). For lookups of a hint, such as where a compacted form is carried
   * from, which must never fail the operation that uses them.
   */
  def tableIfHeld(repo: String, image: String, name: String): Option[TableVersion] =
    metastore.read(MetaDao.tableIfHeld(_, repo, image, name)).map(_.table)

  def objects(ids: Seq[String]): Map[String, ObjectMeta] = metastore.read(MetaDao.getObjects(_, ids))

  /**
   * Records an equivalent, shorter representation of a table version (the image hash is unchanged),
   * under the same rules as a commit ([[secureObjects]]). `lease` is the compaction's write lease.
   */
  def setCompacted(repo: String, image: String, table: String, compacted: Seq[Fragment], newObjects: Seq[ObjectMeta],
                   lease: Option[Lease] = None): Unit =
    metastore.tx { c =>
      secureObjects(c, repo, newObjects, compacted.flatMap(_.objects), lease)
      MetaDao.setCompacted(c, repo, image, table, Some(compacted))
    }

  /**
   * The part of a transaction that adds references to objects (commit, compaction), under the generation
   * lock that garbage collection also takes, so the two never interleave: registers `newObjects` (or
   * re-marks existing rows live), checks that every object the new versions reference is registered,
   * and that every new object's file is in the store (putting back the copy the writer kept in its
   * lease's staging area if a collection removed it after the writer found it stored). A failure raises
   * before anything is recorded.
   */
  private def secureObjects(c: java.sql.Connection, repo: String, newObjects: Seq[ObjectMeta], referenced: Seq[String],
                            lease: Option[Lease], locked: Boolean = false): Unit = {
    if (!locked) MetaDao.lockGeneration(c, bump = true)
    val recorded = MetaDao.getObjects(c, newObjects.map(_.id))
    MetaDao.insertObjects(c, newObjects, now(), repo, recorded.keySet)
    val newIds = newObjects.map(_.id).toSet
    val older = referenced.distinct.filterNot(newIds)
    val gone = older.toSet -- MetaDao.existingObjectIds(c, older)
    if (gone.nonEmpty) throw new RefConflictException(s"${gone.size} object(s) this change builds on (e.g. " +
      s"${gone.head.take(12)}) were removed by garbage collection while it was prepared. Nothing was committed; retry.")
    def missing(id: String) = new ObjectMissingException(id, "its file disappeared before this change recorded it " +
      "(a concurrent garbage collection or a failing store). Nothing was committed; retry")
    newObjects.groupBy(_.id).values.map(_.head).toSeq.sortBy(_.id).foreach { o =>
      recorded.get(o.id) match {
        // registered now: the stored file must be the writer's (a copy it kept replaces a file no row describes)
        // (an object stored outside the warehouse, read in place at its location, is recorded with it)
        case None =>
          if (!o.isRemote && !lease.exists(l => store.restore(l.id, o.id, replace = true)) && !store.objectExists(o.id))
            throw missing(o.id)
        // registered before: the file the row describes must still be there (or be put back with the same bytes),
        // unless it lives at recorded locations; once the warehouse holds it, its locations are forgotten, and the
        // locations this change reads it at (an import from another remote) are added after those recorded
        case Some(row) =>
          val same = row.checksum.isEmpty || o.checksum.isEmpty || row.checksum == o.checksum
          val stored = store.objectExists(o.id) || (same && lease.exists(l => store.restore(l.id, o.id, replace = false)))
          if (stored && row.isRemote) MetaDao.deleteLocations(c, Seq(o.id))
          else if (!stored && o.isRemote) MetaDao.insertLocations(c, o.locations.map(o.id -> _))
          else if (!stored && !row.isRemote) throw missing(o.id)
      }
    }
  }

  def clearCompacted(repo: String, image: String, table: String): Unit =
    metastore.tx(MetaDao.setCompacted(_, repo, image, table, None))

  /**
   * Commits table updates as one new image on `branch`, in one metastore transaction: the one commit
   * path of every write, merge, cherry-pick, revert and transaction. The image's parents are the branch
   * head it moves from, then `mergeParents` (a merge's other heads). `base` is the head the updates were
   * planned on (None: the branch must not exist yet, and is created, with the repository if needed).
   *
   * When the branch moved on from `base` and the commits in between changed none of the tables in
   * `updates`, the commit is rebased: it lands on the new head, keeping that head's tables (Iceberg's
   * retry on non-conflicting commits, done in the metastore transaction, so it never rewrites data). When
   * they did change one of them, [[BranchMovedException]] says which; nothing is committed.
   */
  def commit(repo: String, branch: String, base: Option[String], updates: Map[String, TableUpdate],
             author: String, message: String, lease: Option[Lease] = None,
             mergeParents: Seq[String] = Nil, allowEmpty: Boolean = true,
             probe: Option[Image => Unit] = None): CommitResult = {
    Names.validate(Names.Repository, repo); Names.validate(Names.Branch, branch)
    updates.keys.foreach(Names.validate(Names.Table, _))
    val started = now()
    val newObjectCount = updates.values.collect { case TableUpdate.Put(_, objs) => objs.size }.sum
    val (result, rebased, gated) = metastore.tx { c =>
      val fullRef = Ref.branch(branch)
      val actor = actors() // who commits: recorded with the image and in the branch's reflog entry
      val why = causeOf(if (mergeParents.nonEmpty) Cause.Merge else Cause.Commit, "", actor)
      // The generation lock first, then the head: under READ COMMITTED (PostgreSQL) two commits that read the
      // head before either holds the lock would both plan on it, and the second's compare-and-swap would fail
      // with a conflict no re-plan could see. Holding the lock, each statement reads the latest committed head.
      MetaDao.lockGeneration(c, bump = true)
      val current = writableHead(c, repo, branch).map(_.hash)
      // a protected branch moves only as its rules allow (creating it always may: a rule can precede its branch)
      if (current.isDefined) protections.guard(c, repo, branch, Move.Commit(merge = mergeParents.nonEmpty))
      val rebased = current != base
      if (rebased) checkRebase(c, repo, branch, base, current, updates.keySet)
      def lostRace = new RefConflictException(
        s"Another writer created branch '$branch' of '$repo' at the same time. Nothing was committed; retry.")
      if (!MetaDao.repoExists(c, repo)) Sql.unique(MetaDao.insertRepo(c, repo, branch, now()))(lostRace)
      mergeParents.foreach(p => if (MetaDao.getImage(c, repo, p).isEmpty)
        throw new ImageNotFoundException(s"Image $p (a parent of this merge) is not in '$repo'."))
      // the rule set is read once here: the checks run are the ones the final move verifies are still required
      val required = if (current.isDefined) protections.rulesOf(c, repo).requiredChecks(branch) else Nil
      val parent = current.flatMap(MetaDao.getImage(c, repo, _))
      val parentTables = current.map(MetaDao.tablesOf(c, repo, _)).getOrElse(Vector.empty).map(t => t.table.name -> t.table).toMap
      val newObjects = updates.values.collect { case TableUpdate.Put(_, objs) => objs }.flatten.toSeq
      val referenced = updates.values.collect { case TableUpdate.Put(t, _) => t.effectiveFragments.flatMap(_.objects) }.flatten.toSeq
      secureObjects(c, repo, newObjects, referenced, lease, locked = true)
      val nextTables: Map[String, TableVersion] = updates.foldLeft(parentTables) {
        case (acc, (name, TableUpdate.Drop)) =>
          if (!acc.contains(name)) throw new TableNotFoundException(repo, name, s"branch '$branch'")
          acc - name
        case (acc, (name, TableUpdate.Put(t, _))) => acc + (name -> t.copy(name = name).withHash)
      }
      // Nothing to commit (every table as it is on the head): no image is made and the branch stays, as git does;
      // merges (which record their other parents) and callers that ask for an empty commit still make one.
      val unchanged = parent.isDefined && mergeParents.isEmpty && !allowEmpty &&
        nextTables.keySet == parentTables.keySet && nextTables.forall { case (n, t) => parentTables(n).hash == t.hash }
      if (unchanged) (CommitResult(parent.get, branch, Nil, empty = true), rebased, None)
      else {
        val created = math.max(now(), parent.map(_.createdMs + 1).getOrElse(0L))
        val parents = (current.toSeq ++ mergeParents).distinct
        val hash = Hashing.imageHash(parents, author, message, created, nextTables.toSeq.map { case (n, t) => n -> t.hash },
          Some(actor))
        val image = Image(repo, hash, parents, created, author, message, Some(actor))
        val rows = nextTables.values.toSeq.map(t => ImageTable(hash, t, !parentTables.get(t.name).exists(_.hash == t.hash)))
        val dropped = updates.collect { case (n, TableUpdate.Drop) => n }
        val changed = (rows.filter(_.changed).map(_.table.name) ++ dropped).sorted
        // Identical content, parents and metadata give an identical image (e.g. on two branches): reuse it.
        val fresh = MetaDao.getImage(c, repo, hash).isEmpty
        if (fresh) Sql.unique {
          MetaDao.insertImage(c, image, MetaDao.nextSeq(c, repo), changed)
          MetaDao.insertTables(c, repo, hash, rows)
        }(lostRace)
        current match {
          case None => Sql.unique(MetaDao.insertRef(c, repo, Ref(fullRef, RefKind.Branch, hash, created), why))(lostRace)
          case Some(_) if required.nonEmpty || probe.isDefined => () // gated: the branch moves after the checks pass (below)
          case Some(old) =>
            if (!MetaDao.casRef(c, repo, fullRef, old, hash, why)) throw new RefConflictException(
              s"Branch '$branch' of '$repo' moved during this commit. Nothing was committed; retry.")
        }
        (CommitResult(image, branch, changed), rebased,
          current.filter(_ => required.nonEmpty || probe.isDefined).map(o => Gated(o, required, fresh)))
      }
    }
    gated.foreach { g =>
      // a probe (a publish's dry run) looks at the image that would land, then forgets it: the branch never moves
      if (probe.isDefined) try probe.get(result.image) finally forget(repo, result.image, g)
      else land(repo, branch, result.image, g, updates.keySet)
    }
    if (result.empty) log.info(s"versioned: nothing to commit on $repo@$branch (${result.image.shortHash} unchanged)")
    else log.info(s"versioned: commit $repo@$branch ${result.image.shortHash} tables=[${result.changedTables.mkString(",")}] " +
      s"parents=${result.image.parents.size} new objects=$newObjectCount${if (rebased) " (rebased)" else ""} " +
      s"in ${now() - started} ms")
    if (!result.empty) moves.announce(BranchMoved(repo, branch, result.image.hash, Some(result.changedTables)))
    result
  }

  private case class Gated(head: String, checks: Seq[String], fresh: Boolean)

  /**
   * The second step of a commit into a branch with required checks: the image is recorded but the branch has not
   * moved. The checks run on that image (outside the transaction); then, in one transaction, the branch moves from
   * the head the image was made on to it, if it is still there and the rule set still requires the same checks.
   * Else the image is forgotten and nothing moved: a failed check is CHECK_FAILED; a moved branch or changed
   * rules raise [[BranchMovedException]], so the writer plans again on the new head (and the checks run again).
   */
  private def forget(repo: String, image: Image, g: Gated): Unit = if (g.fresh) metastore.tx { c =>
    if (!MetaDao.allRefTargets(c).exists { case (r, h) => r == repo && h == image.hash }) MetaDao.deleteImage(c, repo, image.hash)
  }

  private def land(repo: String, branch: String, image: Image, g: Gated, tables: Set[String]): Unit = {
    try {
      val gate = checkGate.getOrElse(throw new CheckFailedException(g.checks, s"Branch '$branch' of '$repo' requires " +
        s"checks ${g.checks.mkString(", ")}, and this process cannot run checks (they run in a Spark session). " +
        "Nothing was committed. Commit from a Spark session."))
      gate.enforce(this, repo, image, g.checks, s"gate:$branch")
      metastore.tx { c =>
        MetaDao.lockGeneration(c, bump = true)
        val now = MetaDao.getRef(c, repo, Ref.branch(branch)).map(_.image)
        def moved(why: String) = new BranchMovedException(now, tables.toSeq.sorted, s"Branch '$branch' of '$repo' $why " +
          "while the checks ran. Nothing was committed; planning again on the new head runs the checks again.")
        if (protections.rulesOf(c, repo).requiredChecks(branch).toSet != g.checks.toSet) throw moved("changed its rules")
        protections.guard(c, repo, branch, Move.Commit(merge = image.parents.size > 1))
        if (!now.contains(g.head) || !MetaDao.casRef(c, repo, Ref.branch(branch), g.head, image.hash,
          cause(if (image.parents.size > 1) Cause.Merge else Cause.Commit))) throw moved("moved")
      }
    } catch { case e: Throwable => try forget(repo, image, g) catch { case s: Throwable => e.addSuppressed(s) }; throw e }
  }

  /**
   * A commit planned on `base` may land on `current` when the commits in between changed none of `tables`
   * (compared by content hash; a table added or dropped in between counts as changed). Else raises
   * [[BranchMovedException]] (a moved branch) or [[RefConflictException]] (a branch created or deleted).
   */
  private def checkRebase(c: java.sql.Connection, repo: String, branch: String, base: Option[String],
                          current: Option[String], tables: Set[String]): Unit = {
    def moved(what: String) = s"Branch '$branch' of '$repo' moved to ${current.map(_.take(12)).getOrElse("nothing")} " +
      s"while this commit was prepared on ${base.map(_.take(12)).getOrElse("an empty branch")}$what. Nothing was committed"
    if (base.isEmpty || current.isEmpty) throw new RefConflictException(moved("") + "; retry.")
    def hashes(image: String) = MetaDao.tablesOf(c, repo, image).map(t => t.table.name -> t.table.hash).toMap
    val (before, after) = (hashes(base.get), hashes(current.get))
    val overlap = tables.toSeq.sorted.filter(t => before.get(t) != after.get(t))
    if (overlap.nonEmpty) throw new BranchMovedException(current, overlap,
      moved(s", and the commits in between changed ${overlap.mkString(", ")} too") + "; retry on the new head.")
  }

  /** An image of `repo` by full hash. */
  def image(repo: String, hash: String): Image = metastore.read(MetaDao.getImage(_, repo, hash)).getOrElse(
    throw new ImageNotFoundException(s"Image $hash not found in '$repo'."))
}

/**
 * One engine per warehouse configuration per JVM. `hadoopConf` (how to reach the object store) is used
 * when the engine is first opened.
 */
object Engine {
  private val engines = new ConcurrentHashMap[WarehouseConfig, Engine]()
  def apply(config: WarehouseConfig, hadoopConf: Configuration = new Configuration()): Engine =
    engines.computeIfAbsent(config, c => new Engine(c, hadoopConf))
}
