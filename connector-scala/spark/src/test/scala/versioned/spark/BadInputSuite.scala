package versioned.spark

import versioned.spark.format.{Values, TableLayout}

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types._
import versioned.core.{ErrorClass, Revision}

/**
 * Every bad request fails with the documented error class and a message that says what went wrong,
 * and leaves the warehouse exactly as it was: same repositories, refs, log length and rows, and no
 * staging leftovers.
 */
class BadInputSuite extends VersionedTestBase {
  private val schema = new StructType().add("id", IntegerType).add("name", StringType)

  private def data(rows: (Any, String)*): DataFrame = frame(schema, rows.map { case (i, n) => Row(i, n) }, 2)

  /** A repository `r` with table `t` (ids 1..100, key `id`) and two commits. */
  private def setup(): Unit = {
    write(data((1 to 90).map(i => (i, s"n$i")): _*), "r.t", "primaryKey" -> "id", "message" -> "first")
    write(data((91 to 100).map(i => (i, s"n$i")): _*), "r.t", "message" -> "second")
  }

  /** Asserts `f` fails with `errorClass` (message mentioning `parts`) and changes nothing observable. */
  private def rejected(errorClass: String, parts: String*)(f: => Any): Unit = {
    val before = repoState("r", "t")
    expectError(errorClass, parts: _*)(f)
    assert(repoState("r", "t") == before, s"the failed $errorClass request changed the repository")
    assert(stagedWrites.isEmpty, s"staging leftovers after a failed write: $stagedWrites")
  }

  test("reading an unknown repository") {
    setup()
    rejected(ErrorClass.RepositoryNotFound, "'nope'")(read("nope.t").collect())
    rejected(ErrorClass.RepositoryNotFound, "'nope'")(read("nope.t", "ref" -> "main").collect())
    rejected(ErrorClass.RepositoryNotFound, "'nope'")(read("nope.t", "asOf" -> "2020-01-01").collect())
    assert(!engine.repositoryExists("nope"))
  }

  test("reading an unknown table, at the head and at an older version") {
    setup()
    rejected(ErrorClass.TableNotFound, "'missing'", "'r'")(read("r.missing").collect())
    rejected(ErrorClass.TableNotFound, "'missing'")(read("r.missing", "ref" -> "main~1").collect())
  }

  test("reading an unknown ref, a ref past the root, and conflicting version options") {
    setup()
    rejected(ErrorClass.RefNotFound, "'nope'")(read("r.t", "ref" -> "nope").collect())
    rejected(ErrorClass.RefNotFound, "'nope~1'")(read("r.t", "ref" -> "nope~1").collect())
    rejected(ErrorClass.ImageNotFound, "past the root")(read("r.t", "ref" -> "main~5").collect())
    rejected(ErrorClass.InvalidOption, "'ref'")(read("r.t", "ref" -> "main", "image" -> headHash("r").get).collect())
    rejected(ErrorClass.InvalidRevision, "'yesterday'")(read("r.t", "asOf" -> "yesterday").collect())
    rejected(ErrorClass.ImageNotFound, "no commit at or before")(read("r.t", "asOf" -> "2000-01-01").collect())
    // an ancestry step without a count is malformed, not an unknown ref
    rejected(ErrorClass.InvalidRevision, "'main~-1'", "malformed ancestry step")(read("r.t", "ref" -> "main~-1").collect())
    // a time is looked up along a branch: with a tag or an ancestry spec it is not "a missing branch"
    engine.refs.createTag("r", "v1", Revision.DefaultBranch)
    for (ref <- Seq("v1", "main~1"))
      rejected(ErrorClass.InvalidRevision, s"'$ref'", "is not a branch")(read("r.t", "ref" -> ref, "asOf" -> "2099-01-01").collect())
    rejected(ErrorClass.RefNotFound, "'nope'")(read("r.t", "ref" -> "nope", "asOf" -> "2099-01-01").collect())
  }

  test("reading an unknown image hash, a full-length unknown hash, and a non-hex image") {
    setup()
    val unknown = (Seq("0000", "ffff", "abcd", "1234").find(p => !engine.history.log("r", Revision.DefaultBranch)
      .exists(_.image.hash.startsWith(p))).get * 16)
    rejected(ErrorClass.RefNotFound, unknown.take(12))(read("r.t", "image" -> unknown.take(12)).collect())
    rejected(ErrorClass.RefNotFound)(read("r.t", "image" -> unknown).collect())
    rejected(ErrorClass.InvalidRevision, "'zzzz'")(read("r.t", "image" -> "zzzz").collect())
    rejected(ErrorClass.InvalidRevision, "'abc'")(read("r.t", "image" -> "abc").collect())
  }

