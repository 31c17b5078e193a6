package versioned.core

class CommitSuite extends CoreFixture {

  test("the first commit creates the repository and the branch") {
    assert(engine.repositories().isEmpty)
    assert(!engine.repositoryExists("r"))
    val res = engine.commit("r", "dev", None, Map(put("t", fakeId("a"))), "alice", "first")
    assert(engine.repositories() == Seq("r"))
    assert(engine.repositoryExists("r"))
    assert(engine.defaultBranch("r") == "dev", "the first branch becomes the default branch")
    assert(res.branch == "dev")
    assert(res.changedTables == Seq("t"))
    val img = res.image
    assert(img.repo == "r" && img.parents.isEmpty && img.author == "alice" && img.message == "first")
    assert(Hashing.looksLikeFullHash(img.hash))
    assert(img.shortHash == img.hash.take(12))
    assert(engine.refs.all("r") == Seq(Ref("heads/dev", RefKind.Branch, img.hash, img.createdMs)))
    assert(engine.resolve("r", Revision.DefaultBranch) == img)
    val t = engine.table("r", img, "t")
    assert(t.fragments == Seq(Fragment(None, Seq(fakeId("a")))))
    assert(t.hash == Hashing.tableHash(t))
    assert(engine.objects(Seq(fakeId("a"))).keySet == Set(fakeId("a")))
  }

  test("a commit records the tables and their objects, and keeps the tables it does not touch") {
    val c1 = commitOn("r", "main", put("a", fakeId("1")), put("b", fakeId("2"), fakeId("3")))
    assert(c1.changedTables == Seq("a", "b"))
    val c2 = commitOn("r", "main", put("b", fakeId("4")))
    assert(c2.image.parents == Seq(c1.image.hash))
    assert(c2.changedTables == Seq("b"))
    assert(engine.tables("r", c2.image.hash).map(_.name) == Seq("a", "b"))
    assert(engine.tableOption("r", c2.image.hash, "a") == engine.tableOption("r", c1.image.hash, "a"))
    assert(engine.table("r", c2.image, "b").fragments.flatMap(_.objects) == Seq(fakeId("4")))
    assert(engine.objects(Seq("1", "2", "3", "4").map(fakeId)).size == 4)
    val e = expectError[TableNotFoundException](ErrorClass.TableNotFound)(engine.table("r", c2.image, "zz"))
    assert(e.getMessage.contains("'zz'"))
  }

  test("a Put is stored under its key, whatever the TableVersion's own name") {
    val c = engine.commit("r", "main", None, Map("t" -> TableUpdate.Put(tableVersion("other", Seq(fakeId("x"))), Seq(objectMeta(fakeId("x"))))),
      "a", "m")
    assert(engine.tables("r", c.image.hash).map(_.name) == Seq("t"))
  }

  test("the image hash covers data, message, author, parents, time and, when recorded, who committed it") {
    val tables = Seq("t" -> Hashing.tableHash(tableVersion("t", Seq(fakeId("1")))))
    val base = Hashing.imageHash(Seq("p"), "a", "m", 1000L, tables)
    assert(base == Hashing.imageHash(Seq("p"), "a", "m", 1000L, tables), "deterministic")
    assert(base == Hashing.imageHash(Seq("p"), "a", "m", 1000L, tables.reverse))
    val others = Seq(
      Hashing.imageHash(Seq("q"), "a", "m", 1000L, tables),
      Hashing.imageHash(Seq("p", "q"), "a", "m", 1000L, tables),
      Hashing.imageHash(Nil, "a", "m", 1000L, tables),
      Hashing.imageHash(Seq("p"), "b", "m", 1000L, tables),
      Hashing.imageHash(Seq("p"), "a", "m2", 1000L, tables),
      Hashing.imageHash(Seq("p"), "a", "m", 1001L, tables),
      Hashing.imageHash(Seq("p"), "a", "m", 1000L, Seq("t" -> Hashing.tableHash(tableVersion("t", Seq(fakeId("2")))))),
      Hashing.imageHash(Seq("p"), "a", "m", 1000L, Seq("u" -> tables.head._2)),
      Hashing.imageHash(Seq("p"), "a", "m", 1000L, Nil),
      Hashing.imageHash(Seq("p"), "a", "m", 1000L, tables, Some(Actor("u", "app", Actor.Python))),
      Hashing.imageHash(Seq("p"), "a", "m", 1000L, tables, Some(Actor("u", "app", Actor.Sql))),
      Hashing.imageHash(Seq("p"), "a", "m", 1000L, tables, Some(Actor("v", "app", Actor.Python))))
    assert((base +: others).distinct.size == others.size + 1)
    // without an actor (an image committed before commits carried one) the hash is what it always was
    assert(base == Hashing.sha256Hex(Seq("image", "p", "a", "m", "1000") ++ tables.map { case (n, h) => s"$n=$h" }: _*))
    // length-prefixed parts: moving text between fields changes the hash
    assert(Hashing.sha256Hex("ab", "c") != Hashing.sha256Hex("a", "bc"))
  }

