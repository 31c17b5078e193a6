package versioned.core

import java.nio.file.{Files, StandardCopyOption}
import java.util.concurrent.{ConcurrentLinkedQueue, Executors, TimeUnit}
import java.util.concurrent.atomic.AtomicBoolean
import scala.jdk.CollectionConverters._

/**
 * Garbage collection cannot lose history: retention and force, per-repository scope, leases, objects
 * reused by content, and a randomized run of writers, repository drops and forced collections together.
 */
class GcSuite extends CoreFixture {
  private def file(id: String) = dir.resolve(ObjectMeta.relativePath(id))
  private def gcAll(force: Boolean = true, retentionMs: Long = 0L, repo: Option[String] = None, dryRun: Boolean = false) =
    engine.maintenance.collectGarbage(repo, retentionMs, force, dryRun)
  private def age(id: String, ms: Long): Unit = engine.metastore.tx(c =>
    Sql.update(c, "UPDATE vc_objects SET touched_ms = ? WHERE id = ?", System.currentTimeMillis() - ms, id))

  /** What an object writer does: stage, then move into place, keeping a copy in the lease when the object is stored already. */
  private def writeObject(lease: Lease, id: String): ObjectMeta = {
    val staged = dir.resolve(s"_staging/${lease.id}/tmp-${java.util.UUID.randomUUID()}")
    Files.createDirectories(staged.getParent)
    Files.write(staged, id.getBytes("UTF-8"))
    val dst = file(id)
    Files.createDirectories(dst.getParent)
    def keep(): Unit = {
      val copy = dir.resolve(s"_staging/${lease.id}/${WarehouseStore.Reused}/$id.parquet")
      Files.createDirectories(copy.getParent)
      Files.move(staged, copy, StandardCopyOption.REPLACE_EXISTING)
    }
    if (Files.exists(dst)) keep()
    else try Files.move(staged, dst) catch { case _: java.nio.file.FileAlreadyExistsException => keep() }
    ObjectMeta(id, ObjectKind.Snap, Seq.empty, 1, 1, "parquet", Map.empty, Map.empty, Map.empty)
  }

  test("a retention below an hour needs force; a negative one is refused") {
    expectError[InvalidInputException](ErrorClass.InvalidOption)(gcAll(force = false, retentionMs = 0L))
    expectError[InvalidInputException](ErrorClass.InvalidOption)(gcAll(retentionMs = -1L))
  }

  test("unreferenced objects go only after the retention period; referenced ones never") {
    commitOn("r", "main", put("t", fakeId("a")))
    commitOn("r", "main", put("t", fakeId("b")))      // a stays referenced by history
    engine.dropRepository("r")                          // now neither is referenced
    assert(gcAll(force = false, retentionMs = Maintenance.MinRetentionMs).isEmpty, "used a moment ago: kept")
    age(fakeId("a"), 2 * Maintenance.MinRetentionMs)
    val dry = gcAll(force = false, retentionMs = Maintenance.MinRetentionMs, dryRun = true)
    assert(dry.map(_.name) == Seq(fakeId("a")) && Files.exists(file(fakeId("a"))), "a dry run deletes nothing")
    assert(gcAll(force = false, retentionMs = Maintenance.MinRetentionMs).map(_.name) == Seq(fakeId("a")))
    assert(!Files.exists(file(fakeId("a"))) && Files.exists(file(fakeId("b"))))
    commitOn("s", "main", put("t", fakeId("c")))
    gcAll()
    assert(Files.exists(file(fakeId("c"))) && engine.objects(Seq(fakeId("c"))).nonEmpty)
  }

  test("per-repository collection leaves other repositories' objects and files alone") {
    commitOn("a", "main", put("t", fakeId("a1")))
    commitOn("b", "main", put("t", fakeId("b1")))
    commitOn("a", "main", put("t", fakeId("a2")))
    commitOn("b", "main", put("t", fakeId("b2")))
    engine.dropRepository("b")
    commitOn("a", "main", put("u", fakeId("x")))
    val orphan = file(fakeId("orphan"))
    Files.createDirectories(orphan.getParent); Files.write(orphan, Array[Byte](1))
    assert(gcAll(repo = Some("a")).isEmpty, "everything of a is referenced; b's objects and orphan files are not a's")
    assert(Files.exists(file(fakeId("b1"))) && Files.exists(orphan))
    val all = gcAll().map(c => c.kind -> c.name).toSet
    assert(all == Set(Collected.Object -> fakeId("b1"), Collected.Object -> fakeId("b2"), Collected.Orphan -> fakeId("orphan")))
  }

