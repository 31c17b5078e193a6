package versioned.core

import java.time.Instant

class ResolverSuite extends CoreFixture {
  private def res(s: String, repo: String = "r"): Image = engine.resolve(repo, spec(s))
  private def hashOf(s: String): String = res(s).hash

  /** Three commits on main, a branch `dev` at main~1 with one more commit, tag v1 at main~2, lock ns:l at main. */
  private def setup(): (Seq[CommitResult], CommitResult) = {
    val cs = commitMany("r", "main", 3)
    engine.refs.createBranch("r", "dev", spec("main~1"))
    val d = commitOn("r", "dev", putFresh("t"))
    engine.refs.createTag("r", "v1", spec("main~2"))
    engine.refs.createLock("r", "ns", "l", spec("main"))
    (cs, d)
  }

  test("a read's options name one revision: ref, image (a hash or prefix), asOf (alone or with a branch), or none") {
    assert(Revision.of(None, None, None) == Revision.DefaultBranch)
    assert(Revision.of(Some("dev~2"), None, None) == Revision.Spec("dev~2"))
    assert(Revision.of(None, Some("ABCD12"), None) == Revision.Spec("ABCD12"))
    assert(Revision.of(Some("dev"), None, Some("1000")) == Revision.AsOf(1000L, Some("dev")))
    assert(Revision.of(None, None, Some("1970-01-01T00:00:02Z")) == Revision.AsOf(2000L, None))
    def refused(cls: String, ref: Option[String], image: Option[String], asOf: Option[String]) = {
      val e = intercept[VersionedException](Revision.of(ref, image, asOf))
      assert(e.errorClass == cls, e.getMessage)
    }
    refused(ErrorClass.InvalidOption, Some("dev"), Some("abcd"), None)
    refused(ErrorClass.InvalidOption, None, Some("abcd"), Some("1000"))
    refused(ErrorClass.InvalidRevision, None, Some("main"), None) // not hex
    refused(ErrorClass.InvalidRevision, None, Some("abc"), None) // too short a prefix
    refused(ErrorClass.InvalidRevision, None, None, Some("yesterday"))
  }

  test("branches, tags, locks and qualified names") {
    val (cs, d) = setup()
    val Seq(c1, c2, c3) = cs.map(_.image.hash)
    assert(hashOf("main") == c3)
    assert(res("main") == cs(2).image)
    assert(hashOf("heads/main") == c3)
    assert(hashOf("dev") == d.image.hash && hashOf("heads/dev") == d.image.hash)
    assert(hashOf("v1") == c1 && hashOf("tags/v1") == c1)
    assert(hashOf("ns:l") == c3 && hashOf("locks/ns:l") == c3)
    assert(hashOf("  main  ") == c3, "surrounding spaces are ignored")
    assert(engine.resolve("r", Revision.DefaultBranch).hash == c3)
    assert(hashOf("dev~1") == c2)
  }

  test("qualified names only look in their own namespace") {
    setup()
    def notFound(s: String) = expectError[RefNotFoundException](ErrorClass.RefNotFound)(res(s))
    notFound("tags/main")
    notFound("heads/v1")
    notFound("locks/main")
    notFound("heads/ns:l")
    notFound("ns:main")
    notFound("other:l")
    notFound("locks/ns")
    notFound("heads/")
    notFound("remotes/origin/main")
  }

  test("remote refs") {
    val (cs, _) = setup()
    engine.metastore.tx(MetaDao.insertRef(_, "r", Ref("remotes/origin/main", RefKind.Remote, cs.head.image.hash, 1L), _root_.versioned.core.Cause("test", Actor.process)))
    assert(hashOf("remotes/origin/main") == cs.head.image.hash)
    assert(hashOf("remotes/origin/main~0") == cs.head.image.hash)
  }

  test("full hashes and unique prefixes, in any case") {
    val (cs, d) = setup()
    for (img <- cs.map(_.image) :+ d.image) {
      assert(res(img.hash) == img)
      assert(res(img.hash.toUpperCase) == img)
      assert(res(img.hash.take(12)) == img)
      assert(res(img.shortHash.toUpperCase) == img)
      assert(res(img.hash + "~0") == img)
    }
    expectError[RefNotFoundException](ErrorClass.RefNotFound)(res(Hashing.sha256Hex("no such image")))
    // fewer than 4 characters is never a prefix
    val h = cs.head.image.hash
    expectError[RefNotFoundException](ErrorClass.RefNotFound)(res(h.take(3)))
    // more than 64 hex characters is not a hash
    expectError[RefNotFoundException](ErrorClass.RefNotFound)(res(h + "0"))
  }

