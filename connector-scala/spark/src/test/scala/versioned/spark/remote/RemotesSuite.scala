package versioned.spark.remote

import java.io.File
import java.nio.file.{Files, Path => JPath}
import scala.collection.mutable
import scala.jdk.CollectionConverters._
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types._
import versioned.core._
import versioned.core.TestMetastores
import versioned.spark.VersionedTestBase
import versioned.spark.session.VersionedOptions
import versioned.spark.api.VersionedApi
import versioned.spark.catalog.VersionedCatalog
import versioned.spark.merge.MergeOutcome
import versioned.spark.safety.{Faults, FaultyFileSystem}

/**
 * Remotes end to end, through the Scala API and `CALL vc.system.*`: two warehouses on the local file system
 * with separate SQLite metastores, the session's own (where clones land) and an "origin" one (optionally
 * reached through the `faulty:` file system, which counts what a read opens and fails chosen operations).
 */
class RemotesSuite extends VersionedTestBase {
  override protected def extraConf: Map[String, String] = Map(
    "spark.hadoop.fs.faulty.impl" -> classOf[FaultyFileSystem].getName,
    "spark.sql.catalog.vc" -> classOf[VersionedCatalog].getName,
    VersionedOptions.ConfDiffCacheBytes -> "0") // every read opens what it needs (counted below)

  private var originDir: File = _

  override def beforeEach(): Unit = {
    super.beforeEach()
    originDir = Files.createTempDirectory("versioned-origin").toFile
  }

  override def afterEach(): Unit = {
    Faults.disarm()
    try deleteAll(originDir.toPath) finally super.afterEach()
  }

  private def deleteAll(p: JPath): Unit = if (Files.exists(p)) {
    val s = Files.walk(p)
    try s.sorted(java.util.Comparator.reverseOrder[JPath]()).forEach(f => Files.deleteIfExists(f)) finally s.close()
  }

  /** A warehouse: object store URI and metastore URL. */
  private case class Side(warehouse: String, metastoreUrl: String) {
    def opts: Map[String, String] = Map(VersionedOptions.Warehouse -> warehouse, VersionedOptions.MetastoreUrl -> metastoreUrl)
    def engine: Engine = Engine(WarehouseConfig(warehouse, metastoreUrl), spark.sparkContext.hadoopConfiguration)
  }
  private def origin(faulty: Boolean = false): Side = Side((if (faulty) "faulty://" else "") + originDir.getAbsolutePath,
    s"jdbc:sqlite:${originDir.getAbsolutePath}/metastore.db")
  private def here: Side = Side(warehouse.getAbsolutePath, s"jdbc:sqlite:${warehouse.getAbsolutePath}/metastore.db")

  private val schema = new StructType().add("id", IntegerType, nullable = false).add("v", StringType)
  private def df(rows: Seq[(Int, String)]): DataFrame = frame(schema, rows.map { case (i, v) => Row(i, v) })
  private def create(side: Side, rows: Seq[(Int, String)]): Unit =
    write(df(rows), "r.t", (side.opts + ("primaryKey" -> "id")).toSeq: _*)
  private def upsert(side: Side, rows: Seq[(Int, String)], message: String): Unit =
    write(df(rows), "r.t", (side.opts ++ Map("upsert" -> "true", "message" -> message)).toSeq: _*)
  private def contents(side: Side, image: String, table: String = "r.t"): Map[Int, String] =
    read(table, (side.opts + ("image" -> image)).toSeq: _*).collect().map(r => r.getInt(0) -> r.getString(1)).toMap
  private def head(side: Side, repo: String = "r"): String = side.engine.branchHeadOption(repo, "main").get.hash
  private def history(side: Side): Seq[String] = side.engine.history.log("r", Revision.Spec("main")).map(_.image.hash)