  test("files of a live lease are kept even by a forced collection; once it ends they go") {
    val lease = engine.leases.open("r", "test")
    val orphan = file(fakeId("in-flight"))
    Files.createDirectories(orphan.getParent); Files.write(orphan, Array[Byte](1))
    val staged = dir.resolve(s"_staging/${lease.id}/part-0.parquet")
    Files.createDirectories(staged.getParent); Files.write(staged, Array[Byte](1))
    assert(gcAll().isEmpty && Files.exists(orphan) && Files.exists(staged))
    engine.leases.close(lease)
    assert(!Files.exists(staged), "closing a lease removes its staging area")
    assert(gcAll().map(_.name) == Seq(fakeId("in-flight")))
  }

  test("open leases other than compaction and transaction ones are writes in progress") {
    val before = Leases.writesInProgress
    assert(!before, "no write in progress at the start")
    val background = Leases.Background.toSeq.map(engine.leases.open("r", _))
    assert(!Leases.writesInProgress, "compaction and transaction leases are not writes in progress")
    val write = engine.leases.open("r", "write")
    val commit = engine.leases.open("r", "commit")
    assert(Leases.writesInProgress)
    engine.leases.close(write)
    assert(Leases.writesInProgress, "one write still open")
    engine.leases.close(commit)
    assert(!Leases.writesInProgress, "every write lease closed")
    background.foreach(engine.leases.close)
    engine.leases.withLease("r", "merge")(_ => assert(Leases.writesInProgress))
    assert(!Leases.writesInProgress)
  }

  test("a commit re-marks an object it reuses, and puts back a file collected after the writer found it") {
    commitOn("old", "main", put("t", fakeId("same")))
    engine.dropRepository("old")
    age(fakeId("same"), 10 * Maintenance.MinRetentionMs)
    val lease = engine.leases.open("r", "test")
    val meta = writeObject(lease, fakeId("same")) // found stored: a copy stays in the lease
    assert(gcAll().map(_.name) == Seq(fakeId("same")) && !Files.exists(file(fakeId("same"))))
    val c = engine.commit("r", "main", None, Map("t" -> TableUpdate.Put(tableVersion("t", Seq(meta.id)), Seq(meta))),
      "a", "m", Some(lease))
    engine.leases.close(lease)
    assert(Files.exists(file(fakeId("same"))), "the commit put the file back from the lease's copy")
    assert(gcAll().isEmpty && engine.table("r", c.image, "t").fragments.head.objects == Seq(meta.id))
  }

  test("a commit whose new object's file is gone commits nothing") {
    val m = objectMeta(fakeId("gone"))
    Files.delete(file(fakeId("gone")))
    expectError[ObjectMissingException](ErrorClass.ObjectMissing)(
      engine.commit("r", "main", None, Map("t" -> TableUpdate.Put(tableVersion("t", Seq(m.id)), Seq(m))), "a", "m"))
    assert(!engine.repositoryExists("r") && engine.objects(Seq(m.id)).isEmpty)
  }

  test("a commit that builds on objects collected meanwhile commits nothing") {
    val t = tableVersion("t", Seq(fakeId("base")))
    expectError[RefConflictException](ErrorClass.RefConflict)(
      engine.commit("r", "main", None, Map("t" -> TableUpdate.Put(t, Nil)), "a", "m"))
    assert(!engine.repositoryExists("r"))
  }

  test("randomized: writers reusing content, repository drops and forced collections lose no acknowledged commit") {
    val pool = (0 until 12).map(i => fakeId(s"pool-$i"))
    val acknowledged = new ConcurrentLinkedQueue[(String, String)]() // (repo, image)
    val failures = new ConcurrentLinkedQueue[Throwable]()
    val stop = new AtomicBoolean(false)
    val rnd = new scala.util.Random(7)
    val seeds = (0 until 6).map(_ => rnd.nextLong())
    val exec = Executors.newFixedThreadPool(6)
    def worker(seed: Long)(body: scala.util.Random => Unit): Unit = exec.submit(new Runnable {
      override def run(): Unit = { val r = new scala.util.Random(seed); while (!stop.get()) try body(r) catch {
        case _: RefConflictException | _: ObjectMissingException => () // typed, nothing committed
        case t: Throwable => failures.add(t)
      } }
    })
    (0 until 3).foreach { w =>
      worker(seeds(w)) { r =>
        engine.leases.withLease(s"w$w", "test") { lease =>
          val ids = r.shuffle(pool).take(1 + r.nextInt(3))
          val metas = ids.map(writeObject(lease, _))
          val res = engine.commit(s"w$w", "main", head(s"w$w"), Map("t" -> TableUpdate.Put(tableVersion("t", ids), metas)),
            "a", "m", Some(lease))
          acknowledged.add((s"w$w", res.image.hash))
        }
      }
    }
    worker(seeds(3)) { r => // a repository that takes pool content and is dropped again
      val name = s"tmp${r.nextInt(1000000)}"
      engine.leases.withLease(name, "test") { lease =>
        val ids = r.shuffle(pool).take(3)
        engine.commit(name, "main", None, Map("t" -> TableUpdate.Put(tableVersion("t", ids), ids.map(writeObject(lease, _)))),
          "a", "m", Some(lease))
      }
      engine.dropRepository(name)
    }
    (4 until 6).foreach(i => worker(seeds(i))(_ => gcAll()))
    Thread.sleep(6000)
    stop.set(true)
    exec.shutdown()
    assert(exec.awaitTermination(60, TimeUnit.SECONDS))
    assert(failures.isEmpty, failures.asScala.map(_.toString).mkString("\n"))
    assert(acknowledged.size > 10, s"too few commits to mean anything: ${acknowledged.size}")
    acknowledged.asScala.foreach { case (repo, image) =>
      val ids = engine.tables(repo, image).flatMap(_.effectiveFragments.flatMap(_.objects))
      ids.foreach { id =>
        assert(engine.objects(Seq(id)).contains(id), s"image ${image.take(12)} of $repo lost the row of $id")
        assert(Files.exists(file(id)), s"image ${image.take(12)} of $repo lost the file of $id")
      }
    }
  }

