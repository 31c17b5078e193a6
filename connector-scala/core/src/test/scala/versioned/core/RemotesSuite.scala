package versioned.core

import java.nio.file.{Files, Path}
import scala.jdk.CollectionConverters._
import org.apache.hadoop.conf.Configuration

/**
 * Remotes in the engine (no Spark): two warehouses in temporary directories, each with its own metastore:
 * SQLite files, or two PostgreSQL databases when the suites run there (the remote's URL is then recorded
 * without its credentials, which the connection gets from [[RemoteCredentials]]). Objects are small real
 * files with checksums, so transfers verify them.
 */
class RemotesSuite extends CoreFixture {
  private var otherDir: Path = _
  private var other: Engine = _
  private var otherDatabase: Option[String] = None
  private var credentials = RemoteCredentials.None
  private var otherUrl: String = _

  override protected def beforeEach(): Unit = {
    super.beforeEach()
    otherDir = Files.createTempDirectory("versioned-remote-test")
    TestMetastores.postgresAdminUrl match {
      case None =>
        other = Engine(WarehouseConfig.embedded(otherDir.toString))
        otherUrl = other.config.metastoreUrl
      case Some(admin) =>
        val (db, url) = TestMetastores.createDatabase(admin)
        otherDatabase = Some(db)
        other = new Engine(WarehouseConfig(otherDir.toString, url))
        def param(k: String) = s"[?&]$k=([^&]*)".r.findFirstMatchIn(url).map(_.group(1))
        credentials = RemoteCredentials(param("user"), param("password"))
        otherUrl = url.replaceAll("[?&](user|password)=[^&]*", "").replaceFirst("&", "?")
    }
  }

  override protected def afterEach(): Unit = {
    try super.afterEach()
    finally {
      deleteRecursively(otherDir)
      if (otherDatabase.isDefined) other.close()
      for (admin <- TestMetastores.postgresAdminUrl; db <- otherDatabase) TestMetastores.dropDatabase(admin, db)
      otherDatabase = None
    }
  }

  private val conf = new Configuration()
  private def connect(r: Remote, create: Boolean): Engine = Remotes.open(r, credentials, conf, create, engine)
  private def sync = new Sync(engine, connect, new SequentialMover(conf))
  private def origin(repository: String = "r"): Remote = Remote.of("origin", other.config.warehouse, otherUrl, repository)

  /** A small real object file in warehouse `root`, with its size and checksum recorded. */
  private def realObject(root: Path, seed: String): ObjectMeta = {
    val id = fakeId(seed)
    val f = root.resolve(ObjectMeta.relativePath(id))
    Files.createDirectories(f.getParent)
    val bytes = (s"object $seed " * 20).getBytes("UTF-8")
    Files.write(f, bytes)
    val (len, cs) = ObjectChecksum.compute(org.apache.hadoop.fs.FileSystem.getLocal(conf).getRaw,
      new org.apache.hadoop.fs.Path(f.toUri), bytes.length - 8L)
    ObjectMeta(id, ObjectKind.Snap, Nil, 1, len, "parquet", Map("id" -> 1), Map("id" -> 1), Map("id" -> 0L), cs.encode)
  }

  private def file(root: Path, id: String): Path = root.resolve(ObjectMeta.relativePath(id))

  /** Commits table `t` made of new objects `seeds` on `branch` of `repo` in warehouse `e` (stored at `root`). */
  private def commitIn(e: Engine, root: Path, repo: String, branch: String, t: String, seeds: String*): CommitResult = {
    val metas = seeds.map(realObject(root, _))
    e.commit(repo, branch, e.branchHeadOption(repo, branch).map(_.hash),
      Map(t -> TableUpdate.Put(tableVersion(t, metas.map(_.id)), metas)), "tester", s"$t <- ${seeds.mkString(",")}")
  }
  private def remoteCommit(t: String, seeds: String*): CommitResult = commitIn(other, otherDir, "r", "main", t, seeds: _*)
  private def localCommit(repo: String, branch: String, t: String, seeds: String*): CommitResult =
    commitIn(engine, dir, repo, branch, t, seeds: _*)

  private def log(e: Engine, repo: String, ref: String): Seq[Image] = e.history.log(repo, spec(ref)).map(_.image)
  private def tables(e: Engine, repo: String, image: String): Seq[TableVersion] = e.tables(repo, image)
  private def refTarget(e: Engine, repo: String, full: String): Option[String] =
    e.refs.all(repo).find(_.fullName == full).map(_.image)
  private def localObjectFiles: Seq[String] =
    if (!Files.exists(dir.resolve("objects"))) Nil
    else {
      val s = Files.walk(dir.resolve("objects"))
      try s.iterator().asScala.filter(Files.isRegularFile(_)).map(_.getFileName.toString).filterNot(_.startsWith(".")).toSeq.sorted finally s.close()
    }