  test("table hashes cover schema, key and objects but not the compacted representation") {
    val t = tableVersion("t", Seq(fakeId("1"), fakeId("2")))
    val h = Hashing.tableHash(t)
    assert(Hashing.tableHash(t.copy(compacted = Some(Seq(Fragment(None, Seq(fakeId("3"))))))) == h)
    assert(Hashing.tableHash(t.copy(hash = "whatever")) == h)
    assert(Hashing.tableHash(t.copy(schemaJson = "{}")) != h)
    assert(Hashing.tableHash(t.copy(primaryKey = Seq("k"))) != h)
    assert(Hashing.tableHash(t.copy(hiddenKey = true)) != h)
    assert(Hashing.tableHash(t.copy(fragments = Seq(Fragment(None, Seq(fakeId("2"), fakeId("1")))))) != h)
    assert(Hashing.tableHash(t.copy(fragments = Seq(Fragment(None, Seq(fakeId("1"))), Fragment(Some(Seq(5)), Seq(fakeId("2")))))) != h)
    assert(t.withHash.hash == h)
    assert(t.sameContentAs(t.copy(compacted = Some(Nil))))
  }

  test("different messages or data on the same parent give different images") {
    val c0 = commitOn("r", "main", put("t", fakeId("0")))
    engine.refs.createBranch("r", "b1", spec("main"))
    engine.refs.createBranch("r", "b2", spec("main"))
    engine.refs.createBranch("r", "b3", spec("main"))
    val a = commitMsg("r", "b1", "m", put("t", fakeId("1")))
    val b = commitMsg("r", "b2", "other message", put("t", fakeId("1")))
    val c = commitMsg("r", "b3", "m", put("t", fakeId("2")))
    assert(Seq(a, b, c).forall(_.image.parents == Seq(c0.image.hash)))
    assert(Seq(c0, a, b, c).map(_.image.hash).distinct.size == 4)
  }

  test("re-putting an unchanged table keeps its hash and marks it unchanged") {
    val c1 = commitOn("r", "main", put("t", fakeId("1")), put("u", fakeId("2")))
    val c2 = commitOn("r", "main", put("t", fakeId("1")), put("u", fakeId("3")))
    assert(c2.changedTables == Seq("u"))
    assert(engine.table("r", c2.image, "t").hash == engine.table("r", c1.image, "t").hash)
    val details = engine.history.show("r", spec(c2.image.hash))
    assert(details.tables.map(t => t.table.name -> t.changed) == Seq("t" -> false, "u" -> true))
    // an image with no change at all is still a new image
    val c3 = commitOn("r", "main", put("t", fakeId("1")))
    assert(c3.changedTables.isEmpty)
    assert(c3.image.hash != c2.image.hash)
    assert(engine.history.show("r", Revision.DefaultBranch).changedTables.isEmpty)
  }

  test("an empty commit carries every table over unchanged") {
    val c1 = commitOn("r", "main", put("t", fakeId("1")))
    val c2 = commitOn("r", "main")
    assert(c2.changedTables.isEmpty)
    assert(engine.tables("r", c2.image.hash) == engine.tables("r", c1.image.hash))
  }

  test("dropping a table") {
    commitOn("r", "main", put("t", fakeId("1")), put("u", fakeId("2")))
    val c2 = commitOn("r", "main", "t" -> TableUpdate.Drop)
    assert(c2.changedTables == Seq("t"))
    assert(engine.tables("r", c2.image.hash).map(_.name) == Seq("u"))
    assert(engine.tableOption("r", c2.image.hash, "t").isEmpty)
    val d = engine.history.show("r", Revision.DefaultBranch)
    assert(d.droppedTables == Seq("t") && d.changedTables == Seq("t"))
    // the table can come back
    val c3 = commitOn("r", "main", put("t", fakeId("1")))
    assert(c3.changedTables == Seq("t"))
  }

  test("dropping a table that does not exist fails and commits nothing") {
    commitOn("r", "main", put("u", fakeId("2")))
    val before = head("r")
    val e = expectError[TableNotFoundException](ErrorClass.TableNotFound)(commitOn("r", "main", "t" -> TableUpdate.Drop))
    assert(e.getMessage.contains("'t'"))
    assert(head("r") == before && logHashes("r").size == 1)
  }

  test("a wrong expected head raises RefConflictException and commits nothing") {
    val c1 = commitOn("r", "main", put("t", fakeId("1")))
    val c2 = commitOn("r", "main", put("t", fakeId("2")))
    val refsBefore = engine.refs.all("r")
    for (expected <- Seq(Some(c1.image.hash), None, Some("f" * 64))) {
      val e = expectError[RefConflictException](ErrorClass.RefConflict)(
        engine.commit("r", "main", expected, Map(put("t", fakeId("new"))), "a", "lost"))
      assert(e.getMessage.contains("Nothing was committed"))
      assert(head("r").contains(c2.image.hash))
      assert(logHashes("r") == Seq(c2.image.hash, c1.image.hash))
      assert(engine.refs.all("r") == refsBefore)
    }
    assert(engine.objects(Seq(fakeId("new"))).isEmpty, "objects of a failed commit are not registered")
    assert(engine.metastore.read(MetaDao.allImages(_, "r")).size == 2)
  }