  test("a hash of another repository does not resolve") {
    setup()
    val other = commitOn("s", "main", put("t", fakeId("x")))
    expectError[RefNotFoundException](ErrorClass.RefNotFound)(res(other.image.hash))
    assert(res(other.image.hash, "s") == other.image)
  }

  test("an ambiguous prefix raises AmbiguousRefException; a longer one resolves") {
    // Birthday bound: 4-hex-char prefixes collide after ~320 images on average.
    val seen = scala.collection.mutable.HashMap[String, String]()
    var pair: Option[(String, String)] = None
    var i = 0
    while (pair.isEmpty && i < 5000) {
      i += 1
      val h = engine.commit("r", "main", head("r"), Map.empty, "a", s"c$i").image.hash
      seen.get(h.take(4)) match {
        case Some(prev) => pair = Some(prev -> h)
        case None => seen(h.take(4)) = h
      }
    }
    val (a, b) = pair.getOrElse(fail("no 4-char prefix collision in 5000 commits"))
    val e = expectError[AmbiguousRefException](ErrorClass.AmbiguousRef)(res(a.take(4)))
    assert(e.isInstanceOf[InvalidInputException])
    assert(e.getMessage.contains(a.take(12)) && e.getMessage.contains(b.take(12)), e.getMessage)
    expectError[AmbiguousRefException](ErrorClass.AmbiguousRef)(res(a.take(4).toUpperCase))
    val common = a.zip(b).takeWhile { case (x, y) => x == y }.size
    assert(hashOf(a.take(common + 1)) == a)
    assert(hashOf(b.take(common + 1)) == b)
    assert(hashOf(a) == a && hashOf(b) == b)
  }

  test("a branch or tag named like a hex prefix wins over the prefix") {
    val (cs, _) = setup()
    val target = cs.head.image.hash
    val prefix = cs(2).image.hash.take(6)
    engine.refs.createBranch("r", prefix, spec(target))
    assert(hashOf(prefix) == target)
    assert(hashOf(cs(2).image.hash.take(7)) == cs(2).image.hash)
  }

  test("ancestry: ~N, ^, ^N and combinations") {
    val (cs, d) = setup()
    val Seq(c1, c2, c3) = cs.map(_.image.hash)
    assert(hashOf("main~0") == c3 && hashOf("main^0") == c3)
    assert(hashOf("main~") == c2 && hashOf("main~1") == c2 && hashOf("main^") == c2 && hashOf("main^1") == c2)
    assert(hashOf("main~2") == c1 && hashOf("main^^") == c1 && hashOf("main~~") == c1 && hashOf("main~1^") == c1)
    assert(hashOf("dev~2") == c1 && hashOf("ns:l~2") == c1 && hashOf("locks/ns:l^~1") == c1)
    assert(hashOf(c3 + "~2") == c1 && hashOf(c3.take(10) + "^^") == c1)
    assert(hashOf("v1~0") == c1)
  }

  test("second parents of a merge image") {
    val (cs, d) = setup()
    val parents = Seq(cs(2).image.hash, d.image.hash)
    val created = math.max(cs(2).image.createdMs, d.image.createdMs) + 1
    val merge = Image("r", Hashing.imageHash(parents, "a", "merge", created, Nil), parents, created, "a", "merge")
    engine.metastore.tx { c =>
      MetaDao.insertImage(c, merge, MetaDao.nextSeq(c, "r"), Nil)
      MetaDao.insertRef(c, "r", Ref("heads/m", RefKind.Branch, merge.hash, created), Cause("test", Actor.process))
    }
    assert(hashOf("m^") == cs(2).image.hash && hashOf("m^1") == cs(2).image.hash)
    assert(hashOf("m^2") == d.image.hash)
    assert(hashOf("m^2~1") == cs(1).image.hash)
    assert(hashOf("m~1") == cs(2).image.hash)
    expectError[ImageNotFoundException](ErrorClass.ImageNotFound)(res("m^3"))
    assert(engine.history.log("r", spec("m")).map(_.image.hash).toSet ==
      Set(merge.hash, d.image.hash) ++ cs.map(_.image.hash))
  }