  test("an ambiguous hash prefix is rejected, a longer prefix resolves") {
    setup()
    // cheap metadata-only commits on a side branch until two image hashes share a 4-hex-digit prefix
    val e = engine
    e.refs.createBranch("r", "noise", Revision.DefaultBranch)
    val seen = scala.collection.mutable.HashMap[String, String]()
    e.history.log("r", Revision.DefaultBranch).foreach(l => seen(l.image.hash.take(4)) = l.image.hash)
    var pair: Option[(String, String)] = None
    var i = 0
    while (pair.isEmpty && i < 5000) {
      i += 1
      val h = e.commit("r", "noise", headHash("r", "noise"), Map.empty, "test", s"noise $i").image.hash
      seen.get(h.take(4)).foreach(prev => pair = Some(prev -> h))
      seen(h.take(4)) = h
    }
    val (a, b) = pair.getOrElse(fail("no 4-digit prefix collision in 5000 commits"))
    rejected(ErrorClass.AmbiguousRef, a.take(4))(read("r.t", "image" -> a.take(4)).collect())
    val common = a.zip(b).takeWhile { case (x, y) => x == y }.size
    assert(read("r.t", "image" -> a.take(common + 1)).count() == 100)
  }

  test("invalid repository and table names, on read and on write") {
    setup()
    val bad = Seq("a/b.t" -> "a/b", "a..b" -> "a..b", "repo.ta ble" -> "ta ble", "r.t.x" -> "r.t.x", "r" -> "'r'",
      ".t" -> "repository name", "1r.t" -> "1r")
    bad.foreach { case (path, mention) =>
      rejected(ErrorClass.InvalidName, mention)(read(path).collect())
      rejected(ErrorClass.InvalidName, mention)(write(data((1, "x")), path, "primaryKey" -> "id"))
    }
    assert(engine.repositories() == Seq("r"))
  }

  test("appending data with another schema") {
    setup()
    val other = frame(new StructType().add("id", IntegerType).add("label", StringType), Seq(Row(500, "x")))
    rejected(ErrorClass.SchemaMismatch, "name", "label", "overwrite")(write(other, "r.t"))
    val wider = frame(schema.add("extra", DoubleType), Seq(Row(500, "x", 1.0)))
    rejected(ErrorClass.SchemaMismatch, "extra")(write(wider, "r.t"))
    val retyped = frame(new StructType().add("id", LongType).add("name", StringType), Seq(Row(500L, "x")))
    rejected(ErrorClass.SchemaMismatch)(write(retyped, "r.t"))
    rejected(ErrorClass.SchemaMismatch, "key")(write(data((500, "x")), "r.t", "primaryKey" -> "name"))
  }

  test("null primary key values, on a new table and on an existing one") {
    setup()
    rejected(ErrorClass.NullPrimaryKey, "id", "Nothing was committed")(
      write(data((1, "a"), (null, "b")), "r2.t", "primaryKey" -> "id"))
    assert(!engine.repositoryExists("r2"))
    rejected(ErrorClass.NullPrimaryKey, "id")(write(data((500, "a"), (null, "b")), "r.t"))
    rejected(ErrorClass.NullPrimaryKey, "id")(write(data((5, "a"), (null, "b")), "r.t", "upsert" -> "true"))
    rejected(ErrorClass.NullPrimaryKey, "id")(overwrite(data((1, "a"), (null, "b")), "r.t"))
  }

  test("duplicate keys inside one write") {
    setup()
    rejected(ErrorClass.DuplicateKey, "id=7")(write(data((7, "a"), (7, "b")), "r2.t", "primaryKey" -> "id"))
    assert(!engine.repositoryExists("r2"))
    rejected(ErrorClass.DuplicateKey, "id=500")(write(data((500, "a"), (501, "b"), (500, "c")), "r.t"))
    rejected(ErrorClass.DuplicateKey, "id=5")(write(data((5, "a"), (5, "b")), "r.t", "upsert" -> "true"))
    rejected(ErrorClass.DuplicateKey, "id=3")(overwrite(data((3, "a"), (3, "a")), "r.t"))
  }

