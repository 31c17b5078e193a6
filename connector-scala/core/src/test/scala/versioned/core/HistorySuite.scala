package versioned.core

class HistorySuite extends CoreFixture {
  private def history = engine.history

  test("log is newest first, with the tables each image changed") {
    val c1 = commitMsg("r", "main", "one", put("a", fakeId("1")), put("b", fakeId("2")))
    val c2 = commitMsg("r", "main", "two", put("b", fakeId("3")))
    val c3 = commitMsg("r", "main", "three", put("a", fakeId("1")), put("c", fakeId("4")))
    val c4 = commitMsg("r", "main", "four")
    val log = history.log("r", spec("main"))
    assert(log.map(_.image) == Seq(c4, c3, c2, c1).map(_.image))
    assert(log.map(_.image.message) == Seq("four", "three", "two", "one"))
    assert(log.map(_.tablesChanged) == Seq(Seq(), Seq("c"), Seq("b"), Seq("a", "b")))
    assert(log.map(_.tablesChanged) == Seq(c4, c3, c2, c1).map(_.changedTables))
    assert(log.map(_.image.createdMs) == log.map(_.image.createdMs).sorted.reverse)
    assert(history.log("r", Revision.DefaultBranch) == log)
  }

  test("log reads authors and messages of any text") {
    val authors = Seq("Zoë", "Zoë", "a", "日本 ✓", "a", "a", "b\"q")
    val messages = Seq("multi\nline", "\"quoted\" \\ back", "😀 emoji", "", "tab\there", "same", "same")
    val cs = authors.zip(messages).map { case (a, m) => engine.commit("r", "main", head("r"), Map.empty, a, m) }
    val log = history.log("r", spec("main"))
    assert(log.map(_.image) == cs.map(_.image).reverse)
    assert(log.map(e => (e.image.author, e.image.message)) == authors.zip(messages).reverse)
  }

  test("log limit") {
    val cs = commitMany("r", "main", 10).reverse.map(_.image.hash)
    assert(history.log("r", spec("main"), limit = 3).map(_.image.hash) == cs.take(3))
    assert(history.log("r", spec("main"), limit = 1).map(_.image.hash) == cs.take(1))
    assert(history.log("r", spec("main"), limit = 10).map(_.image.hash) == cs)
    assert(history.log("r", spec("main"), limit = 100).map(_.image.hash) == cs)
    assert(history.log("r", spec("main"), limit = 0).isEmpty)
    assert(history.log("r", spec("main"), limit = -1).isEmpty)
  }

  test("log starts at any revision and follows only its ancestors") {
    val cs = commitMany("r", "main", 4).map(_.image.hash)
    engine.refs.createBranch("r", "dev", spec("main~2"))
    val d = commitOn("r", "dev", putFresh("t")).image.hash
    engine.refs.createTag("r", "v", spec("main~1"))
    assert(logHashes("r", spec("main~1")) == cs.take(3).reverse)
    assert(logHashes("r", spec("v")) == cs.take(3).reverse)
    assert(logHashes("r", spec("dev")) == d +: cs.take(2).reverse)
    assert(logHashes("r", spec(cs.head)) == Seq(cs.head))
    assert(logHashes("r", Revision.AsOf(engine.resolve("r", spec("main~2")).createdMs, None)) == cs.take(2).reverse)
  }

  test("log of a merge lists every ancestor once, newest first") {
    val cs = commitMany("r", "main", 2).map(_.image)
    engine.refs.createBranch("r", "dev", spec("main~1"))
    val d = commitOn("r", "dev", putFresh("t")).image
    val parents = Seq(cs(1).hash, d.hash)
    val created = math.max(cs(1).createdMs, d.createdMs) + 1
    val merge = Image("r", Hashing.imageHash(parents, "a", "merge", created, Nil), parents, created, "a", "merge")
    engine.metastore.tx { c =>
      MetaDao.insertImage(c, merge, MetaDao.nextSeq(c, "r"), Nil)
      MetaDao.insertRef(c, "r", Ref("heads/m", RefKind.Branch, merge.hash, created), Cause("test", Actor.process))
    }
    val log = history.log("r", spec("m")).map(_.image)
    assert(log.head == merge && log.last == cs(0))
    assert(log.toSet == Set(merge, d, cs(1), cs(0)) && log.size == 4)
    assert(log.map(i => (i.createdMs, i.hash)) == log.map(i => (i.createdMs, i.hash)).sorted.reverse)
  }