  test("long ~N walks and AsOf over a long history with another branch interleaved agree with one step at a time") {
    val first = commitMany("r", "main", 5)
    engine.refs.createBranch("r", "dev", spec("main~2"))
    // main and dev commit in turn, so the windows the long walks read hold both lines
    val mains = first ++ (1 to 40).flatMap { _ => val m = commitOn("r", "main", putFresh("t")); commitOn("r", "dev", putFresh("u")); Seq(m) }
    val onMain = mains.map(_.image.hash).reverse // newest first
    for (n <- Seq(0, 1, 16, 17, 30, onMain.size - 1)) {
      assert(hashOf(s"main~$n") == onMain(n), s"main~$n")
      assert(hashOf(s"main~$n") == hashOf("main" + "~1" * n), s"main~$n step by step")
    }
    assert(hashOf("dev~25") == hashOf("dev" + "~1" * 25))
    assert(hashOf("main~20^~3") == onMain(24))
    val past = expectError[ImageNotFoundException](ErrorClass.ImageNotFound)(res(s"main~${onMain.size}"))
    assert(past.getMessage.contains("past the root") && past.getMessage.contains(onMain.last.take(12)), past.getMessage)
    for ((c, i) <- mains.zipWithIndex) {
      assert(engine.resolve("r", Revision.AsOf(c.image.createdMs, None)).hash == c.image.hash, s"asOf commit $i")
      assert(engine.resolve("r", Revision.AsOf(c.image.createdMs, None)) == res(c.image.hash), "the whole image")
    }
  }

  test("a long ~N walk follows first parents through merges, and names a first parent that is not stored") {
    val cs = commitMany("r", "main", 3)
    val missing = "f" * 64
    // 20 images on branch x: the first one's parent is not stored, each later one merges its predecessor with main
    val line = (1 to 20).foldLeft(Vector.empty[Image]) { (acc, i) =>
      val parents = acc.lastOption.map(p => Seq(p.hash, cs(i % 3).image.hash)).getOrElse(Seq(missing))
      val created = cs.last.image.createdMs + i
      acc :+ Image("r", Hashing.imageHash(parents, "a", s"x$i", created, Nil), parents, created, "a", s"x$i")
    }
    engine.metastore.tx { c =>
      line.foreach(img => MetaDao.insertImage(c, img, MetaDao.nextSeq(c, "r"), Nil))
      MetaDao.insertRef(c, "r", Ref("heads/x", RefKind.Branch, line.last.hash, line.last.createdMs), Cause("test", Actor.process))
    }
    assert(hashOf("x~19") == line.head.hash && hashOf("x~17") == line(2).hash && hashOf("x~17") == hashOf("x" + "~1" * 17))
    assert(hashOf("x~18^2") == cs(2).image.hash && hashOf("x~18^2~1") == cs(1).image.hash)
    for (s <- Seq("x~20", "x~25", "x~19~1")) {
      val e = expectError[ImageNotFoundException](ErrorClass.ImageNotFound)(res(s))
      assert(e.getMessage.contains(missing) && !e.getMessage.contains("past the root"), e.getMessage)
    }
  }

  test("walking past the root raises ImageNotFoundException") {
    setup()
    for (s <- Seq("main~3", "main~4", "main^^^", "v1~1", "v1^", "main^2", "v1^1", "main~1000000"))
      assert(expectError[ImageNotFoundException](ErrorClass.ImageNotFound)(res(s)).getMessage.contains("past the root"))
  }

  test("an ancestry count too large for an Int") {
    setup()
    locally {
      intercept[VersionedException](res("main~99999999999"))
      ()
    }
  }

  test("unknown refs, empty and malformed revisions") {
    setup()
    for (s <- Seq("nope", "nope~1", "main@{1}", "zzzz", "abc", "MAIN"))
      assert(expectError[RefNotFoundException](ErrorClass.RefNotFound)(res(s)).getMessage.contains(s"'$s'"))
    // an ancestry step without a count is malformed, not an unknown ref (ref names never hold ~ or ^)
    assert(expectError[InvalidInputException](ErrorClass.InvalidRevision)(res("main~x")).getMessage.contains("ancestry"))
    for (s <- Seq("", "   ", "~1", "^", "~"))
      expectError[InvalidInputException](ErrorClass.InvalidRevision)(res(s))
    expectError[InvalidInputException](ErrorClass.InvalidRevision)(engine.resolve("r", Revision.Spec(null)))
  }