  test("expecting a head on a repository that does not exist is a conflict, and creates nothing") {
    expectError[RefConflictException](ErrorClass.RefConflict)(
      engine.commit("r", "main", Some("a" * 64), Map(put("t", fakeId("1"))), "a", "m"))
    assert(!engine.repositoryExists("r"))
  }

  test("committing to a tag raises ImmutableRefException") {
    val c1 = commitOn("r", "main", put("t", fakeId("1")))
    engine.refs.createTag("r", "v1", spec("main"))
    val refsBefore = engine.refs.all("r")
    for (expected <- Seq(None, Some(c1.image.hash))) {
      val e = expectError[ImmutableRefException](ErrorClass.ImmutableRef)(
        engine.commit("r", "v1", expected, Map(put("t", fakeId("2"))), "a", "m"))
      assert(e.getMessage.contains("'v1' is a tag"))
    }
    assert(engine.refs.all("r") == refsBefore)
    assert(engine.resolve("r", spec("v1")).hash == c1.image.hash)
  }

  test("a branch cannot take a tag's name (one namespace), and the tag keeps its image") {
    commitOn("r", "main", put("t", fakeId("1")))
    val tag = engine.refs.createTag("r", "x", spec("main"))
    expectError[RefExistsException](ErrorClass.RefExists)(engine.refs.createBranch("r", "x", spec("main")))
    commitOn("r", "main", put("t", fakeId("2")))
    assert(engine.resolve("r", spec("x")).hash == tag.image)
  }

  test("committing to a missing branch of an existing repository raises RefNotFoundException") {
    commitOn("r", "main", put("t", fakeId("1")))
    val refsBefore = engine.refs.all("r")
    val e = expectError[RefNotFoundException](ErrorClass.RefNotFound)(
      engine.commit("r", "nope", None, Map(put("t", fakeId("2"))), "a", "m"))
    assert(e.getMessage.contains("'nope'"))
    assert(engine.refs.all("r") == refsBefore)
    assert(engine.metastore.read(MetaDao.allImages(_, "r")).size == 1)
  }

  test("the first commit of a repository created empty makes its branch") {
    engine.createRepository("r", "trunk")
    assert(engine.refs.all("r").isEmpty)
    val c = engine.commit("r", "trunk", None, Map(put("t", fakeId("1"))), "a", "m")
    assert(head("r", "trunk").contains(c.image.hash))
    assert(engine.defaultBranch("r") == "trunk")
    expectError[VersionedException](ErrorClass.RepositoryExists)(engine.createRepository("r"))
  }

  test("created timestamps strictly increase along a branch") {
    val commits = (1 to 40).map(i => commitMsg("r", "main", s"c$i", putFresh("t")))
    val times = commits.map(_.image.createdMs)
    assert(times.zip(times.tail).forall { case (a, b) => a < b }, times)
    val refTime = engine.refs.all("r").head.createdMs
    assert(refTime == commits.head.image.createdMs, "the ref keeps its creation time")
  }

  test("dropRepository removes it; a later commit starts over") {
    commitMany("r", "main", 3)
    commitOn("s", "main", put("t", fakeId("1")))
    engine.dropRepository("r")
    assert(engine.repositories() == Seq("s"))
    expectError[RepositoryNotFoundException](ErrorClass.RepositoryNotFound)(engine.dropRepository("r"))
    expectError[RepositoryNotFoundException](ErrorClass.RepositoryNotFound)(engine.defaultBranch("r"))
    val c = commitOn("r", "main", put("t", fakeId("1")))
    assert(c.image.parents.isEmpty && logHashes("r") == Seq(c.image.hash))
  }

  // A second branch committing the same change with the same author, message and timestamp on the same
  // parent produces the same image hash, and the commit dies on the primary key of vc_images.
  test("the same commit on two branches from the same parent") {
    val future = System.currentTimeMillis() + 86400000L // forces created = parent + 1 on both branches
    val root = Image("r", Hashing.imageHash(Nil, "a", "root", future, Nil), Nil, future, "a", "root")
    engine.metastore.tx { c =>
      MetaDao.insertRepo(c, "r", "main", future)
      MetaDao.insertImage(c, root, 1, Nil)
      MetaDao.insertRef(c, "r", Ref("heads/main", RefKind.Branch, root.hash, future), Cause("test", Actor.process))
      MetaDao.insertRef(c, "r", Ref("heads/b", RefKind.Branch, root.hash, future), Cause("test", Actor.process))
    }
    val a = engine.commit("r", "main", Some(root.hash), Map(put("t", fakeId("1"))), "a", "same")
    locally {
      val b = engine.commit("r", "b", Some(root.hash), Map(put("t", fakeId("1"))), "a", "same")
      assert(b.image.hash == a.image.hash)
      assert(head("r", "b").contains(a.image.hash))
    }
  }
}