  /** A chain of images above `parent`, inserted straight into the metastore with the given `seq` numbers. */
  private def chain(parent: Image, seqs: Seq[Long], msg: String): Seq[Image] = engine.metastore.tx { c =>
    var prev = parent
    seqs.zipWithIndex.map { case (seq, i) =>
      val created = prev.createdMs + 1
      val img = Image("r", Hashing.imageHash(Seq(prev.hash), "a", s"$msg $i", created, Nil), Seq(prev.hash), created,
        "a", s"$msg $i")
      MetaDao.insertImage(c, img, seq, if (i % 3 == 0) Seq("t") else Nil)
      prev = img
      img
    }
  }

  private def newestFirst(log: Seq[LogEntry]): Boolean =
    log.map(e => (e.image.createdMs, e.image.hash)) == log.map(e => (e.image.createdMs, e.image.hash)).sorted.reverse

  test("a limited log of a merge is a prefix of the whole log, however far apart its branches were committed") {
    val root = commitOn("r", "main", putFresh("t")).image
    val seq0 = engine.metastore.read(MetaDao.nextSeq(_, "r"))
    val a = chain(root, (0 until 100).map(seq0 + _), "a")
    val b = chain(root, (50 until 250).map(seq0 + _), "b") // overlapping seq numbers, as concurrent writers may give
    val parents = Seq(a.last.hash, b.last.hash)
    val created = b.last.createdMs + 1
    val merge = Image("r", Hashing.imageHash(parents, "a", "merge", created, Nil), parents, created, "a", "merge")
    engine.metastore.tx { c =>
      MetaDao.insertImage(c, merge, seq0 + 250, Seq("t"))
      MetaDao.insertRef(c, "r", Ref("heads/m", RefKind.Branch, merge.hash, created), Cause("test", Actor.process))
    }
    val full = history.log("r", spec("m"))
    assert(full.map(_.image).toSet == (Seq(root, merge) ++ a ++ b).toSet && full.size == 302)
    assert(full.head.image == merge && full.last.image == root && newestFirst(full))
    assert(full.find(_.image == a(3)).get.tablesChanged == Seq("t") && full.find(_.image == a(4)).get.tablesChanged.isEmpty)
    for (k <- 0 to 303) {
      assert(history.log("r", spec("m"), limit = k) == full.take(k), s"limit $k")
      assert(history.logOfImage("r", merge.hash, k) == full.take(k), s"limit $k")
      assert(history.logSizeOfImage("r", merge.hash, k) == math.min(k, 302), s"limit $k")
    }
    assert(history.logSizeOfImage("r", merge.hash, Int.MaxValue) == 302)
    assert(history.logSizeOfImage("r", b(10).hash, Int.MaxValue) == 12)
    assert(history.log("r", spec(a.last.hash)).map(_.image) == (root +: a).reverse)
  }

  test("log finds images whose seq does not follow the ancestry") {
    val root = commitOn("r", "main", putFresh("t")).image
    val seq0 = engine.metastore.read(MetaDao.nextSeq(_, "r"))
    val imgs = chain(root, (0 until 300).reverse.map(seq0 + _), "c") // each child numbered below its parent
    engine.metastore.tx(c => assert(MetaDao.casRef(c, "r", "heads/main", root.hash, imgs.last.hash, Cause("test", Actor.process))))
    val full = history.log("r", spec("main"))
    assert(full.map(_.image) == (root +: imgs).reverse && newestFirst(full))
    for (k <- Seq(1, 2, 5, 70, 299, 300, 301, 400)) {
      assert(history.log("r", spec("main"), limit = k) == full.take(k))
      assert(history.logSizeOfImage("r", imgs.last.hash, k) == math.min(k, 301))
    }
    assert(history.logSizeOfImage("r", imgs.last.hash, Int.MaxValue) == 301)
  }