  private def cloneOrigin(o: Side, download: String = null, into: String = null): FetchResult =
    VersionedApi.cloneRepository(spark, null, "r", o.warehouse, o.metastoreUrl, into, null, download)
  private def push(force: Boolean = false): PushResult = VersionedApi.push(spark, null, "r", null, null, force, true)
  private def pull(): MergeOutcome = VersionedApi.pull(spark, null, "r", null, null, null, null, null, "tester")

  private def objectFiles(root: File): Seq[String] = {
    val dir = new File(root, "objects").toPath
    if (!Files.exists(dir)) Nil else {
      val s = Files.walk(dir)
      try s.iterator().asScala.filter(Files.isRegularFile(_)).map(_.getFileName.toString).filterNot(_.startsWith(".")).toSeq
      finally s.close()
    }
  }

  test("clone, commit on both sides, fetch, pull, push, a rejected push pulled and pushed again: every version equals the oracle on both sides") {
    val o = origin()
    val oracle = mutable.LinkedHashMap.empty[String, Map[Int, String]]
    val base = (1 to 120).map(i => i -> s"v$i").toMap
    create(o, base.toSeq)
    oracle(head(o)) = base
    val cloned = cloneOrigin(o)
    assert(cloned.images == 1 && cloned.downloaded == 0 && head(here) == head(o), "same image, same hash")
    assert(contents(here, head(here)) == base)

    val ours1 = (200 to 205).map(i => i -> s"c$i")
    val theirs1 = (1 to 5).map(i => i -> s"o$i")
    upsert(o, theirs1, "origin 1"); oracle(head(o)) = base ++ theirs1
    upsert(here, ours1, "clone 1"); oracle(head(here)) = base ++ ours1
    val fetched = VersionedApi.fetch(spark, null, "r", null, null)
    assert(fetched.images == 1 && fetched.refs.map(u => u.ref -> u.status) == Seq("remotes/origin/main" -> SyncStatus.FastForward))
    assert(here.engine.resolve("r", Revision.Spec("origin/main")).hash == head(o) && head(here) != head(o),
      "fetch moves the tracking ref, never the local branch")
    assert(contents(here, head(o)) == base ++ theirs1, "the fetched version reads in place at the origin")

    assert(pull().status == MergeOutcome.Merged)
    val merged1 = base ++ theirs1 ++ ours1
    oracle(head(here)) = merged1
    val p1 = push()
    assert(p1.status == SyncStatus.FastForward && head(o) == head(here) && p1.uploaded > 0)

    upsert(o, Seq(10 -> "o10"), "origin 2"); oracle(head(o)) = merged1 + (10 -> "o10")
    upsert(here, Seq(300 -> "c300"), "clone 2"); oracle(head(here)) = merged1 + (300 -> "c300")
    val (originHead, originLog) = (head(o), history(o))
    expectError(ErrorClass.NonFastForward, "Pull")(push())
    assert(head(o) == originHead && history(o) == originLog, "a rejected push changes nothing on the remote")
    assert(pull().status == MergeOutcome.Merged)
    oracle(head(here)) = merged1 + (10 -> "o10") + (300 -> "c300")
    assert(push().status == SyncStatus.FastForward && head(o) == head(here))

    assert(history(o) == history(here) && history(o).toSet == oracle.keySet, "both sides hold the same history")
    for ((image, expected) <- oracle; side <- Seq(o, here))
      assert(contents(side, image) == expected, s"version ${image.take(12)} at ${side.warehouse}")
    info(s"${oracle.size} versions equal the oracle in both warehouses")
  }