  test("primaryKey naming a missing column") {
    setup()
    rejected(ErrorClass.MissingKeyColumn, "nope", "id, name")(write(data((1, "a")), "r2.t", "primaryKey" -> "nope"))
    assert(!engine.repositoryExists("r2"))
    rejected(ErrorClass.MissingKeyColumn, "nope")(write(data((1, "a")), "r.u", "primaryKey" -> "id,nope"))
    rejected(ErrorClass.MissingKeyColumn, "nope")(overwrite(data((1, "a")), "r.t", "primaryKey" -> "nope"))
  }

  test("writing to a tag or to a missing branch") {
    setup()
    engine.refs.createTag("r", "v1", Revision.DefaultBranch)
    rejected(ErrorClass.ImmutableRef, "'v1'", "tag")(write(data((500, "x")), "r.t", "branch" -> "v1"))
    rejected(ErrorClass.ImmutableRef, "'v1'")(overwrite(data((500, "x")), "r.t", "branch" -> "v1"))
    rejected(ErrorClass.RefNotFound, "'dev'")(write(data((500, "x")), "r.t", "branch" -> "dev"))
    rejected(ErrorClass.InvalidName, "branch")(write(data((500, "x")), "r.t", "branch" -> "a..b"))
    engine.refs.createLock("r", "rep", "q3", Revision.DefaultBranch)
    rejected(ErrorClass.ImmutableRef, "'rep:q3'", "lock")(write(data((500, "x")), "r.t", "branch" -> "rep:q3"))
    rejected(ErrorClass.InvalidName, "branch")(write(data((500, "x")), "r.t", "branch" -> "rep:q4"))
  }

  test("appending an existing key without upsert, and an invalid upsert value") {
    setup()
    rejected(ErrorClass.KeyExists, "id=42", "upsert")(write(data((500, "new"), (42, "again")), "r.t"))
    rejected(ErrorClass.InvalidOption, "'maybe'")(write(data((500, "new")), "r.t", "upsert" -> "maybe"))
    // the same data is accepted as an upsert
    write(data((500, "new"), (42, "again")), "r.t", "upsert" -> "true")
    assert(read("r.t").count() == 101 && logSize("r") == 3)
    assert(read("r.t").filter("id = 42").collect().toSeq == Seq(Row(42, "again")))
  }

  test("reserved column names and column types that cannot identify rows") {
    setup()
    val reserved = frame(new StructType().add("id", IntegerType).add("_vdup", IntegerType), Seq(Row(1, 1)))
    rejected(ErrorClass.SchemaMismatch, "_vdup", "reserved")(write(reserved, "r.u", "primaryKey" -> "id"))
    val arrays = frame(new StructType().add("id", ArrayType(IntegerType)).add("v", StringType), Seq(Row(Seq(1), "a")))
    rejected(ErrorClass.SchemaMismatch, "'id'", "cannot be a key")(write(arrays, "r.u", "primaryKey" -> "id"))
    val maps = frame(new StructType().add("m", MapType(StringType, IntegerType)).add("v", StringType), Seq(Row(Map("a" -> 1), "a")))
    rejected(ErrorClass.SchemaMismatch, "'m'", "primary key")(write(maps, "r.u"))
    assert(engine.tableOption("r", headHash("r").get, "u").isEmpty)
  }

  /**
   * BUG: column names containing '.' are accepted by a first write but every later append, upsert or
   * overwrite fails with Spark's UNRESOLVED_COLUMN, because the write path builds columns with
   * `functions.col(name)`, which parses dots as struct-field access (ChangeSets.inDiffLayout / append /
   * overwrite / appendHidden / overwriteHidden, Validation.check, CommitPlanner.withDup and
   * writeSnapshot, Routing.fragmentOf). A dotted key column or a key-less table fails even on the
   * first write.
   */
  test("column names with dots are valid input: append, upsert and overwrite work") {
    val s = new StructType().add("id", IntegerType).add("a.b", StringType)
    write(frame(s, (1 to 60).map(i => Row(i, s"x$i"))), "r.dots", "primaryKey" -> "id")
    assert(read("r.dots").count() == 60)
    locally {
      write(frame(s, Seq(Row(100, "new"))), "r.dots")
      write(frame(s, Seq(Row(3, "up"))), "r.dots", "upsert" -> "true")
      overwrite(frame(s, Seq(Row(3, "up"), Row(100, "new"))), "r.dots")
      assertReads(read("r.dots"), Seq(Row(3, "up"), Row(100, "new")), "dotted column")
      val k = new StructType().add("k.k", IntegerType).add("v", StringType)
      write(frame(k, Seq(Row(1, "a"))), "r.dotkey", "primaryKey" -> "k.k")
      write(frame(k, Seq(Row(1, "a"), Row(1, "a"))), "r.dotless")
      write(frame(k, Seq(Row(1, "a"))), "r.dotless")
      assert(read("r.dotless").count() == 3)
    }
  }

