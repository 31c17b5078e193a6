package versioned.core

import java.util.concurrent.{CyclicBarrier, TimeUnit}
import versioned.core.governance.BranchRule

/**
 * The reflog in the core (both metastores): every kind of ref movement appends one entry in its transaction, with
 * the engine's actor; the chain verifies; an entry changed, removed or reordered by hand is reported; a deleted
 * branch is restored from its entry; concurrent writers keep one linear chain.
 */
class ReflogSuite extends CoreFixture {
  private val alice = Actor("alice", "app-1", Actor.Python)
  private def main = engine.defaultBranch("r")
  private def entries = engine.reflog.entries("r")
  private def ops = entries.reverse.map(e => (e.ref, e.operation))
  private def sql(q: String, args: Any*): Int = engine.metastore.tx(Sql.update(_, q, args: _*))

  private def history(): Unit = {
    engine.actors = () => alice
    commitOn("r", "main", putFresh("t"))
    engine.refs.createBranch("r", "dev", Revision.DefaultBranch)
    commitOn("r", "dev", putFresh("t"))
    engine.commit("r", "main", head("r", "main"), Map.empty, "me", "merge dev", mergeParents = head("r", "dev").toSeq)
    engine.refs.resetBranch("r", "dev", spec("main"))
    engine.refs.createTag("r", "v1", spec("main"))
    engine.refs.createLock("r", "etl", "run1", spec("main"))
    engine.refs.renameBranch("r", "dev", "feature")
    engine.refs.setDefaultBranch("r", "feature")
    engine.protections.protect("r", BranchRule("release/*"))
    engine.protections.unprotect("r", "release/*")
    engine.refs.releaseLock("r", "etl", "run1")
    engine.refs.deleteTag("r", "v1")
    engine.refs.setDefaultBranch("r", "main")
    engine.refs.deleteBranch("r", "feature")
  }

  test("every ref movement appends one entry: operation, images, who, application and client; the chain verifies") {
    history()
    assert(ops == Seq("heads/main" -> "commit", "heads/dev" -> "create", "heads/dev" -> "commit", "heads/main" -> "merge",
      "heads/dev" -> "reset", "tags/v1" -> "create", "locks/etl:run1" -> "create", "heads/dev" -> "rename",
      "heads/feature" -> "rename", "HEAD" -> "default-branch", "rules/release/*" -> "protect",
      "rules/release/*" -> "unprotect", "locks/etl:run1" -> "delete", "tags/v1" -> "delete", "HEAD" -> "default-branch",
      "heads/feature" -> "delete"))
    assert(entries.map(_.seq) == (16L to 1L by -1L))
    assert(entries.forall(e => e.who == "alice" && e.appId == "app-1" && e.client == Actor.Python))
    val first = entries.last
    assert(first.oldImage.isEmpty && first.newImage.isDefined && first.prevHash == Reflog.Genesis)
    assert(entries.find(_.seq == 2).get.newImage == first.newImage, "dev was created at main's first commit")
    entries.sliding(2).foreach { case Seq(later, earlier) => assert(later.prevHash == earlier.hash) }
    val deleted = entries.head
    assert(deleted.newImage.isEmpty && deleted.oldImage.isDefined && deleted.id == "reflog@{16}")
    assert(engine.reflog.entries("r", Some("dev")).map(_.operation) == Seq("rename", "reset", "commit", "create"))
    assert(engine.reflog.entries("r", limit = 3).map(_.seq) == Seq(16L, 15L, 14L))
    assert(engine.reflog.verify("r").isEmpty)
  }

  test("a refused or failed move appends nothing") {
    commitOn("r", "main", putFresh("t"))
    val before = entries
    expectError[RefExistsException](ErrorClass.RefExists)(engine.refs.createBranch("r", main, Revision.DefaultBranch))
    expectError[RefNotFoundException](ErrorClass.RefNotFound)(engine.refs.deleteBranch("r", "nope"))
    engine.protections.protect("r", BranchRule(main))
    val afterRule = entries
    intercept[BranchProtectedException](engine.refs.deleteBranch("r", main))
    intercept[BranchProtectedException](commitOn("r", main, putFresh("t")))
    assert(entries == afterRule && afterRule.size == before.size + 1)
    assert(engine.reflog.verify("r").isEmpty)
  }

  test("a deleted branch is restored from its reflog entry; an unknown entry is a typed error and creates nothing") {
    val c = commitOn("r", "main", putFresh("t"))
    engine.refs.createBranch("r", "dev", Revision.DefaultBranch)
    val onDev = commitOn("r", "dev", putFresh("t"))
    engine.refs.deleteBranch("r", "dev")
    val gone = entries.head
    assert(gone.operation == Cause.Delete && gone.oldImage.contains(onDev.image.hash))
    val restored = engine.refs.createBranch("r", "dev", spec(gone.id))
    assert(restored.image == onDev.image.hash && entries.head.detail == s"from ${gone.id}")
    assert(engine.refs.createBranch("r", "first", spec(Reflog.idOf(1))).image == c.image.hash)
    val refs = engine.refs.all("r")
    val n = entries.size
    Seq("reflog@{999}", "reflog@{0}").foreach { id =>
      val e = expectError[RefNotFoundException](ErrorClass.RefNotFound)(engine.refs.createBranch("r", "x", spec(id)))
      assert(e.getMessage.contains("Nothing was created"))
    }
    engine.protections.protect("r", BranchRule("x*"))
    expectError[RefNotFoundException](ErrorClass.RefNotFound)(engine.refs.createBranch("r", "x", spec(entries.head.id)))
    assert(engine.refs.all("r") == refs && entries.size == n + 1)
  }