  test("a pull's reflog: the fetch's tracking-ref moves, then the local branch's move as operation pull") {
    val o = origin()
    create(o, (1 to 10).map(i => i -> s"v$i"))
    cloneOrigin(o)
    def moves(after: Long) = here.engine.reflog.entries("r").filter(_.seq > after).reverse
      .map(e => (e.ref, e.operation, if (e.operation == Cause.Fetch) e.detail.take(15) else e.detail, e.oldImage, e.newImage))
    def last = here.engine.reflog.entries("r", limit = 1).head.seq
    // a fast-forward
    var from = last
    val before = head(here)
    upsert(o, Seq(1 -> "o1"), "origin 1")
    assert(pull().status == MergeOutcome.FastForward)
    assert(moves(from) == Seq(("remotes/origin/main", Cause.Fetch, "remote 'origin'", Some(before), Some(head(o))),
      ("heads/main", Cause.Pull, "from remotes/origin/main (merge)", Some(before), Some(head(o)))))
    // a merge commit: its entry is the pull's too, and the commit carries the session's actor
    upsert(o, Seq(2 -> "o2"), "origin 2")
    upsert(here, Seq(3 -> "c3"), "clone 3")
    from = last
    val ours = head(here)
    assert(pull().status == MergeOutcome.Merged)
    val m = moves(from)
    assert(m.map(e => (e._1, e._2)) == Seq("remotes/origin/main" -> Cause.Fetch, "heads/main" -> Cause.Pull), m)
    assert(m(1)._3 == "from remotes/origin/main (merge)" && m(1)._4.contains(ours) && m(1)._5.contains(head(here)))
    assert(here.engine.branchHeadOption("r", "main").get.actor.exists(_.user == spark.sparkContext.sparkUser))
    // a branch pulled for the first time is created by the pull
    o.engine.refs.createBranch("r", "dev", Revision.Spec("main"))
    from = last
    // reported as the fast-forward to the remote's head that it is, not as "up to date"
    val created = VersionedApi.pull(spark, null, "r", null, "dev", null, null, null, "tester")
    assert(created.status == MergeOutcome.FastForward &&
      created.commit == here.engine.branchHeadOption("r", "dev").get.hash)
    assert(moves(from).map(e => (e._1, e._2, e._3)) == Seq(("remotes/origin/dev", Cause.Fetch, "remote 'origin'"),
      ("heads/dev", Cause.Pull, "from remotes/origin/dev (create)")))
    // a pull that moves nothing records only what its fetch moved
    from = last
    assert(pull().status == MergeOutcome.UpToDate && moves(from).isEmpty)
    assert(here.engine.reflog.verify("r").isEmpty)
  }

  test("a lazy clone reads only the objects a query needs, in place at the remote") {
    val o = origin(faulty = true)
    create(o, (1 to 150).map(i => i -> s"v$i"))
    upsert(o, Seq(3 -> "x"), "a change in the first fragment")
    upsert(o, Seq(140 -> "y"), "a change in the last")
    cloneOrigin(o)
    val version = engine.table("r", engine.resolve("r", Revision.DefaultBranch), "t")
    val fragments = version.effectiveFragments
    val all = fragments.flatMap(_.objects).toSet
    assert(fragments.size >= 2, fragments)
    def opened(f: => Any): Set[String] = {
      Faults.opened.clear(); f
      Faults.opened.asScala.filter(_.contains("/objects/")).map(p => new File(p).getName.stripSuffix(".parquet")).toSet
    }
    val needed = fragments.filter(_.lower.forall(_.head.toString.toLong < 20)).flatMap(_.objects).toSet
    val some = opened(assert(read("r.t").filter("id < 20").collect().map(_.getInt(0)).toSet == (1 to 19).toSet))
    assert(some == needed && needed.size < all.size, s"opened $some, needed $needed")
    val whole = opened(assert(read("r.t").collect().length == 150))
    assert(whole == all)
    info(s"a key-range query opened ${some.size} of the ${all.size} objects; a full scan all of them")
    assert(objectFiles(warehouse).isEmpty, "a lazy clone stores no object")
    assert(VersionedApi.verify(spark, null, "r", null).filter("status != 'ok'").count() == 0, "verify reads them in place")
  }