  test("a deleted or empty metastore is refused, not recreated, and garbage collection refuses a foreign one") {
    commitOn("r", "main", put("t", fakeId("a")))
    val cfg = engine.config
    engine.close()
    val sqlite = Metastore.sqliteFile(cfg.metastoreUrl)
    sqlite.foreach { f =>
      Files.delete(f.toPath)
      Seq("-wal", "-shm").foreach(s => Files.deleteIfExists(java.nio.file.Paths.get(f.getPath + s)))
      expectError[VersionedException](ErrorClass.WarehouseMismatch)(new Engine(cfg))
      assert(!f.exists(), "the missing metastore was not created")
    }
    // an empty metastore (another database) for a warehouse with objects
    val empty = Files.createTempDirectory("versioned-empty-ms")
    try {
      expectError[VersionedException](ErrorClass.WarehouseMismatch)(
        new Engine(cfg.copy(metastoreUrl = s"jdbc:sqlite:${empty.resolve("other.db")}")))
      // a metastore of another warehouse
      val other = Files.createTempDirectory("versioned-other-wh")
      val e2 = new Engine(WarehouseConfig.embedded(other.toString))
      e2.close()
      expectError[VersionedException](ErrorClass.WarehouseMismatch)(
        new Engine(cfg.copy(metastoreUrl = s"jdbc:sqlite:${other.resolve("metastore.db")}")))
      deleteRecursively(other)
    } finally deleteRecursively(empty)
    assert(Files.exists(file(fakeId("a"))), "nothing was deleted")
  }

  test("garbage collection refuses when the object store's identity changed under it") {
    commitOn("r", "main", put("t", fakeId("a")))
    Files.write(dir.resolve(WarehouseStore.MarkerPath), "someone-else".getBytes("UTF-8"))
    Files.deleteIfExists(dir.resolve("_versioned/.warehouse-id.crc"))
    expectError[VersionedException](ErrorClass.WarehouseMismatch)(gcAll())
    assert(Files.exists(file(fakeId("a"))))
  }
}

/** A stalled database is a clear METASTORE_ERROR within the configured timeout, not a hang. */
class MetastoreTimeoutSuite extends org.scalatest.funsuite.AnyFunSuite {
  test("a PostgreSQL server that accepts but never answers gives METASTORE_ERROR") {
    val server = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress)
    val accepted = new java.util.concurrent.ConcurrentLinkedQueue[java.net.Socket]()
    val t = new Thread(() => try while (true) accepted.add(server.accept()) catch { case _: Exception => () })
    t.setDaemon(true); t.start()
    val dir = java.nio.file.Files.createTempDirectory("versioned-stall")
    try {
      val url = s"jdbc:postgresql://127.0.0.1:${server.getLocalPort}/db?loginTimeout=2&connectTimeout=2&socketTimeout=2"
      val started = System.nanoTime()
      val e = intercept[VersionedException](new Engine(WarehouseConfig(dir.toString, url)))
      val seconds = (System.nanoTime() - started) / 1e9
      assert(e.errorClass == ErrorClass.MetastoreError, e.getMessage)
      assert(seconds < 60, s"took $seconds s")
      assert(!e.getMessage.contains("password"), "credentials are not shown")
    } finally {
      server.close(); accepted.forEach(_.close())
    }
  }
}