  test("log errors") {
    commitMany("r", "main", 1)
    expectError[ImageNotFoundException](ErrorClass.ImageNotFound)(history.logOfImage("r", fakeId("x"), 10))
    expectError[ImageNotFoundException](ErrorClass.ImageNotFound)(history.logSizeOfImage("r", fakeId("x"), 10))
    assert(history.logOfImage("r", fakeId("x"), 0).isEmpty && history.logSizeOfImage("r", fakeId("x"), 0) == 0)
    expectError[RepositoryNotFoundException](ErrorClass.RepositoryNotFound)(history.log("nope", Revision.DefaultBranch))
    expectError[RefNotFoundException](ErrorClass.RefNotFound)(history.log("r", spec("nope")))
    expectError[ImageNotFoundException](ErrorClass.ImageNotFound)(history.log("r", spec("main~1")))
    expectError[RepositoryNotFoundException](ErrorClass.RepositoryNotFound)(history.show("nope", Revision.DefaultBranch))
  }

  // CommitResult.changedTables and show().changedTables include dropped tables; log entries do not.
  test("log lists a dropped table as changed") {
    commitOn("r", "main", put("a", fakeId("1")), put("b", fakeId("2")))
    val c = commitOn("r", "main", "a" -> TableUpdate.Drop)
    assert(c.changedTables == Seq("a"))
    assert(history.show("r", spec("main")).changedTables == Seq("a"))
    locally {
      assert(history.log("r", spec("main")).head.tablesChanged == Seq("a"))
    }
  }

  test("show lists tables, their objects and what changed") {
    val c1 = commitOn("r", "main", put("a", fakeId("1"), fakeId("2")), put("b", fakeId("3")))
    val first = history.show("r", spec("main"))
    assert(first.image == c1.image)
    assert(first.tables.map(t => (t.image, t.table.name, t.changed)) == Seq((c1.image.hash, "a", true), (c1.image.hash, "b", true)))
    assert(first.objects.keySet == Set("1", "2", "3").map(fakeId))
    assert(first.objects(fakeId("1")) == objectMeta(fakeId("1")))
    assert(first.droppedTables.isEmpty && first.changedTables == Seq("a", "b"))

    val c2 = commitOn("r", "main", put("b", fakeId("4")), put("c", fakeId("5")), "a" -> TableUpdate.Drop)
    val second = history.show("r", spec("main"))
    assert(second.image == c2.image)
    assert(second.tables.map(t => t.table.name -> t.changed) == Seq("b" -> true, "c" -> true))
    assert(second.objects.keySet == Set("4", "5").map(fakeId))
    assert(second.droppedTables == Seq("a"))
    assert(second.changedTables == Seq("a", "b", "c") && second.changedTables == c2.changedTables)
    assert(second.tables.forall(t => t.table.hash == Hashing.tableHash(t.table)))

    val c3 = commitOn("r", "main", put("c", fakeId("6")))
    val third = history.show("r", spec(c3.image.shortHash))
    assert(third.tables.map(t => t.table.name -> t.changed) == Seq("b" -> false, "c" -> true))
    assert(third.changedTables == Seq("c"))
    // older images are shown as they were
    assert(history.show("r", spec("main~2")) == first)
  }