  test("a push interrupted at any file operation moves nothing on the remote; a retry completes it") {
    val o = origin(faulty = true)
    create(o, (1 to 60).map(i => i -> s"v$i"))
    cloneOrigin(o)
    var k = 0
    def commitHere(): Unit = { k += 1; upsert(here, Seq(k -> s"c$k", (30 + k) -> s"m$k", (1000 + k) -> s"n$k"), s"clone $k") }
    commitHere()
    Faults.arm(0)
    assert(push().uploaded > 0)
    val ops = Faults.operations
    assert(ops >= 3, s"a push made only $ops file operations")
    var (raised, returned) = (0, 0)
    (1L to ops + 2).foreach { n =>
      commitHere()
      val before = head(o)
      Faults.arm(n)
      val outcome = try { push(); None } catch { case t: Throwable => Some(t) }
      Faults.disarm()
      outcome match {
        case Some(t) =>
          raised += 1
          assert(versionedCause(t).exists(_.errorClass == ErrorClass.StorageError), t)
          assert(head(o) == before, s"fault at operation $n: the push raised but the remote branch moved")
        case None =>
          returned += 1
          assert(head(o) == head(here), s"fault at operation $n: the push returned but the remote branch is elsewhere")
      }
      push() // the retry completes it (finding intact what the failed push uploaded)
      assert(head(o) == head(here) && contents(o, head(o)) == contents(here, head(here)), s"retry after a fault at $n")
    }
    assert(raised > 0 && returned > 0)
    assert(VersionedApi.verify(spark, o.opts.asJava, "r", null).filter("status != 'ok'").count() == 0)
    info(s"$ops file operations per push; with a fault at each of 1..${ops + 2}: $raised pushes raised and moved nothing, " +
      s"$returned returned; every retry completed")
  }

  test("objects are downloaded by Spark tasks and verified; a corrupt object is OBJECT_CORRUPT and commits nothing") {
    val o = origin()
    create(o, (1 to 150).map(i => i -> s"v$i"))
    val tableObjects = o.engine.table("r", o.engine.resolve("r", Revision.DefaultBranch), "t").fragments.flatMap(_.objects)
    // damage the footer of one object at the origin
    val victim = tableObjects.head
    val f = new File(originDir, ObjectMeta.relativePath(victim)).toPath
    val good = Files.readAllBytes(f)
    val bad = good.clone(); bad(bad.length - 5) = (bad(bad.length - 5) ^ 0x20).toByte; Files.write(f, bad)
    val e = expectError(ErrorClass.ObjectCorrupt, victim)(cloneOrigin(o, download = "all", into = "r2"))
    // nothing recorded: objects other tasks copied before the failure are files no row names (garbage collection's orphans)
    assert(e.getSqlState == "XX001" && !engine.repositoryExists("r2") && engine.objects(tableObjects).isEmpty)
    assert(!objectFiles(warehouse).contains(s"$victim.parquet"))
    cloneOrigin(o, into = "r3") // lazily: the damage shows when the object is read
    expectError(ErrorClass.ObjectCorrupt, victim)(read("r3.t").collect())
    Files.write(f, good)
    // a clone that downloads also brings the objects this warehouse knew only at their location
    val full = cloneOrigin(o, download = "all")
    assert(full.objects == 0 && full.downloaded >= 1 && objectFiles(warehouse).size == tableObjects.size)
    assert(engine.objects(tableObjects).values.forall(_.locations.isEmpty))
    assert(read("r.t").count() == 150 && read("r3.t").count() == 150)
  }

