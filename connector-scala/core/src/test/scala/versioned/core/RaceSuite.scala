package versioned.core

import java.util.concurrent.{CyclicBarrier, TimeUnit}

class RaceSuite extends CoreFixture {

  /** Runs `f(i)` on `n` real threads released together; returns each outcome, in thread order. */
  private def race[T](n: Int)(f: Int => T): Seq[Either[Throwable, T]] = {
    val barrier = new CyclicBarrier(n)
    val out = new Array[Either[Throwable, T]](n)
    val threads = (0 until n).map { i =>
      val t = new Thread(() => {
        out(i) = try {
          barrier.await(30, TimeUnit.SECONDS)
          Right(f(i))
        } catch { case e: Throwable => Left(e) }
      }, s"race-$i")
      t.start()
      t
    }
    threads.foreach(_.join(120000))
    assert(threads.forall(!_.isAlive), "a racing thread hung")
    out.toSeq
  }

  /** Exactly one winner; every loser failed with `T` and `errorClass`. Returns the winner's value. */
  private def oneWinner[T, E <: VersionedException](results: Seq[Either[Throwable, T]], errorClass: String)(
      implicit ct: scala.reflect.ClassTag[E]): T = {
    val wins = results.collect { case Right(v) => v }
    val losses = results.collect { case Left(e) => e }
    assert(wins.size == 1, s"expected exactly one winner, got ${wins.size}; failures: ${losses.map(_.toString)}")
    losses.foreach {
      case e: VersionedException if ct.runtimeClass.isInstance(e) => assert(e.errorClass == errorClass, e.getMessage)
      case e => fail(s"a loser failed with an unexpected exception: $e", e)
    }
    wins.head
  }

  private val threads = 8

  test("threads committing on the same expected head: exactly one wins") {
    val base = commitOn("r", "main", put("t", fakeId("base"))).image.hash
    for (round <- 1 to 3) {
      val expected = head("r").get
      val ids = (0 until threads).map(i => fakeId(s"round-$round-thread-$i"))
      val results = race(threads)(i =>
        engine.commit("r", "main", Some(expected), Map(put("t", ids(i))), s"thread-$i", s"round $round"))
      val winner = oneWinner[CommitResult, RefConflictException](results, ErrorClass.RefConflict)
      assert(winner.image.parents == Seq(expected))
      assert(head("r").contains(winner.image.hash))
      val log = engine.history.log("r", spec("main"))
      assert(log.size == round + 1)
      assert(log.head.image == winner.image)
      // the losers left nothing behind: no image, no table rows, no objects
      assert(engine.metastore.read(MetaDao.allImages(_, "r")).size == round + 1)
      val winnerIdx = results.indexWhere(_.isRight)
      val loserIds = ids.indices.filter(_ != winnerIdx).map(ids)
      assert(engine.objects(loserIds).isEmpty)
      assert(engine.objects(Seq(ids(winnerIdx))).size == 1)
    }
    assert(logHashes("r").last == base)
  }

  test("threads creating the same repository: exactly one wins") {
    val results = race(threads)(i => engine.commit("r", "main", None, Map(put("t", fakeId(s"$i"))), s"t$i", "first"))
    val winner = oneWinner[CommitResult, RefConflictException](results, ErrorClass.RefConflict)
    assert(engine.repositories() == Seq("r"))
    assert(logHashes("r") == Seq(winner.image.hash))
    assert(engine.refs.all("r").map(_.fullName) == Seq("heads/main"))
  }

  test("separate engines on one warehouse (as separate sessions) race on a commit") {
    val base = commitOn("r", "main", put("t", fakeId("base"))).image.hash
    val engines = (0 until threads).map(_ => new Engine(engine.config))
    val results = race(threads)(i =>
      engines(i).commit("r", "main", Some(base), Map(put("t", fakeId(s"e$i"))), s"e$i", "race"))
    val winner = oneWinner[CommitResult, RefConflictException](results, ErrorClass.RefConflict)
    assert(logHashes("r") == Seq(winner.image.hash, base))
    assert(engines.forall(_.branchHeadOption("r", "main").map(_.hash).contains(winner.image.hash)))
  }

  test("threads creating the same branch: exactly one succeeds") {
    commitMany("r", "main", 3)
    for (round <- 1 to 3) {
      val name = s"b$round"
      val results = race(threads)(i => engine.refs.createBranch("r", name, spec(s"main~${i % 3}")))
      val winner = oneWinner[Ref, RefExistsException](results, ErrorClass.RefExists)
      val created = engine.refs.branches("r").filter(_.shortName == name)
      assert(created == Seq(winner))
    }
    assert(engine.refs.branches("r").map(_.shortName) == Seq("b1", "b2", "b3", "main"))
  }