  test("remotes are added, listed and removed; unknown names, duplicates and credentials are refused") {
    commitOn("r", "main", putFresh("t"))
    engine.remotes.add("r", origin())
    assert(engine.remotes.list("r").map(r => (r.name, r.repository, r.warehouse, r.metastoreUrl)) ==
      Seq(("origin", "r", other.config.warehouse, otherUrl)))
    expectError[RemoteExistsException](ErrorClass.RemoteExists)(engine.remotes.add("r", origin()))
    expectError[RemoteNotFoundException](ErrorClass.RemoteNotFound)(engine.remotes.get("r", "upstream"))
    expectError[RemoteNotFoundException](ErrorClass.RemoteNotFound)(sync.fetch("r", "upstream", download = false))
    expectError[InvalidInputException](ErrorClass.InvalidOption)(
      Remote.of("x", other.config.warehouse, "jdbc:postgresql://h/db?user=u&password=secret", "r"))
    expectError[InvalidInputException](ErrorClass.InvalidOption)(Remote.of("x", "s3a://key:secret@bucket/wh", "jdbc:sqlite:/x", "r"))
    expectError[InvalidNameException](ErrorClass.InvalidName)(Remote.of("a/b", other.config.warehouse, "jdbc:sqlite:/x", "r"))
    engine.remotes.remove("r", "origin")
    assert(engine.remotes.list("r").isEmpty)
    expectError[RemoteNotFoundException](ErrorClass.RemoteNotFound)(engine.remotes.remove("r", "origin"))
  }

  test("a lazy clone copies history, not data: same hashes, tracking refs, a default branch, objects read in place") {
    val c1 = remoteCommit("t", "a1", "a2")
    other.refs.createTag("r", "v1", spec("main"))
    val c2 = remoteCommit("u", "b1")
    other.refs.createBranch("r", "dev", spec("main~1"))
    val result = sync.cloneRepository(origin(), "copy", download = false)
    assert(result.images == 2 && result.objects == 3 && result.downloaded == 0)
    assert(log(engine, "copy", "main") == log(other, "r", "main").map(_.copy(repo = "copy")))
    assert(log(engine, "copy", "main").map(_.hash) == Seq(c2.image.hash, c1.image.hash), "content-addressed: same hashes")
    Seq(c1, c2).foreach(c => assert(tables(engine, "copy", c.image.hash) == tables(other, "r", c.image.hash)))
    assert(engine.refs.all("copy").map(r => r.fullName -> r.image).toSet == Set(
      "heads/main" -> c2.image.hash, "remotes/origin/main" -> c2.image.hash, "remotes/origin/dev" -> c1.image.hash,
      "remotes/origin/tags/v1" -> c1.image.hash))
    assert(engine.resolve("copy", spec("origin/dev")).hash == c1.image.hash)
    assert(engine.remotes.list("copy").map(r => (r.name, r.repository)) == Seq("origin" -> "r"))
    assert(localObjectFiles.isEmpty, "nothing was downloaded")
    val metas = engine.objects(Seq(fakeId("a1"), fakeId("b1")))
    assert(metas.values.forall(m => m.locations == Seq(other.config.objectUri(m.id))), metas)
    assert(metas(fakeId("a1")).checksum == other.objects(Seq(fakeId("a1")))(fakeId("a1")).checksum)
    // a local commit on the clone builds on objects that stay where they are
    val c3 = localCommit("copy", "main", "w", "c1")
    assert(c3.image.parents == Seq(c2.image.hash) && engine.tables("copy", c3.image.hash).map(_.name) == Seq("t", "u", "w"))
  }