  test("download copies a lazily held version's objects here, verified; then every version's; the remote may then lose them") {
    val o = origin()
    create(o, (1 to 150).map(i => i -> s"v$i"))
    cloneOrigin(o)
    val first = head(here)
    upsert(o, Seq(3 -> "x", 140 -> "y"), "scattered")
    VersionedApi.fetch(spark, null, "r", null, null)
    def objectsOf(image: String) = engine.tables("r", image).flatMap(t => (t.fragments ++ t.compacted.toSeq.flatten).flatMap(_.objects)).distinct
    val (firstIds, newer) = (objectsOf(first), engine.resolve("r", Revision.Spec("origin/main")).hash)
    val onlyNewer = objectsOf(newer).filterNot(firstIds.toSet)
    assert(onlyNewer.nonEmpty && engine.objects(firstIds ++ onlyNewer).values.forall(_.isRemote))
    val before = engine.objects(firstIds ++ onlyNewer)
    // bad input: typed errors, nothing copied or forgotten
    expectError(ErrorClass.RefNotFound, "nope")(VersionedApi.download(spark, null, "r", "nope"))
    expectError(ErrorClass.RepositoryNotFound, "r9")(VersionedApi.download(spark, null, "r9", null))
    assert(engine.objects(firstIds ++ onlyNewer) == before && objectFiles(warehouse).isEmpty)
    // one version: its objects are stored here afterwards, the newer version's stay at the remote
    val one = VersionedApi.download(spark, null, "r", first)
    assert(one.image.contains(first) && one.objects == firstIds.size && one.downloaded == firstIds.size, one)
    assert(engine.objects(firstIds).values.forall(_.locations.isEmpty) && engine.objects(onlyNewer).values.forall(_.isRemote))
    assert(objectFiles(warehouse).toSet == firstIds.map(id => s"$id.parquet").toSet)
    assert(VersionedApi.download(spark, null, "r", first) == DownloadResult("r", Some(first), 0, 0)) // nothing left to do
    // every version, through SQL; a corrupt object at the remote is OBJECT_CORRUPT and nothing is forgotten
    val victim = onlyNewer.head
    val f = new File(originDir, ObjectMeta.relativePath(victim)).toPath
    val good = Files.readAllBytes(f)
    val bad = good.clone(); bad(bad.length - 5) = (bad(bad.length - 5) ^ 0x20).toByte; Files.write(f, bad)
    expectError(ErrorClass.ObjectCorrupt, victim)(VersionedApi.download(spark, null, "r", null))
    assert(engine.objects(onlyNewer) == before.filter(e => onlyNewer.contains(e._1)))
    Files.write(f, good)
    val row = spark.sql("CALL vc.system.download(repository => 'r')").collect().toSeq
    assert(row.map(r => (r.getString(0), Option(r.getString(1)), r.getLong(2))) == Seq(("r", None, onlyNewer.size.toLong)), row)
    assert(engine.objects(firstIds ++ onlyNewer).values.forall(_.locations.isEmpty))
    // the remote loses everything: both versions still read, verified
    deleteAll(originDir.toPath)
    assert(contents(here, first) == (1 to 150).map(i => i -> s"v$i").toMap)
    assert(contents(here, newer) == (1 to 150).map(i => i -> s"v$i").toMap ++ Map(3 -> "x", 140 -> "y"))
    assert(VersionedApi.verify(spark, null, "r", null).filter("status != 'ok'").count() == 0)
  }

  test("a download failing at any file operation of the remote forgets no place; a retry completes it") {
    val o = origin(faulty = true)
    create(o, (1 to 60).map(i => i -> s"v$i"))
    upsert(o, Seq(3 -> "x", 50 -> "y"), "scattered")
    cloneOrigin(o)
    val expected = contents(here, head(here))
    val ids = engine.tables("r", head(here)).flatMap(t => (t.fragments ++ t.compacted.toSeq.flatten).flatMap(_.objects)).distinct
    val before = engine.objects(ids)
    assert(before.nonEmpty && before.values.forall(_.isRemote))
    var (n, raised, done) = (0L, 0, Option.empty[DownloadResult])
    while (done.isEmpty && n < 200) {
      n += 1
      Faults.arm(n)
      val outcome = try Right(VersionedApi.download(spark, null, "r", null)) catch { case t: Throwable => Left(t) }
      Faults.disarm()
      outcome match {
        case Left(t) =>
          raised += 1
          assert(versionedCause(t).exists(_.errorClass == ErrorClass.StorageError), t)
          assert(engine.objects(ids) == before, s"fault at operation $n: the download raised but forgot places")
          assert(contents(here, head(here)) == expected)
        case Right(d) => done = Some(d)
      }
    }
    assert(raised > 0 && done.exists(_.objects == ids.size), (raised, done))
    assert(engine.objects(ids).values.forall(_.locations.isEmpty))
    deleteAll(originDir.toPath)
    assert(contents(here, head(here)) == expected)
    info(s"$raised downloads failed at a file operation of the remote and forgot nothing; the next completed")
  }