  test("show includes the objects of a compacted representation; compaction keeps the image hash") {
    val c1 = commitOn("r", "main", put("t", fakeId("1"), fakeId("2")))
    val compactId = fakeId("compact")
    engine.setCompacted("r", c1.image.hash, "t", Seq(Fragment(None, Seq(compactId))), Seq(objectMeta(compactId, 20)))
    val t = engine.table("r", c1.image, "t")
    assert(t.compacted.contains(Seq(Fragment(None, Seq(compactId)))))
    assert(t.effectiveFragments == Seq(Fragment(None, Seq(compactId))))
    assert(t.hash == Hashing.tableHash(t))
    val shown = history.show("r", spec("main"))
    assert(shown.image.hash == c1.image.hash)
    assert(shown.objects.keySet == Set(fakeId("1"), fakeId("2"), compactId))
    assert(shown.objects(compactId).rowCount == 20)
    // an untouched table keeps its compacted form in the next image
    val c2 = commitOn("r", "main", put("u", fakeId("3")))
    assert(engine.table("r", c2.image, "t").compacted == t.compacted)
    engine.clearCompacted("r", c1.image.hash, "t")
    assert(engine.table("r", c1.image, "t").compacted.isEmpty)
    assert(engine.table("r", c1.image, "t").effectiveFragments == t.fragments)
  }

  test("fragments with key bounds survive the metastore") {
    val frags = Seq(Fragment(None, Seq(fakeId("1"))), Fragment(Some(Seq(100, "x")), Seq(fakeId("2"), fakeId("3"))))
    val tv = TableVersion("t", schemaJson, Seq("id", "name"), hiddenKey = true, frags)
    val c = engine.commit("r", "main", None, Map("t" -> TableUpdate.Put(tv, Seq("1", "2", "3").map(i => objectMeta(fakeId(i))))),
      "a", "m")
    val back = engine.table("r", c.image, "t")
    assert(back.primaryKey == Seq("id", "name") && back.hiddenKey && back.schemaJson == schemaJson)
    assert(back.fragments.map(_.objects) == frags.map(_.objects))
    assert(back.fragments.map(_.lower.map(_.map(_.toString))) == Seq(None, Some(Seq("100", "x"))))
    assert(back.hash == tv.withHash.hash, "the stored table hashes the same as the committed one")
    assert(Hashing.tableHash(back) == back.hash, "re-hashing what was read back gives the stored hash")
  }

  test("a log over 20,000 commits") {
    val n = 20000
    // Fabricate a long chain in one transaction (committing 20,000 times would only test SQLite fsync).
    val root = commitOn("r", "main", put("t", fakeId("0"))).image
    val tableRow = engine.metastore.read(MetaDao.tablesOf(_, "r", root.hash)).head
    var prev = root
    engine.metastore.tx { c =>
      var seq = MetaDao.nextSeq(c, "r")
      for (i <- 1 until n) {
        val created = prev.createdMs + 1
        val img = Image("r", Hashing.imageHash(Seq(prev.hash), "a", s"c$i", created, Nil), Seq(prev.hash), created, "a", s"c$i")
        MetaDao.insertImage(c, img, seq, if (i % 2 == 0) Seq("t") else Nil)
        MetaDao.insertTables(c, "r", img.hash, Seq(tableRow.copy(image = img.hash, changed = i % 2 == 0)))
        seq += 1
        prev = img
      }
      assert(MetaDao.casRef(c, "r", "heads/main", root.hash, prev.hash, Cause("test", Actor.process)))
    }
    val top = commitOn("r", "main", put("t", fakeId("top")))
    val log = history.log("r", spec("main"))
    assert(log.size == n + 1)
    assert(log.head.image == top.image && log.last.image == root)
    assert(log.map(_.image.hash).distinct.size == n + 1)
    assert(log.zip(log.tail).forall { case (a, b) => a.image.parents == Seq(b.image.hash) })
    assert(log.map(_.tablesChanged).count(_ == Seq("t")) == 1 + (n - 1) / 2 + 1)
    assert(history.log("r", spec("main"), limit = 5).map(_.image) == log.take(5).map(_.image))
    assert(history.logSizeOfImage("r", top.image.hash, Int.MaxValue) == n + 1)
    assert(engine.resolve("r", spec(s"main~$n")) == root)
    expectError[ImageNotFoundException](ErrorClass.ImageNotFound)(engine.resolve("r", spec(s"main~${n + 1}")))
    assert(engine.resolve("r", Revision.AsOf(root.createdMs, None)) == root)
  }
}