  test("clone refuses an existing repository, a missing remote repository and a place that holds no warehouse") {
    remoteCommit("t", "a1")
    commitOn("copy", "main", putFresh("t"))
    val before = engine.refs.all("copy")
    expectError[VersionedException](ErrorClass.RepositoryExists)(sync.cloneRepository(origin(), "copy", download = false))
    assert(engine.refs.all("copy") == before)
    expectError[NotFoundException](ErrorClass.RepositoryNotFound)(sync.cloneRepository(origin("nope"), "c2", download = false))
    expectError[ObjectStoreUnsupportedException](ErrorClass.ObjectStoreUnsupported)(
      sync.cloneRepository(Remote.of("origin", "nosuchfs://bucket/wh", otherUrl, "r"), "c4", download = false))
    val empty = Files.createTempDirectory("versioned-nowhere")
    try {
      val nowhere = Remote.of("origin", empty.toString, s"jdbc:sqlite:$empty/metastore.db", "r")
      expectError[RemoteUnreachableException](ErrorClass.RemoteUnreachable)(sync.cloneRepository(nowhere, "c3", download = false))
      assert(Option(empty.toFile.list()).forall(_.isEmpty), "nothing was created where no warehouse is")
    } finally deleteRecursively(empty)
    assert(!engine.repositoryExists("c2") && !engine.repositoryExists("c3") && !engine.repositoryExists("c4"))
  }

  test("clone with download copies every object, verified; a corrupt source object commits nothing") {
    remoteCommit("t", "a1", "a2")
    val result = sync.cloneRepository(origin(), "full", download = true)
    assert(result.downloaded == 2 && localObjectFiles.toSet == Set(s"${fakeId("a1")}.parquet", s"${fakeId("a2")}.parquet"))
    assert(engine.objects(Seq(fakeId("a1"))).values.forall(_.locations.isEmpty))
    assert(Files.readAllBytes(file(dir, fakeId("a1"))).sameElements(Files.readAllBytes(file(otherDir, fakeId("a1")))))
    val c = remoteCommit("t", "bad")
    val f = file(otherDir, fakeId("bad"))
    val bytes = Files.readAllBytes(f); bytes(3) = (bytes(3) ^ 1).toByte; Files.write(f, bytes)
    val e = expectError[ObjectCorruptException](ErrorClass.ObjectCorrupt)(sync.cloneRepository(origin(), "full2", download = true))
    assert(e.objectId == fakeId("bad"))
    assert(!engine.repositoryExists("full2") && !Files.exists(file(dir, fakeId("bad"))), "nothing recorded or stored")
    assert(c.image.hash.nonEmpty)
  }

  test("fetch brings what is new since the last fetch and moves tracking refs, never local branches") {
    val c1 = remoteCommit("t", "a1")
    sync.cloneRepository(origin(), "copy", download = false)
    val c2 = remoteCommit("t", "a2")
    val c3 = remoteCommit("u", "b1")
    other.refs.createBranch("r", "dev", spec("main"))
    val f = sync.fetch("copy", "origin", download = false)
    assert(f.images == 2 && f.objects == 2)
    assert(f.refs.map(u => u.ref -> u.status) == Seq("remotes/origin/dev" -> SyncStatus.New,
      "remotes/origin/main" -> SyncStatus.FastForward))
    assert(refTarget(engine, "copy", "heads/main").contains(c1.image.hash), "fetch never moves a local branch")
    assert(refTarget(engine, "copy", "remotes/origin/main").contains(c3.image.hash))
    assert(log(engine, "copy", "origin/main").map(_.hash) == Seq(c3, c2, c1).map(_.image.hash))
    assert(engine.remotes.get("copy", "origin").fetchedSeq == 3)
    val again = sync.fetch("copy", "origin", download = false)
    assert(again.images == 0 && again.objects == 0 && again.refs.isEmpty)
    // a remote branch reset to another line of history is a forced update; a deleted one goes
    other.refs.resetBranch("r", "dev", spec("main~2"))
    val c4 = commitIn(other, otherDir, "r", "dev", "t", "d1")
    other.refs.deleteBranch("r", "dev")
    other.refs.createBranch("r", "dev2", spec(c4.image.hash))
    val f2 = sync.fetch("copy", "origin", download = false)
    assert(f2.refs.map(u => u.ref -> u.status) == Seq("remotes/origin/dev" -> SyncStatus.Deleted, "remotes/origin/dev2" -> SyncStatus.New))
  }

  test("fetch of many images copies them in batches with parents first") {
    val metas = (0 until 7).map(i => realObject(otherDir, s"many-$i"))
    (1 to 1003).foreach { i =>
      val m = metas(i % 7)
      other.commit("r", "main", other.branchHeadOption("r", "main").map(_.hash),
        Map("t" -> TableUpdate.Put(tableVersion("t", Seq(m.id)), Seq(m))), "tester", s"commit $i")
    }
    sync.cloneRepository(origin(), "copy", download = false)
    val mine = log(engine, "copy", "main")
    assert(mine.size == 1003 && mine.map(_.hash) == log(other, "r", "main").map(_.hash))
    assert(engine.objects((0 until 7).map(i => fakeId(s"many-$i"))).size == 7)
    val seqs = engine.metastore.read(MetaDao.imageRowsAfter(_, "copy", 0L)).map(r => r.image.hash -> r.seq).toMap
    mine.foreach(i => i.parents.foreach(p => assert(seqs(p) < seqs(i.hash), "a parent is recorded before its child")))
  }