  test("an object two remotes hold is recorded at both, read at the second when the first loses it, and downloaded from it") {
    val a = origin()
    create(a, (1 to 150).map(i => i -> s"v$i"))
    upsert(a, Seq(3 -> "x", 140 -> "y"), "scattered")
    // a second remote holding the same objects (objects are named by content): a copy of the first warehouse
    val mirrorDir = Files.createTempDirectory("versioned-mirror")
    try {
      val db = java.sql.DriverManager.getConnection(a.metastoreUrl) // the copy's database file holds every commit
      try db.createStatement().execute("PRAGMA wal_checkpoint(TRUNCATE)") finally db.close()
      val walk = Files.walk(originDir.toPath)
      try walk.iterator().asScala.toVector.filterNot(_.toString.endsWith("-shm")).foreach { f =>
        val to = mirrorDir.resolve(originDir.toPath.relativize(f))
        if (Files.isDirectory(f)) Files.createDirectories(to) else Files.copy(f, to)
      } finally walk.close()
      val b = Side(mirrorDir.toString, s"jdbc:sqlite:$mirrorDir/metastore.db")
      val expected = contents(a, head(a))
      cloneOrigin(a)                 // "r": every object at the first remote
      val version = engine.table("r", engine.resolve("r", Revision.DefaultBranch), "t")
      val ids = (version.fragments ++ version.compacted.toSeq.flatten).flatMap(_.objects).distinct
      assert(engine.objects(ids).values.forall(m => m.locations == Seq(a.engine.config.objectUri(m.id))))
      // the mirror as a second remote of "r": a fetch brings no image (r holds its history already, from the first
      // remote), and records the mirror's places after the first's
      VersionedApi.addRemote(spark, null, "r", "mirror", b.warehouse, b.metastoreUrl, null)
      val fetched = VersionedApi.fetch(spark, null, "r", "mirror", null)
      assert(fetched.images == 0, fetched)
      val held = engine.objects(ids)
      assert(held.size == ids.size && held.values.forall(m => m.locations ==
        Seq(a.engine.config.objectUri(m.id), b.engine.config.objectUri(m.id))), held.values.map(_.locations))
      cloneOrigin(b, into = "r2")    // the same objects at the same places: recorded places are not added again
      cloneOrigin(a, into = "r3")
      assert(engine.objects(ids) == held)
      // the first remote loses its objects (its repository dropped and collected): reads go to the mirror
      val aObjects = new File(originDir, "objects").toPath
      val aside = originDir.toPath.resolveSibling(originDir.getName + "-objects-aside")
      Files.move(aObjects, aside)
      assert(contents(here, head(here, "r2"), "r2.t") == expected && contents(here, head(here), "r.t") == expected)
      val checked = VersionedApi.verify(spark, null, "r2", null).collect()
      assert(checked.forall(_.getAs[String]("status") == "ok"), checked.toSeq)
      assert(checked.filter(_.getAs[String]("kind") != "reflog").forall(_.getAs[String]("detail").contains("intact at 1 of 2 places")),
        checked.toSeq)
      // no place holds them: the first place's error
      val bObjects = mirrorDir.resolve("objects")
      val bAside = mirrorDir.resolveSibling(mirrorDir.getFileName.toString + "-objects-aside")
      Files.move(bObjects, bAside)
      expectError(ErrorClass.ObjectMissing, originDir.getAbsolutePath)(read("r2.t").collect())
      Files.move(bAside, bObjects)
      // a download copies them from the place that has them; they are then stored here, their places forgotten
      val full = cloneOrigin(a, download = "all", into = "r4")
      assert(full.downloaded >= ids.size, full)
      assert(engine.objects(ids).values.forall(_.locations.isEmpty))
      Files.move(aside, aObjects)
      assert(contents(here, head(here, "r4"), "r4.t") == expected)
    } finally deleteAll(mirrorDir)
  }

