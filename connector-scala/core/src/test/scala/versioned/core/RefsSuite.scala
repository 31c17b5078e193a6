package versioned.core

class RefsSuite extends CoreFixture {
  private def refs = engine.refs

  /** A repository `r` with three commits on main; returns them oldest first. */
  private def setup(): Seq[CommitResult] = commitMany("r", "main", 3)

  /** Runs `f`, which must fail with `T`/`errorClass`, and checks no ref of `r` changed. */
  private def failsUnchanged[T <: VersionedException](errorClass: String)(f: => Any)(
      implicit ct: scala.reflect.ClassTag[T]): T = {
    val before = refs.all("r")
    val defaultBefore = engine.defaultBranch("r")
    val e = expectError[T](errorClass)(f)
    assert(refs.all("r") == before, s"refs changed by a failed call: ${e.getMessage}")
    assert(engine.defaultBranch("r") == defaultBefore)
    e
  }

  test("create, list and delete branches") {
    val cs = setup()
    val b = refs.createBranch("r", "feature/x", spec("main~1"))
    assert(b.fullName == "heads/feature/x" && b.shortName == "feature/x" && b.kind == RefKind.Branch)
    assert(b.image == cs(1).image.hash)
    refs.createBranch("r", "dev", Revision.DefaultBranch)
    assert(refs.branches("r").map(_.shortName) == Seq("dev", "feature/x", "main"))
    assert(refs.branches("r").find(_.shortName == "dev").get.image == cs(2).image.hash)
    assert(refs.tags("r").isEmpty && refs.locks("r").isEmpty)
    refs.deleteBranch("r", "feature/x")
    assert(refs.branches("r").map(_.shortName) == Seq("dev", "main"))
    // the images stay reachable by hash
    assert(engine.resolve("r", spec(cs(1).image.hash)) == cs(1).image)
  }

  test("a new branch can be committed to and diverges from its origin") {
    val cs = setup()
    refs.createBranch("r", "dev", spec(cs.head.image.hash))
    val c = commitOn("r", "dev", putFresh("t"))
    assert(c.image.parents == Seq(cs.head.image.hash))
    assert(head("r").contains(cs.last.image.hash))
  }

  test("the default branch cannot be deleted") {
    setup()
    val e = failsUnchanged[ProtectedRefException](ErrorClass.ProtectedRef)(refs.deleteBranch("r", "main"))
    assert(e.getMessage.contains("default branch"))
  }

  test("creating an existing branch, tag or lock raises RefExistsException") {
    setup()
    refs.createBranch("r", "dev", spec("main~2"))
    refs.createTag("r", "v1", spec("main~1"))
    refs.createLock("r", "ns", "a", spec("main"))
    failsUnchanged[RefExistsException](ErrorClass.RefExists)(refs.createBranch("r", "dev", spec("main")))
    failsUnchanged[RefExistsException](ErrorClass.RefExists)(refs.createBranch("r", "main", spec("main~1")))
    failsUnchanged[RefExistsException](ErrorClass.RefExists)(refs.createTag("r", "v1", spec("main~1")))
    failsUnchanged[RefExistsException](ErrorClass.RefExists)(refs.createTag("r", "v1", spec("main")))
    failsUnchanged[RefExistsException](ErrorClass.RefExists)(refs.createLock("r", "ns", "a", spec("main~2")))
  }

  test("qualified ref names resolve each kind; a lock's name never collides (it holds a namespace)") {
    val cs = setup()
    refs.createTag("r", "x", spec("main~2"))
    refs.createBranch("r", "y", spec("main~1"))
    refs.createLock("r", "x", "x", spec("main"))
    assert(refs.all("r").map(r => r.fullName -> r.kind) ==
      Seq("heads/main" -> "branch", "heads/y" -> "branch", "locks/x:x" -> "lock", "tags/x" -> "tag"))
    assert(engine.resolve("r", spec("tags/x")).hash == cs(0).image.hash)
    assert(engine.resolve("r", spec("heads/y")).hash == cs(1).image.hash)
    assert(engine.resolve("r", spec("x:x")).hash == cs(2).image.hash)
  }

  test("rename a branch, including the default branch") {
    val cs = setup()
    refs.createBranch("r", "dev", spec("main~1"))
    refs.renameBranch("r", "dev", "feature")
    assert(refs.branches("r").map(r => r.shortName -> r.image) ==
      Seq("feature" -> cs(1).image.hash, "main" -> cs(2).image.hash))
    refs.renameBranch("r", "main", "trunk")
    assert(engine.defaultBranch("r") == "trunk")
    assert(engine.resolve("r", Revision.DefaultBranch).hash == cs(2).image.hash)
    failsUnchanged[ProtectedRefException](ErrorClass.ProtectedRef)(refs.deleteBranch("r", "trunk"))
    refs.deleteBranch("r", "feature")
    val c = commitOn("r", "trunk", putFresh("t"))
    assert(c.image.parents == Seq(cs(2).image.hash))
  }