  test("an unknown repository raises RepositoryNotFoundException for every revision kind") {
    setup()
    for (rev <- Seq(spec("main"), spec(""), Revision.DefaultBranch, Revision.AsOf(Long.MaxValue, None)))
      assert(expectError[RepositoryNotFoundException](ErrorClass.RepositoryNotFound)(engine.resolve("nope", rev))
        .getMessage.contains("'nope'"))
  }

  test("a default branch without commits raises RefNotFoundException") {
    engine.createRepository("r")
    expectError[RefNotFoundException](ErrorClass.RefNotFound)(engine.resolve("r", Revision.DefaultBranch))
    expectError[RefNotFoundException](ErrorClass.RefNotFound)(engine.resolve("r", Revision.AsOf(0L, None)))
    assert(engine.branchHeadOption("r", "main").isEmpty && engine.branchHeadOption("nope", "main").isEmpty)
  }

  test("AsOf: newest image at or before a timestamp, along the first parents") {
    val (cs, d) = setup()
    val Seq(t1, t2, t3) = cs.map(_.image.createdMs)
    def asOf(ts: Long, b: Option[String] = None) = engine.resolve("r", Revision.AsOf(ts, b)).hash
    assert(asOf(t1) == cs(0).image.hash)
    assert(asOf(t2 - 1) == cs(0).image.hash, "between two commits: the older one")
    assert(asOf(t2) == cs(1).image.hash)
    assert(asOf(t3 - 1) == cs(1).image.hash)
    assert(asOf(t3) == cs(2).image.hash)
    assert(asOf(Long.MaxValue) == cs(2).image.hash)
    assert(asOf(Long.MaxValue, Some("dev")) == d.image.hash)
    assert(asOf(d.image.createdMs - 1, Some("dev")) == cs(1).image.hash)
    assert(asOf(t1, Some("dev")) == cs(0).image.hash)
    val e = expectError[ImageNotFoundException](ErrorClass.ImageNotFound)(asOf(t1 - 1))
    assert(e.getMessage.contains(Instant.ofEpochMilli(t1).toString), e.getMessage)
    expectError[ImageNotFoundException](ErrorClass.ImageNotFound)(asOf(0L, Some("dev")))
    expectError[ImageNotFoundException](ErrorClass.ImageNotFound)(asOf(Long.MinValue))
    expectError[RefNotFoundException](ErrorClass.RefNotFound)(asOf(t3, Some("nope")))
  }

  test("Revision.parseTimestamp accepts ISO-8601, 'yyyy-MM-dd[ HH:mm:ss[.SSS]]' (UTC) and epoch millis") {
    val noon = Instant.parse("2026-01-31T12:00:00Z").toEpochMilli
    val cases = Seq(
      "1769860800000" -> noon,
      "0" -> 0L,
      "-1000" -> -1000L,
      "2026-01-31T12:00:00Z" -> noon,
      "2026-01-31T12:00:00.250Z" -> (noon + 250),
      "2026-01-31T14:00:00+02:00" -> noon,
      "2026-01-31 12:00:00" -> noon,
      "2026-01-31T12:00:00" -> noon,
      "2026-01-31 12:00" -> noon,
      "2026-01-31 12:00:00.123" -> (noon + 123),
      "2026-01-31" -> (noon - 12 * 3600 * 1000L),
      "  2026-01-31 12:00:00  " -> noon)
    for ((s, want) <- cases) assert(Revision.parseTimestamp(s) == want, s)
  }

  test("Revision.parseTimestamp rejects what it cannot parse with INVALID_REVISION") {
    for (s <- Seq("", "  ", "yesterday", "2026-13-01", "2026-02-30", "2026/01/31", "31.01.2026", "12:00",
                  "2026-01-31 25:00:00", "1.5", "99999999999999999999")) {
      val e = expectError[InvalidInputException](ErrorClass.InvalidRevision)(Revision.parseTimestamp(s))
      assert(e.getMessage.contains(s"'$s'") && e.getMessage.contains("ISO-8601"))
    }
  }
}