  test("import_table links a table of another repository or of a remote in one commit, copying no data") {
    val o = origin()
    create(o, (1 to 30).map(i => i -> s"v$i"))
    write(df(Seq(1 -> "far")), "r.u", (o.opts + ("primaryKey" -> "id")).toSeq: _*)
    write(df(Seq(7 -> "seven")), "local.items", "primaryKey" -> "id")
    val filesBefore = objectFiles(warehouse).toSet
    val c1 = VersionedApi.importTable(spark, null, "dest", "local", "items", null, "things", null, null, null, "tester")
    assert(engine.image("dest", c1).message.startsWith("import local.items"))
    assert(read("dest.things").collect().map(r => r.getInt(0) -> r.getString(1)).toSeq == Seq(7 -> "seven"))
    VersionedApi.addRemote(spark, null, "dest", "origin", o.warehouse, o.metastoreUrl, "r")
    val c2 = VersionedApi.importTable(spark, null, "dest", "r", "u", "main", null, null, "origin", "bring u", "tester")
    assert(engine.image("dest", c2).parents == Seq(c1))
    assert(read("dest.u").collect().map(r => r.getInt(0) -> r.getString(1)).toSeq == Seq(1 -> "far"))
    assert(objectFiles(warehouse).toSet == filesBefore, "no object was copied")
    expectError(ErrorClass.TableExists)(VersionedApi.importTable(spark, null, "dest", "r", "u", null, null, null, "origin", null, null))
  }

  test("the procedures: add_remote, remotes, clone, fetch, pull, push, import_table, remove_remote") {
    val o = origin()
    create(o, (1 to 20).map(i => i -> s"v$i"))
    def call(q: String): Seq[Row] = spark.sql(q).collect().toSeq
    val cloned = call(s"CALL vc.system.clone(repository => 'r', warehouse => '${o.warehouse}', metastore_url => '${o.metastoreUrl}', into => 'r2')")
    assert(cloned.map(r => (r.getString(0), r.getString(1), r.getLong(2))) == Seq(("r2", "origin", 1L)))
    assert(call("CALL vc.system.remotes(repository => 'r2')").map(r => (r.getString(0), r.getString(3))) == Seq("origin" -> "r"))
    upsert(o, Seq(1 -> "o1"), "origin 1")
    val fetched = call("CALL vc.system.fetch(repository => 'r2')")
    assert(fetched.head.getSeq[Row](5).map(u => (u.getString(0), u.getString(3))) == Seq("remotes/origin/main" -> SyncStatus.FastForward))
    assert(fetched.head.getSeq[Row](5).head.getString(2) == head(o))
    assert(call("CALL vc.system.pull('r2')").head.getString(0) == MergeOutcome.FastForward)
    write(df(Seq(2 -> "c2")), "r2.t", "upsert" -> "true")
    val pushed = call("CALL vc.system.push(repository => 'r2', branch => 'main')")
    assert(pushed.head.getString(3) == SyncStatus.FastForward && head(o) == head(here, "r2"))
    val imported = call("CALL vc.system.import_table(repository => 'r2', from_repository => 'r', table => 't', " +
      "as_table => 't_origin', remote => 'origin', ref => 'main~1')")
    assert(imported.head.getString(0) == head(here, "r2"))
    assert(read("r2.t_origin").count() == 20)
    call(s"CALL vc.system.add_remote('r2', 'backup', '${o.warehouse}', '${o.metastoreUrl}', 'r')")
    assert(call("CALL vc.system.remove_remote(repository => 'r2', name => 'backup')").map(_.getString(0)) == Seq("backup"))
    assert(call("CALL vc.system.remotes(repository => 'r2')").map(_.getString(0)) == Seq("origin"))
    expectError(ErrorClass.RemoteNotFound)(call("CALL vc.system.fetch(repository => 'r2', remote => 'backup')"))
  }

