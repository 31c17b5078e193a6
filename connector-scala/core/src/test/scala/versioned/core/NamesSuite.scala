package versioned.core

import org.scalatest.funsuite.AnyFunSuite

class NamesSuite extends AnyFunSuite {
  import Names._

  private val hash64 = "0123456789abcdef" * 4
  private val refKinds = Seq(Branch, Tag, LockNamespace, LockName)

  /** Asserts the name is rejected with INVALID_NAME and a message naming the kind, the name and `why`. */
  private def rejected(kind: Kind, name: String, why: String): InvalidNameException = {
    val e = intercept[InvalidNameException](validate(kind, name))
    assert(e.isInstanceOf[InvalidInputException] && e.isInstanceOf[VersionedException])
    assert(e.errorClass == "INVALID_NAME")
    assert(e.getErrorClass == ErrorClass.InvalidName)
    assert(e.getMessage.startsWith("[INVALID_NAME] Invalid " + kind.label + " name"), e.getMessage)
    assert(e.getMessage.contains(why), s"'${e.getMessage}' does not say '$why'")
    e
  }

  test("valid repository and table names are returned unchanged") {
    for (kind <- Seq(Repository, Table); n <- Seq("a", "_", "_x", "orders", "Orders_2024", "a-b", "x" * 128))
      assert(validate(kind, n) == n)
  }

  test("invalid repository and table names") {
    val why = "use letters, digits, '_' and '-'"
    for (kind <- Seq(Repository, Table);
         n <- Seq("1abc", "-a", "a b", " a", "a.b", "a/b", "a:b", "a@b", "é", "a\tb", "x" * 129, "a~1", "a^"))
      rejected(kind, n, why)
  }

  test("empty and null names are rejected for every kind") {
    for (kind <- Seq(Repository, Table, Branch, Tag, LockNamespace, LockName, Remote)) {
      rejected(kind, "", "it is empty")
      val e = rejected(kind, null, "it is empty")
      assert(e.getMessage.contains("'null'"))
    }
  }

  test("valid ref names") {
    for (n <- Seq("main", "dev", "feature/x", "feature/x/y", "v1.0", "release-2024.01", "a_b", "UPPER", "x" * 200,
                  "abcd", "a-", "@x", "x@y", "a.b.c", "héllo"))
      assert(validate(Branch, n) == n && validate(Tag, n) == n)
    for (n <- Seq("ingest", "job-1", "a.b", "x" * 200)) {
      assert(validate(LockNamespace, n) == n)
      assert(validate(LockName, n) == n)
    }
  }

  test("ref names longer than 200 characters") {
    for (k <- refKinds) rejected(k, "x" * 201, "longer than 200")
  }

  test("ref names with control characters, and the message shows them escaped") {
    for (k <- refKinds; c <- Seq('\u0000', '\t', '\n', '\r', '\u001b', '\u001f')) {
      val e = rejected(k, s"a${c}b", "control character")
      assert(!e.getMessage.exists(_ < 0x20), "the message must not contain raw control characters")
      assert(e.getMessage.contains(f"\\u${c.toInt}%04x"), e.getMessage)
    }
  }

  test("ref names with DEL") {
    for (k <- refKinds) rejected(k, "a\u007fb", "it contains")
  }

  // The DEL rule reports the raw character; `printable` escapes the name but not the reason.
  test("the message for DEL shows it escaped") {
    locally {
      val e = intercept[InvalidNameException](validate(Branch, "a\u007fb"))
      assert(!e.getMessage.contains('\u007f'), e.getMessage)
    }
  }

  test("ref names with forbidden characters") {
    for (k <- refKinds; c <- Seq(' ', '~', '^', ':', '?', '*', '[', '\\'))
      rejected(k, s"a${c}b", s"it contains '$c'")
    rejected(Branch, "main~1", "'~'")
    rejected(Branch, "main^", "'^'")
    rejected(Tag, "ns:name", "':'")
    rejected(Branch, " main", "' '")
    rejected(Branch, "main ", "' '")
  }

  test("ref names containing '..'") {
    for (k <- refKinds; n <- Seq("..", "a..b", "a..", "..a")) rejected(k, n, "'..'")
    rejected(Branch, "a/../b", "'..'")
  }

  test("ref names containing '@{' or equal to '@'") {
    for (k <- refKinds; n <- Seq("@", "a@{1}", "@{", "main@{yesterday}")) rejected(k, n, "'@{' or is '@'")
  }

  test("ref names starting with '-'") {
    for (k <- refKinds; n <- Seq("-", "-x", "--force")) rejected(k, n, "starts with '-'")
    assert(validate(Branch, "x-") == "x-")
  }