  test("push uploads what the remote lacks, fast-forwards its branch, and tags go too") {
    val c1 = remoteCommit("t", "a1")
    sync.cloneRepository(origin(), "copy", download = false)
    val c2 = localCommit("copy", "main", "t", "l1", "l2")
    engine.refs.createTag("copy", "v2", spec("main"))
    val p = sync.push("copy", "origin", "main", force = false, tags = true)
    assert(p.status == SyncStatus.FastForward && p.old.contains(c1.image.hash) && p.head == c2.image.hash)
    assert(p.images == 1 && p.objects == 2 && p.uploaded == 2 && p.tags == Seq("v2"))
    assert(refTarget(other, "r", "heads/main").contains(c2.image.hash) && refTarget(other, "r", "tags/v2").contains(c2.image.hash))
    assert(Files.exists(file(otherDir, fakeId("l1"))) && Files.exists(file(otherDir, fakeId("l2"))))
    assert(tables(other, "r", c2.image.hash) == tables(engine, "copy", c2.image.hash))
    assert(refTarget(engine, "copy", "remotes/origin/main").contains(c2.image.hash))
    val again = sync.push("copy", "origin", "main", force = false, tags = true)
    assert(again.status == SyncStatus.UpToDate && again.uploaded == 0 && again.images == 0)
    // a new branch is created there
    engine.refs.createBranch("copy", "feature", spec("main"))
    val c3 = localCommit("copy", "feature", "u", "f1")
    assert(sync.push("copy", "origin", "feature", force = false, tags = false).status == SyncStatus.Created)
    assert(refTarget(other, "r", "heads/feature").contains(c3.image.hash))
  }

  test("a push into a protected branch of the remote obeys its rules and changes nothing there when refused") {
    remoteCommit("t", "a1")
    sync.cloneRepository(origin(), "copy", download = false)
    other.protections.protect("r", versioned.core.governance.BranchRule("main"))
    localCommit("copy", "main", "t", "l1")
    val before = (other.refs.all("r"), log(other, "r", "main"))
    val e = expectError[BranchProtectedException](ErrorClass.ProtectedRef)(sync.push("copy", "origin", "main", force = true,
      tags = false))
    assert(e.pattern == "main" && e.getMessage.contains("a push is refused"))
    assert((other.refs.all("r"), log(other, "r", "main")) == before, "a refused push changes nothing on the remote")
    // a branch no rule covers is pushed as before; a rule without require_merge takes a fast-forward push
    engine.refs.createBranch("copy", "feature", spec("main"))
    assert(sync.push("copy", "origin", "feature", force = false, tags = false).status == SyncStatus.Created)
    other.protections.protect("r", versioned.core.governance.BranchRule("main", requireMerge = false))
    assert(sync.push("copy", "origin", "main", force = false, tags = false).status == SyncStatus.FastForward)
  }

  test("a non-fast-forward push is rejected and changes nothing; after fetch and merge it goes; force replaces") {
    remoteCommit("t", "a1")
    sync.cloneRepository(origin(), "copy", download = false)
    val theirs = remoteCommit("u", "r2")
    val ours = localCommit("copy", "main", "t", "l1")
    val before = (other.refs.all("r"), log(other, "r", "main"))
    val e = expectError[NonFastForwardException](ErrorClass.NonFastForward)(sync.push("copy", "origin", "main", force = false, tags = true))
    assert(e.getMessage.contains("Pull"))
    assert((other.refs.all("r"), log(other, "r", "main")) == before, "a rejected push changes nothing on the remote")
    assert(!Files.exists(file(otherDir, fakeId("l1"))))
    // fetch, merge (here by a merge commit made through the one commit path), push again
    sync.fetch("copy", "origin", download = false)
    val merged = engine.commit("copy", "main", Some(ours.image.hash), Map("u" -> TableUpdate.Put(
      engine.table("copy", theirs.image, "u"), Nil)), "tester", "merge", mergeParents = Seq(theirs.image.hash))
    assert(sync.push("copy", "origin", "main", force = false, tags = true).status == SyncStatus.FastForward)
    assert(refTarget(other, "r", "heads/main").contains(merged.image.hash))
    // force: the remote branch is replaced by a line that does not contain its head
    engine.refs.createBranch("copy", "other", spec(ours.image.hash))
    val lone = localCommit("copy", "other", "t", "z1")
    engine.refs.resetBranch("copy", "main", spec(lone.image.hash))
    expectError[NonFastForwardException](ErrorClass.NonFastForward)(sync.push("copy", "origin", "main", force = false, tags = false))
    assert(sync.push("copy", "origin", "main", force = true, tags = false).status == SyncStatus.Forced)
    assert(refTarget(other, "r", "heads/main").contains(lone.image.hash))
  }