  /**
   * BUG: TableLayout.create accepts key-less tables whose columns are binary, arrays or structs (it
   * only requires them to be orderable), but FragmentWriter computes each object's first key with
   * Values.fromInternal over all key columns - the whole row for a key-less table - which throws
   * IllegalArgumentException("No canonical value for BinaryType") inside the write task. Either reject
   * such tables up front with SCHEMA_MISMATCH or encode those bounds.
   */
  test("a key-less table with binary, array or struct columns works or is rejected up front") {
    setup()
    val tables = Seq(
      "kb" -> frame(new StructType().add("a", StringType).add("b", BinaryType), Seq(Row("x", Array[Byte](1)), Row("x", Array[Byte](1)))),
      "ka" -> frame(new StructType().add("a", StringType).add("b", ArrayType(IntegerType)), Seq(Row("x", Seq(1)), Row("x", Seq(1)))),
      "ks" -> frame(new StructType().add("a", StringType).add("b", new StructType().add("p", IntegerType)),
        Seq(Row("x", Row(1)), Row("x", Row(1)))))
    locally {
      tables.foreach { case (name, df) =>
        val before = repoState("r", "t")
        scala.util.Try(write(df, s"r.$name")) match {
          case scala.util.Success(_) =>
            write(df, s"r.$name")
            assert(read(s"r.$name").count() == 4, s"key-less $name keeps duplicates")
          case scala.util.Failure(e) =>
            assert(versionedCause(e).exists(_.errorClass == ErrorClass.SchemaMismatch), s"$name failed with $e")
            assert(repoState("r", "t") == before)
        }
      }
    }
  }

  /**
   * BUG (silent corruption): internal column names are not reserved. A user column `_vfrag` is
   * overwritten with the fragment index by CommitPlanner.writeSnapshot / writeDiffs
   * (`withColumn(FragmentWriter.FragColumn, ...)`); a key-less table's user column `_vrowid` reads back
   * as garbage because RowIdScanBuilder.build treats any required field named `_vrowid` as the row-id
   * metadata column; `_vrn`/`_vbase` make ChangeSets.appendHidden fail with AMBIGUOUS_REFERENCE.
   */
  test("user columns named like internal columns round-trip intact or are rejected up front") {
    val cases = Seq(
      ("vf", new StructType().add("id", IntegerType).add("_vfrag", StringType), Seq("primaryKey" -> "id")),
      ("rid", new StructType().add("_vrowid", IntegerType).add("b", StringType), Nil),
      ("vrn", new StructType().add("_vrn", IntegerType).add("_vbase", StringType), Nil))
    locally {
      cases.foreach { case (name, s, opts) =>
        val first = Seq(Row(1, "a"), Row(2, "b"))
        scala.util.Try(write(frame(s, first), s"r.$name", opts: _*)) match {
          case scala.util.Success(_) =>
            write(frame(s, Seq(Row(3, "c"))), s"r.$name")
            assertReads(read(s"r.$name"), first :+ Row(3, "c"), s"column names of $name")
          case scala.util.Failure(e) =>
            assert(versionedCause(e).exists(_.errorClass == ErrorClass.SchemaMismatch), s"$name failed with $e")
        }
      }
    }
  }

  /** BUG: Validation.check aggregates `count(...).as("count")`, which clashes with a key column named `count`. */
  test("a primary key column named count") {
    val s = new StructType().add("count", IntegerType).add("v", StringType)
    locally {
      write(frame(s, (1 to 10).map(i => Row(i, s"x$i"))), "r.cnt", "primaryKey" -> "count")
      write(frame(s, Seq(Row(11, "y"))), "r.cnt")
      assert(read("r.cnt").count() == 11)
    }
  }
}