  test("rename errors leave refs unchanged") {
    setup()
    refs.createBranch("r", "dev", spec("main~1"))
    refs.createTag("r", "v1", spec("main"))
    failsUnchanged[RefNotFoundException](ErrorClass.RefNotFound)(refs.renameBranch("r", "nope", "x"))
    failsUnchanged[RefNotFoundException](ErrorClass.RefNotFound)(refs.renameBranch("r", "v1", "x"))
    failsUnchanged[RefExistsException](ErrorClass.RefExists)(refs.renameBranch("r", "dev", "main"))
    failsUnchanged[RefExistsException](ErrorClass.RefExists)(refs.renameBranch("r", "dev", "dev"))
    failsUnchanged[InvalidNameException](ErrorClass.InvalidName)(refs.renameBranch("r", "dev", "a..b"))
  }

  test("tags are immutable; they can be deleted and re-created") {
    val cs = setup()
    val t = refs.createTag("r", "v1.0", spec("main~2"))
    assert(t.fullName == "tags/v1.0" && t.kind == RefKind.Tag && t.image == cs(0).image.hash)
    commitOn("r", "main", putFresh("t"))
    assert(engine.resolve("r", spec("v1.0")).hash == cs(0).image.hash, "tags do not follow commits")
    failsUnchanged[ImmutableRefException](ErrorClass.ImmutableRef)(
      engine.commit("r", "v1.0", None, Map(putFresh("t")), "a", "m"))
    failsUnchanged[ImmutableRefException](ErrorClass.ImmutableRef)(refs.resetBranch("r", "v1.0", spec("main")))
    failsUnchanged[RefNotFoundException](ErrorClass.RefNotFound)(refs.deleteBranch("r", "v1.0"))
    assert(refs.tags("r").map(_.shortName) == Seq("v1.0"))
    refs.deleteTag("r", "v1.0")
    assert(refs.tags("r").isEmpty)
    failsUnchanged[RefNotFoundException](ErrorClass.RefNotFound)(refs.deleteTag("r", "v1.0"))
    assert(refs.createTag("r", "v1.0", spec("main")).image == head("r").get)
  }

  test("locks are namespaced, listed by namespace and released") {
    val cs = setup()
    val l = refs.createLock("r", "ingest", "job-1", spec("main~1"))
    assert(l.fullName == "locks/ingest:job-1" && l.kind == RefKind.Lock && l.shortName == "ingest:job-1")
    refs.createLock("r", "ingest", "job-2", spec("main"))
    refs.createLock("r", "ingestx", "job-1", spec("main~2"))
    refs.createLock("r", "report", "job-1", spec("main~2"))
    assert(refs.locks("r").map(_.shortName) == Seq("ingest:job-1", "ingest:job-2", "ingestx:job-1", "report:job-1"))
    assert(refs.locks("r", Some("ingest")).map(_.shortName) == Seq("ingest:job-1", "ingest:job-2"))
    assert(refs.locks("r", Some("report")).map(_.image) == Seq(cs(0).image.hash))
    assert(refs.locks("r", Some("none")).isEmpty)
    refs.releaseLock("r", "ingest", "job-1")
    assert(refs.locks("r", Some("ingest")).map(_.shortName) == Seq("ingest:job-2"))
    failsUnchanged[RefNotFoundException](ErrorClass.RefNotFound)(refs.releaseLock("r", "ingest", "job-1"))
    failsUnchanged[RefNotFoundException](ErrorClass.RefNotFound)(refs.releaseLock("r", "nope", "job-2"))
    assert(refs.branches("r").map(_.shortName) == Seq("main"))
  }

  test("reset moves a branch and keeps history") {
    val cs = setup()
    val r = refs.resetBranch("r", "main", spec("main~2"))
    assert(r.image == cs(0).image.hash && r.fullName == "heads/main")
    assert(head("r").contains(cs(0).image.hash))
    assert(logHashes("r") == Seq(cs(0).image.hash))
    // the old images are still there and the branch can be moved forward again
    assert(engine.resolve("r", spec(cs(2).image.hash)) == cs(2).image)
    refs.resetBranch("r", "main", spec(cs(2).image.hash), expected = Some(cs(0).image.hash))
    assert(logHashes("r") == cs.reverse.map(_.image.hash))
    // a commit after a reset has the new target as parent
    refs.resetBranch("r", "main", spec("main~1"))
    val c = commitOn("r", "main", putFresh("t"))
    assert(c.image.parents == Seq(cs(1).image.hash))
  }