  test("bad input and unreachable remotes are typed errors that change nothing") {
    val o = origin()
    create(o, Seq(1 -> "a"))
    cloneOrigin(o)
    val refsBefore = engine.refs.all("r")
    expectError(ErrorClass.RemoteNotFound, "upstream")(VersionedApi.fetch(spark, null, "r", "upstream", null))
    expectError(ErrorClass.RepositoryExists, "already exists")(cloneOrigin(o))
    expectError(ErrorClass.InvalidOption, "download")(VersionedApi.fetch(spark, null, "r", null, "some"))
    expectError(ErrorClass.InvalidOption, "credentials")(VersionedApi.addRemote(spark, null, "r", "pg", o.warehouse,
      "jdbc:postgresql://localhost/db?user=u&password=secret", null))
    val nowhere = Files.createTempDirectory("versioned-nowhere").toFile
    try {
      expectError(ErrorClass.RemoteUnreachable)(VersionedApi.cloneRepository(spark, null, "r", nowhere.getAbsolutePath,
        s"jdbc:sqlite:${nowhere.getAbsolutePath}/metastore.db", "r9", null, null))
      assert(Option(nowhere.list()).forall(_.isEmpty) && !engine.repositoryExists("r9"))
      VersionedApi.addRemote(spark, null, "r", "gone", o.warehouse, s"jdbc:sqlite:${nowhere.getAbsolutePath}/missing.db", null)
      expectError(ErrorClass.RemoteUnreachable)(VersionedApi.fetch(spark, null, "r", "gone", null))
    } finally deleteAll(nowhere.toPath)
    expectError(ErrorClass.RefNotFound)(VersionedApi.push(spark, null, "r", null, "nope", false, true))
    withConf(VersionedOptions.confRemoteUser("origin") -> "someone", VersionedOptions.confRemotePassword("origin") -> "pw") {
      assert(VersionedApi.remotes(spark, null, "r").count() == 2, "per-remote credential settings are known keys")
    }
    withConf("spark.versioned.remote.origin.metastore.pasword" -> "x") {
      expectError(ErrorClass.InvalidOption, "Unknown setting")(VersionedApi.remotes(spark, null, "r"))
    }
    assert(engine.refs.all("r") == refsBefore)
  }

  test("a remote whose metastore is PostgreSQL: credentials come from the session, never from a metastore") {
    TestMetastores.postgresAdminUrl match {
      case None => cancel("VERSIONED_TEST_POSTGRES_URL is not set")
      case Some(admin) =>
        val (db, url) = TestMetastores.createDatabase(admin)
        try {
          val o = Side(originDir.getAbsolutePath, url) // the origin's own configuration, with its credentials
          create(o, (1 to 40).map(i => i -> s"v$i"))
          def param(k: String) = s"[?&]$k=([^&]*)".r.findFirstMatchIn(url).map(_.group(1)).get
          val bare = url.replaceAll("[?&](user|password)=[^&]*", "").replaceFirst("&", "?")
          expectError(ErrorClass.InvalidOption, "credentials")(cloneOrigin(o))
          withConf(VersionedOptions.confRemoteUser("origin") -> param("user"),
              VersionedOptions.confRemotePassword("origin") -> param("password")) {
            cloneOrigin(Side(o.warehouse, bare))
            upsert(o, Seq(1 -> "o1"), "origin 1")
            upsert(here, Seq(100 -> "c100"), "clone 1")
            assert(pull().status == MergeOutcome.Merged)
            assert(push().status == SyncStatus.FastForward && head(o) == head(here))
            assert(contents(o, head(o)) == contents(here, head(here)) && contents(here, head(here)).size == 41)
          }
          assert(VersionedApi.remotes(spark, null, "r").collect().map(_.getString(2)).toSeq == Seq(bare))
        } finally TestMetastores.dropDatabase(admin, db)
    }
  }
}