  test("threads taking the same lock: exactly one gets it") {
    commitMany("r", "main", 2)
    val results = race(threads)(i => engine.refs.createLock("r", "ingest", "job", spec(if (i % 2 == 0) "main" else "main~1")))
    val winner = oneWinner[Ref, RefExistsException](results, ErrorClass.RefExists)
    assert(engine.refs.locks("r", Some("ingest")) == Seq(winner))
  }

  test("threads creating the same tag: exactly one succeeds") {
    commitMany("r", "main", 1)
    val results = race(threads)(_ => engine.refs.createTag("r", "v1", Revision.DefaultBranch))
    val winner = oneWinner[Ref, RefExistsException](results, ErrorClass.RefExists)
    assert(engine.refs.tags("r") == Seq(winner))
  }

  test("threads resetting a branch with the same expectation: exactly one wins") {
    val cs = commitMany("r", "main", 3)
    engine.refs.createBranch("r", "b", spec("main"))
    val at = cs.last.image.hash
    val results = race(threads)(i => engine.refs.resetBranch("r", "b", spec(s"main~${1 + i % 2}"), expected = Some(at)))
    val winner = oneWinner[Ref, RefConflictException](results, ErrorClass.RefConflict)
    assert(head("r", "b").contains(winner.image))
  }

  // MetastoreSchema.migrate sets journal_mode=WAL inside the init transaction, where SQLite refuses it (the
  // error is swallowed), so the embedded metastore stays in rollback-journal mode and readers block writers.
  test("the embedded metastore runs in WAL mode") {
    assume(engine.metastore.isSqlite, "WAL applies to the embedded SQLite metastore only")
    val mode = engine.metastore.read { c =>
      val st = c.createStatement()
      try { val rs = st.executeQuery("PRAGMA journal_mode"); rs.next(); rs.getString(1) } finally st.close()
    }
    locally {
      assert(mode.equalsIgnoreCase("wal"), s"journal_mode is $mode")
    }
  }

  // Leases commit without waiting for the disk on the embedded metastore (Metastore.processTx): the pooled
  // connection must go back with the durable setting, and the lease must be seen at once by another engine's gc.
  test("a lease is seen by other engines at once, and commits after it stay durable") {
    val sqlite = engine.metastore.isSqlite
    def synchronous(): String = if (!sqlite) "-" else engine.metastore.read(Metastore.synchronous)
    if (sqlite) assert(synchronous() == "2", "the embedded metastore's commits wait for the disk (FULL)")
    val evicted = engine.metastore.evicted.get()
    val leases = (1 to 8).map(i => engine.leases.open("r", s"test-$i")) // more leases than the pool's connections
    val other = new Engine(engine.config)
    try {
      val seen = other.metastore.read(c => Sql.query(c, "SELECT id FROM vc_leases")(_.getString(1))).toSet
      assert(leases.map(_.id).toSet.subsetOf(seen))
      (1 to 8).foreach(_ => assert(synchronous() == (if (sqlite) "2" else "-"), "a pooled connection kept the lease's setting"))
    } finally { leases.foreach(engine.leases.close); other.close() }
    assert(engine.metastore.evicted.get() == evicted, "a lease's connection went back to the pool, not closed as broken")
    val left = engine.metastore.read(c => Sql.query(c, "SELECT id FROM vc_leases")(_.getString(1))).toSet
    assert(leases.forall(l => !left.contains(l.id)), "closed leases are gone")
  }

  test("committers that retry on conflict build one linear history with every commit") {
    commitOn("r", "main", put("t", fakeId("base")))
    val perThread = 8
    val n = 4
    val results = race(n) { i =>
      var conflicts = 0
      (1 to perThread).foreach { k =>
        var done = false
        while (!done) {
          try {
            engine.commit("r", "main", head("r"), Map(put(s"t$i", fakeId(s"$i-$k"))), s"w$i", s"$i-$k")
            done = true
          } catch { case _: RefConflictException => conflicts += 1 }
        }
      }
      conflicts
    }
    assert(results.forall(_.isRight), results.collect { case Left(e) => e.toString })
    val log = engine.history.log("r", spec("main"))
    assert(log.size == n * perThread + 1)
    assert(log.map(_.image.hash).distinct.size == log.size)
    assert(log.zip(log.tail).forall { case (child, parent) => child.image.parents == Seq(parent.image.hash) },
      "the history must be one chain")
    for (i <- 0 until n)
      assert(log.map(_.image.message).filter(_.startsWith(s"$i-")).reverse == (1 to perThread).map(k => s"$i-$k"),
        "every writer's commits are all there, in its order")
    val last = engine.tables("r", head("r").get)
    assert(last.map(_.name) == ("t" +: (0 until n).map(i => s"t$i")))
  }
}