  test("reset with a stale expectation or a bad target leaves refs unchanged") {
    val cs = setup()
    val e = failsUnchanged[RefConflictException](ErrorClass.RefConflict)(
      refs.resetBranch("r", "main", spec("main~2"), expected = Some(cs(1).image.hash)))
    assert(e.getMessage.contains("Nothing was changed"))
    failsUnchanged[RefNotFoundException](ErrorClass.RefNotFound)(refs.resetBranch("r", "nope", spec("main")))
    failsUnchanged[RefNotFoundException](ErrorClass.RefNotFound)(refs.resetBranch("r", "main", spec("nope")))
    failsUnchanged[ImageNotFoundException](ErrorClass.ImageNotFound)(refs.resetBranch("r", "main", spec("main~3")))
  }

  test("error cases leave refs unchanged") {
    setup()
    refs.createBranch("r", "dev", spec("main"))
    failsUnchanged[RefNotFoundException](ErrorClass.RefNotFound)(refs.createBranch("r", "x", spec("nope")))
    failsUnchanged[RefNotFoundException](ErrorClass.RefNotFound)(refs.createTag("r", "x", spec("nope")))
    failsUnchanged[RefNotFoundException](ErrorClass.RefNotFound)(refs.createLock("r", "n", "x", spec("nope")))
    failsUnchanged[ImageNotFoundException](ErrorClass.ImageNotFound)(refs.createBranch("r", "x", spec("main~10")))
    failsUnchanged[InvalidInputException](ErrorClass.InvalidRevision)(refs.createBranch("r", "x", spec("")))
    failsUnchanged[RefNotFoundException](ErrorClass.RefNotFound)(refs.deleteBranch("r", "nope"))
    failsUnchanged[RefNotFoundException](ErrorClass.RefNotFound)(refs.deleteTag("r", "dev"))
    failsUnchanged[InvalidNameException](ErrorClass.InvalidName)(refs.createBranch("r", "x y", spec("main")))
    failsUnchanged[InvalidNameException](ErrorClass.InvalidName)(refs.createTag("r", "x~", spec("main")))
    failsUnchanged[InvalidNameException](ErrorClass.InvalidName)(refs.createLock("r", "n:s", "x", spec("main")))
    failsUnchanged[InvalidNameException](ErrorClass.InvalidName)(refs.deleteBranch("r", "-x"))
  }

  test("ref operations on a missing repository raise RepositoryNotFoundException") {
    setup()
    def missing(f: => Any) = expectError[RepositoryNotFoundException](ErrorClass.RepositoryNotFound)(f)
    missing(refs.branches("nope"))
    missing(refs.tags("nope"))
    missing(refs.locks("nope"))
    missing(refs.all("nope"))
    missing(refs.createBranch("nope", "b", Revision.DefaultBranch))
    missing(refs.createTag("nope", "t", Revision.DefaultBranch))
    missing(refs.createLock("nope", "n", "l", Revision.DefaultBranch))
    missing(refs.deleteBranch("nope", "b"))
    missing(refs.deleteTag("nope", "t"))
    missing(refs.releaseLock("nope", "n", "l"))
    missing(refs.renameBranch("nope", "a", "b"))
    missing(refs.resetBranch("nope", "a", Revision.DefaultBranch))
    assert(engine.repositories() == Seq("r"))
  }

  test("branches, tags and locks share one namespace of names: a collision is refused, nothing changes") {
    setup()
    refs.createTag("r", "v1", spec("main~1"))
    failsUnchanged[RefExistsException](ErrorClass.RefExists)(refs.createBranch("r", "v1", spec("main")))
    refs.createBranch("r", "dev", spec("main"))
    failsUnchanged[RefExistsException](ErrorClass.RefExists)(refs.createTag("r", "dev", spec("main")))
    failsUnchanged[RefExistsException](ErrorClass.RefExists)(refs.renameBranch("r", "dev", "v1"))
    // the tag still pins its image
    assert(engine.resolve("r", spec("v1")) == engine.resolve("r", spec("main~1")))
  }

  test("the default branch can be changed to an existing branch") {
    val cs = setup()
    refs.createBranch("r", "trunk", spec("main~1"))
    assert(refs.setDefaultBranch("r", "trunk").image == cs(1).image.hash)
    assert(engine.defaultBranch("r") == "trunk")
    assert(engine.resolve("r", Revision.DefaultBranch).hash == cs(1).image.hash)
    failsUnchanged[RefNotFoundException](ErrorClass.RefNotFound)(refs.setDefaultBranch("r", "nope"))
    failsUnchanged[ProtectedRefException](ErrorClass.ProtectedRef)(refs.deleteBranch("r", "trunk"))
    refs.deleteBranch("r", "main")
    assert(refs.branches("r").map(_.shortName) == Seq("trunk"))
  }
}