  test("ref names with empty path components") {
    for (k <- Seq(Branch, Tag); n <- Seq("/a", "a/", "a//b", "/", "a///b", "feature/"))
      rejected(k, n, "empty path component")
  }

  test("ref names ending with '.' or '.lock'") {
    for (k <- refKinds; n <- Seq("a.", "a.lock", ".lock.lock", "x.y.lock")) rejected(k, n, "'.' or '.lock'")
    assert(validate(Branch, "a.locked") == "a.locked")
    assert(validate(Branch, "lock") == "lock")
  }

  test("ref names with a path component starting with '.'") {
    for (k <- Seq(Branch, Tag); n <- Seq(".a", "a/.b", ".hidden/x", "a/.b/c")) rejected(k, n, "starts with '.'")
    for (k <- Seq(LockNamespace, LockName)) rejected(k, ".a", "starts with '.'")
  }

  test("lock namespaces and names cannot contain '/'") {
    for (k <- Seq(LockNamespace, LockName)) rejected(k, "a/b", "contains '/'")
    assert(validate(Branch, "a/b") == "a/b")
  }

  test("a branch cannot look like a full image hash") {
    rejected(Branch, hash64, "looks like an image hash")
    // shorter or longer hex strings, or non-hex strings of 64 chars, are fine
    assert(validate(Branch, hash64.take(63)) == hash64.take(63))
    assert(validate(Branch, hash64 + "0") == hash64 + "0")
    assert(validate(Branch, "g" + hash64.drop(1)) == "g" + hash64.drop(1))
  }

  // See the report: tags are resolved before hashes, so a tag named like a full hash shadows that image.
  test("a tag cannot look like a full image hash") {
    locally {
      rejected(Tag, hash64, "looks like an image hash")
      ()
    }
  }

  // The resolver lower-cases hex before the hash lookup, so an upper-case 64-hex branch shadows that image too.
  test("a branch in upper-case hex cannot look like a full image hash") {
    locally {
      rejected(Branch, hash64.toUpperCase, "looks like an image hash")
      ()
    }
  }

  test("the first failing rule is the one reported") {
    rejected(Branch, "a b..c", "it contains ' '")
    rejected(Branch, "-a..b", "'..'")
  }

  test("Hashing.looksLikeFullHash and looksLikePrefix") {
    assert(Hashing.looksLikeFullHash(hash64))
    assert(!Hashing.looksLikeFullHash(hash64.toUpperCase))
    assert(!Hashing.looksLikeFullHash(hash64.take(63)))
    assert(Hashing.looksLikePrefix("abcd"))
    assert(!Hashing.looksLikePrefix("abc"))
    assert(!Hashing.looksLikePrefix("abcz"))
    assert(Hashing.looksLikePrefix(hash64))
    assert(!Hashing.looksLikePrefix(hash64 + "0"))
  }

  test("invalid names are rejected by the engine entry points with INVALID_NAME") {
    val dir = java.nio.file.Files.createTempDirectory("versioned-names")
    try {
      val engine = new Engine(WarehouseConfig.embedded(dir.toString))
      def invalid(f: => Any): Unit = assert(intercept[InvalidNameException](f).errorClass == ErrorClass.InvalidName)
      invalid(engine.createRepository("bad repo"))
      invalid(engine.createRepository("r", defaultBranch = "a..b"))
      invalid(engine.commit("bad repo", "main", None, Map.empty, "a", "m"))
      invalid(engine.commit("r", "bad branch", None, Map.empty, "a", "m"))
      invalid(engine.commit("r", hash64, None, Map.empty, "a", "m"))
      invalid(engine.commit("r", "main", None, Map("bad table" -> TableUpdate.Drop), "a", "m"))
      assert(engine.repositories().isEmpty, "nothing may be created by a rejected call")
      engine.commit("r", "main", None, Map.empty, "a", "m")
      invalid(engine.refs.createBranch("r", "-x", Revision.DefaultBranch))
      invalid(engine.refs.createTag("r", "v1.lock", Revision.DefaultBranch))
      invalid(engine.refs.createLock("r", "a/b", "x", Revision.DefaultBranch))
      invalid(engine.refs.createLock("r", "ns", "x:y", Revision.DefaultBranch))
      invalid(engine.refs.locks("r", Some("a b")))
      invalid(engine.refs.renameBranch("r", "main", "x//y"))
      assert(engine.refs.all("r").map(_.fullName) == Seq("heads/main"))
    } finally {
      val s = java.nio.file.Files.walk(dir)
      try s.sorted(java.util.Comparator.reverseOrder[java.nio.file.Path]()).forEach(f => java.nio.file.Files.delete(f))
      finally s.close()
    }
  }
}