  test("a tag the remote has at another image rejects the push before anything is sent") {
    remoteCommit("t", "a1")
    sync.cloneRepository(origin(), "copy", download = false)
    other.refs.createTag("r", "v1", spec("main"))
    val c = localCommit("copy", "main", "t", "l1")
    engine.refs.createTag("copy", "v1", spec(c.image.hash))
    val before = other.refs.all("r")
    expectError[ImmutableRefException](ErrorClass.ImmutableRef)(sync.push("copy", "origin", "main", force = false, tags = true))
    assert(other.refs.all("r") == before && !Files.exists(file(otherDir, fakeId("l1"))))
    assert(sync.push("copy", "origin", "main", force = false, tags = false).status == SyncStatus.FastForward)
  }

  test("a remote whose history was rewritten is refused, naming what is gone") {
    remoteCommit("t", "a1")
    sync.cloneRepository(origin(), "copy", download = false)
    other.dropRepository("r")
    remoteCommit("t", "x1")
    val before = engine.refs.all("copy")
    val e = expectError[RemoteHistoryRewrittenException](ErrorClass.RemoteHistoryRewritten)(sync.fetch("copy", "origin", download = false))
    assert(e.getMessage.contains("remotes/origin/main") && e.getMessage.contains("remove the remote"))
    assert(engine.refs.all("copy") == before)
    engine.remotes.remove("copy", "origin")
    assert(engine.refs.all("copy").forall(_.kind != RefKind.Remote))
    engine.remotes.add("copy", origin())
    sync.fetch("copy", "origin", download = false)
    assert(refTarget(engine, "copy", "remotes/origin/main").isDefined)
  }

  test("import_table links a table of another repository through the one commit path, copying no data") {
    val src = localCommit("src", "main", "items", "i1", "i2")
    localCommit("dst", "main", "t", "d1")
    val objectsBefore = engine.metastore.read(MetaDao.allObjectIds).size
    val c = sync.importTable("dst", "main", "src", "items", spec("main"), "items_copy", None, "tester", None)
    assert(c.changedTables == Seq("items_copy") && c.image.message.contains("import src.items"))
    val imported = engine.table("dst", c.image, "items_copy")
    assert(imported.fragments == engine.table("src", src.image, "items").fragments)
    assert(engine.metastore.read(MetaDao.allObjectIds).size == objectsBefore, "no object copied or registered")
    expectError[VersionedException](ErrorClass.TableExists)(
      sync.importTable("dst", "main", "src", "items", spec("main"), "items_copy", None, "tester", None))
    expectError[TableNotFoundException](ErrorClass.TableNotFound)(
      sync.importTable("dst", "main", "src", "nope", spec("main"), "x", None, "tester", None))
    // from a remote: the objects are recorded at their location there
    remoteCommit("far", "f1")
    engine.remotes.add("dst", origin())
    val c2 = sync.importTable("dst", "main", "r", "far", spec("main"), "far", Some("origin"), "tester", Some("bring far"))
    assert(c2.image.message == "bring far" && c2.image.parents == Seq(c.image.hash))
    assert(engine.objects(Seq(fakeId("f1")))(fakeId("f1")).locations == Seq(other.config.objectUri(fakeId("f1"))))
    assert(!Files.exists(file(dir, fakeId("f1"))))
  }