  test("verify reports an entry changed, removed or reordered by hand in the metastore") {
    history()
    sql("UPDATE vc_reflog SET who = 'mallory' WHERE repo = 'r' AND seq = 5")
    assert(engine.reflog.verify("r").map(p => p.seq -> p.status) == Seq(5L -> Reflog.Changed))
    sql("UPDATE vc_reflog SET who = 'alice' WHERE repo = 'r' AND seq = 5")
    assert(engine.reflog.verify("r").isEmpty)
    // changed and re-hashed: the next entry's link gives it away
    val e5 = engine.metastore.read(Reflog.entry(_, "r", 5)).get.copy(operation = "create")
    sql("UPDATE vc_reflog SET operation = ?, entry_hash = ? WHERE repo = 'r' AND seq = 5", e5.operation, Reflog.hashOf(e5))
    assert(engine.reflog.verify("r").map(p => p.seq -> p.status) == Seq(5L -> Reflog.Changed))
    sql("DELETE FROM vc_reflog WHERE repo = 'r' AND seq = 5")
    assert(engine.reflog.verify("r").map(p => p.seq -> p.status) == Seq(5L -> Reflog.Removed))
  }

  test("verify reports reordered entries and a removed last entry") {
    history()
    sql("UPDATE vc_reflog SET seq = -1 WHERE repo = 'r' AND seq = 3")
    sql("UPDATE vc_reflog SET seq = 3 WHERE repo = 'r' AND seq = 4")
    sql("UPDATE vc_reflog SET seq = 4 WHERE repo = 'r' AND seq = -1")
    val found = engine.reflog.verify("r")
    assert(found.map(p => p.seq -> p.status) == Seq(3L -> Reflog.Reordered, 4L -> Reflog.Reordered), found)
    sql("UPDATE vc_reflog SET seq = -1 WHERE repo = 'r' AND seq = 3")
    sql("UPDATE vc_reflog SET seq = 3 WHERE repo = 'r' AND seq = 4")
    sql("UPDATE vc_reflog SET seq = 4 WHERE repo = 'r' AND seq = -1")
    assert(engine.reflog.verify("r").isEmpty)
    sql("DELETE FROM vc_reflog WHERE repo = 'r' AND seq = 16")
    assert(engine.reflog.verify("r").map(p => p.seq -> p.status) == Seq(16L -> Reflog.Removed))
  }

  test("concurrent writers on different branches keep one linear chain, one entry per move") {
    commitOn("r", "main", putFresh("t"))
    val n = 6
    (0 until n).foreach(i => engine.refs.createBranch("r", s"b$i", Revision.DefaultBranch))
    val barrier = new CyclicBarrier(n)
    val errors = new java.util.concurrent.ConcurrentLinkedQueue[Throwable]()
    val threads = (0 until n).map { i =>
      val t = new Thread(() => try {
        barrier.await(30, TimeUnit.SECONDS)
        (1 to 4).foreach(_ => commitOn("r", s"b$i", putFresh(s"t$i")))
        if (i % 2 == 0) engine.refs.createTag("r", s"tag$i", spec(s"b$i"))
      } catch { case e: Throwable => errors.add(e) }, s"reflog-$i")
      t.start(); t
    }
    threads.foreach(_.join(120000))
    assert(errors.isEmpty, errors)
    val all = entries
    assert(all.size == 1 + n + n * 4 + n / 2)
    assert(all.map(_.seq) == (all.size.toLong to 1L by -1L))
    assert(engine.reflog.verify("r").isEmpty)
    (0 until n).foreach(i => assert(all.count(e => e.ref == s"heads/b$i" && e.operation == Cause.Commit) == 4))
  }

  test("dropping a repository drops its reflog") {
    history()
    engine.dropRepository("r")
    assert(engine.metastore.read(c => Reflog.entries(c, "r", newestFirst = true)).isEmpty)
    commitOn("r", "main", putFresh("t"))
    assert(entries.map(_.seq) == Seq(1L) && engine.reflog.verify("r").isEmpty)
  }

  test("a repository whose reflog has no head row yet (made before the reflog) gets one at its next move") {
    commitOn("r", "main", putFresh("t"))
    sql("DELETE FROM vc_reflog WHERE repo = ?", "r")
    sql("DELETE FROM vc_reflog_heads WHERE repo = ?", "r")
    commitOn("r", "main", putFresh("t"))
    engine.refs.createBranch("r", "dev", Revision.DefaultBranch)
    assert(entries.map(e => (e.seq, e.ref, e.operation)) == Seq((2L, "heads/dev", "create"), (1L, "heads/main", "commit")))
    assert(entries.last.prevHash == Reflog.Genesis && entries.head.prevHash == entries.last.hash)
    assert(engine.reflog.verify("r").isEmpty)
  }
}