  test("gc keeps what remote-tracking refs and recorded locations need, and never touches the remote's files") {
    remoteCommit("t", "a1")
    val c2 = remoteCommit("t", "a2")
    // a compacted form on the remote's head: a downloading clone keeps it, a lazy one reads only history
    val comp = realObject(otherDir, "compacted")
    other.setCompacted("r", c2.image.hash, "t", Seq(Fragment(None, Seq(comp.id))), Seq(comp))
    sync.cloneRepository(origin(), "copy", download = false)
    assert(engine.table("copy", engine.image("copy", c2.image.hash), "t").compacted.isEmpty,
      "the remote evicts compacted forms; a lazy clone does not depend on them")
    assert(engine.objects(Seq(comp.id)).isEmpty)
    sync.cloneRepository(origin(), "full", download = true)
    engine.refs.resetBranch("full", "main", spec("main~1")) // now only remotes/origin/main points at c2
    assert(engine.maintenance.evict("full").isEmpty, "a remote-tracking ref keeps its image's compacted form")
    assert(engine.maintenance.collectGarbage(None, 0L, force = true, dryRun = false).isEmpty)
    assert(engine.table("full", engine.image("full", c2.image.hash), "t").compacted.isDefined)
    assert(Files.exists(file(dir, comp.id)))
    assert(engine.objects(Seq(fakeId("a1"), fakeId("a2"))).values.forall(_.locations.isEmpty), "downloaded for 'full'")
    engine.dropRepository("full")
    engine.maintenance.collectGarbage(None, 0L, force = true, dryRun = false)
    // a lazy clone's objects: kept while referenced, their rows and locations dropped with the repository
    val lazyOnes = realObject(otherDir, "lazy-only")
    other.commit("r", "main", Some(c2.image.hash), Map("z" -> TableUpdate.Put(tableVersion("z", Seq(lazyOnes.id)), Seq(lazyOnes))),
      "tester", "z")
    sync.fetch("copy", "origin", download = false)
    assert(engine.objects(Seq(lazyOnes.id))(lazyOnes.id).isRemote)
    assert(engine.maintenance.collectGarbage(None, 0L, force = true, dryRun = false).isEmpty, "referenced: kept")
    engine.dropRepository("copy")
    val gone = engine.maintenance.collectGarbage(None, 0L, force = true, dryRun = false)
    assert(gone.map(_.name).toSet == Set(fakeId("a1"), fakeId("a2"), lazyOnes.id)) // the first two downloaded for 'full'
    assert(!Files.exists(file(dir, fakeId("a1"))))
    assert(engine.metastore.read(c => Sql.query(c, "SELECT COUNT(*) FROM vc_object_locations")(_.getInt(1)).head) == 0)
    Seq(fakeId("a1"), fakeId("a2"), comp.id, lazyOnes.id).foreach(id =>
      assert(Files.exists(file(otherDir, id)), "the remote's files are its own"))
  }

  test("reflog: a fetch records the tracking refs it moves; a push records the remote branch's move in the remote's reflog") {
    engine.actors = () => Actor("bob", "app-7", Actor.Cli)
    remoteCommit("t", "a1")
    sync.cloneRepository(origin(), "copy", download = false)
    assert(engine.reflog.entries("copy").reverse.map(e => e.ref -> e.operation) ==
      Seq("remotes/origin/main" -> Cause.Clone, "heads/main" -> Cause.Clone))
    val c2 = remoteCommit("t", "a2")
    sync.fetch("copy", "origin", download = false)
    val fetched = engine.reflog.entries("copy").head
    assert(fetched.ref == "remotes/origin/main" && fetched.operation == Cause.Fetch && fetched.newImage.contains(c2.image.hash))
    engine.refs.resetBranch("copy", "main", spec("origin/main"))
    assert(engine.reflog.entries("copy").head.operation == Cause.Reset)
    val mine = localCommit("copy", "main", "t", "l1")
    val remoteBefore = other.reflog.entries("r").size
    sync.push("copy", "origin", "main", force = false, tags = false)
    val pushed = other.reflog.entries("r").head
    assert(other.reflog.entries("r").size == remoteBefore + 1)
    assert(pushed.ref == "heads/main" && pushed.operation == Cause.Push && pushed.oldImage.contains(c2.image.hash) &&
      pushed.newImage.contains(mine.image.hash) && pushed.who == "bob" && pushed.client == Actor.Cli && pushed.detail == "from copy")
    assert(engine.reflog.entries("copy").head.ref == "remotes/origin/main" && engine.reflog.entries("copy").head.operation == Cause.Push)
    // a forced push says so in the remote's reflog
    engine.refs.resetBranch("copy", "main", spec("main~1"))
    localCommit("copy", "main", "t", "l2")
    sync.push("copy", "origin", "main", force = true, tags = false)
    assert(other.reflog.entries("r").head.detail == "from copy, forced")
    Seq(engine -> "copy", other -> "r").foreach { case (e, repo) => assert(e.reflog.verify(repo).isEmpty) }
  }
}
