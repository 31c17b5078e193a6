package versioned.spark
package write

import versioned.spark.session.VersionedOptions

import java.io.File
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types._
import versioned.core.{Engine, ErrorClass, WarehouseConfig}

/**
 * The driver-side commit of small upserts: it runs no Spark job besides the write itself, rejects bad
 * input with the distributed path's error classes and messages (committing nothing, leaving no staging
 * data), and hands everything it does not cover to the distributed path with the same result.
 *
 * Both paths write one DIFF per fragment here (`sharedDiffMaxRows` = 0, `tailFragments` = false), so that they make the same table version:
 * the driver's shared DIFF (`SharedDiffSuite`) holds the same rows in another form.
 */
class LocalCommitFallbackSuite extends VersionedTestBase {
  override protected def extraConf: Map[String, String] =
    super.extraConf ++ Map(versioned.spark.session.Setting.SharedDiffMaxRows.key -> "0",
      versioned.spark.session.Setting.TailFragments.key -> "false")
  private val schema = new StructType().add("v", StringType).add("id", IntegerType).add("del", BooleanType)
  private val Distributed = VersionedOptions.ConfLocalCommitMaxRows -> "0"
  private val NoCompaction = Seq(VersionedOptions.ConfMaxChain -> "1000", VersionedOptions.ConfMaxDiffRatio -> "1000",
    VersionedOptions.ConfConsolidateAfter -> "1000")

  private def rows(ids: Range, del: Int => Any = _ => false): Seq[Row] = ids.map(i => Row(s"v$i", i, del(i)))
  private def table(ids: Range): Seq[Row] = ids.map(i => Row(s"v$i", i))
  private def upsert(df: DataFrame, t: String, opts: (String, String)*): Unit =
    write(df, t, Seq("upsert" -> "true", "deleteColumn" -> "del") ++ opts: _*)

  /** Table `r.t`: ids 1..200 in several fragments. */
  private def setup(opts: (String, String)*): Unit =
    write(frame(schema, rows(1 to 200)).drop("del"), "r.t", ("primaryKey" -> "id") +: opts: _*)

  test("a small upsert with deletes runs one Spark job, the write; the distributed path runs more") {
    withConf(NoCompaction: _*) {
      setup()
      val changes = frame(schema, rows(150 to 260, i => i % 10 == 0), 4)
      assert(jobsOf(upsert(changes, "r.t")) == 1)
      val expected = table(1 to 260).filter(r => r.getInt(1) < 150 || r.getInt(1) % 10 != 0)
      assertReads(read("r.t"), expected, "after the fast commit")
      engine.refs.createBranch("r", "b", versioned.core.Revision.Spec("main~1"))
      assert(withConf(Distributed)(jobsOf(upsert(changes, "r.t", "branch" -> "b"))) > 1)
      val (main, b) = (engine.branchHeadOption("r", "main").get, engine.branchHeadOption("r", "b").get)
      assert(engine.table("r", main, "t").hash == engine.table("r", b, "t").hash)
    }
  }

  /** `f` fails the same way on both paths, commits nothing and leaves no staging data. */
  private def sameRejection(errorClass: String, parts: String*)(f: => Any): Unit = {
    val before = repoState("r", "t")
    var fastMessage = ""
    assert(jobsOf { fastMessage = expectError(errorClass, parts: _*)(f).getMessage } == 1, "checked on the driver")
    val distMessage = withConf(Distributed)(expectError(errorClass, parts: _*)(f).getMessage)
    assert(fastMessage == distMessage)
    assert(repoState("r", "t") == before, s"the failed $errorClass write changed the repository")
    assert(stagedWrites.isEmpty, s"staging leftovers: $stagedWrites")
  }

  test("bad input on the fast path: same errors as the distributed path, nothing committed") {
    setup()
    sameRejection(ErrorClass.NullPrimaryKey, "(id)", "Nothing was committed") {
      upsert(frame(schema, rows(1 to 20) :+ Row("x", null, false) :+ Row("y", 3, false)), "r.t")
    }
    sameRejection(ErrorClass.NullPrimaryKey, "(id)")(upsert(frame(schema, Seq(Row("x", null, true))), "r.t"))
    sameRejection(ErrorClass.DuplicateKey, "2 rows with key (id=7)") {
      upsert(frame(schema, rows(1 to 20) :+ Row("again", 7, true)), "r.t")
    }
    sameRejection(ErrorClass.DuplicateKey, "3 rows with key (id=500)") {
      write(frame(schema, Seq.fill(3)(Row("x", 500, null))).drop("del"), "r.t", "upsert" -> "true")
    }
    sameRejection(ErrorClass.SchemaMismatch, "deleteColumn 'gone'") {
      write(frame(schema, rows(1 to 3)), "r.t", "upsert" -> "true", "deleteColumn" -> "gone")
    }
    val intMarker = new StructType().add("v", StringType).add("id", IntegerType).add("del", IntegerType)
    sameRejection(ErrorClass.SchemaMismatch, "'del'", "boolean")(upsert(frame(intMarker, Seq(Row("x", 1, 1))), "r.t"))
    sameRejection(ErrorClass.SchemaMismatch, "key")(upsert(frame(schema, rows(1 to 3)), "r.t", "primaryKey" -> "v"))
  }

  test("a composite key with a null part, and duplicates of a composite key") {
    val s = new StructType().add("k", StringType).add("n", IntegerType).add("del", BooleanType)
    write(frame(s, Seq(Row("a", 1, null))).drop("del"), "r.t", "primaryKey" -> "k,n")
    sameRejection(ErrorClass.NullPrimaryKey, "(k, n)")(upsert(frame(s, Seq(Row("a", null, false))), "r.t"))
    sameRejection(ErrorClass.DuplicateKey, "(k=b, n=2)")(upsert(frame(s, Seq(Row("b", 2, true), Row("b", 2, false))), "r.t"))
  }

  /** Commits `changes` with `conf` in a fresh warehouse and with the distributed path in another: same table. */
  private def sameAsDistributed(conf: Seq[(String, String)], changes: => DataFrame, expected: Seq[Row],
                                minJobs: Int = 1): Unit = {
    val dirs = Seq(new File(warehouse, s"a${System.nanoTime()}"), new File(warehouse, s"b${System.nanoTime()}"))
    dirs.foreach(d => setup("warehouse" -> d.getAbsolutePath))
    val jobs = withConf(conf: _*)(jobsOf(upsert(changes, "r.t", "warehouse" -> dirs(0).getAbsolutePath)))
    assert(jobs >= minJobs, s"expected the distributed path ($jobs jobs)")
    withConf(Distributed)(upsert(changes, "r.t", "warehouse" -> dirs(1).getAbsolutePath))
    val hashes = dirs.map { d =>
      val e = Engine(WarehouseConfig.embedded(d.getAbsolutePath))
      e.table("r", e.branchHeadOption("r", "main").get, "t").hash
    }
    assert(hashes.distinct.size == 1, s"table hashes differ: $hashes")
    dirs.foreach(d => assertReads(read("r.t", "warehouse" -> d.getAbsolutePath), expected, s"rows in $d"))
    assert(stagedWrites.isEmpty && dirs.forall(d => !new File(d, "_staging/writes").exists() ||
      new File(d, "_staging/writes").list().isEmpty))
  }

  private val expected = table(1 to 240).filter(r => r.getInt(1) <= 100 || r.getInt(1) % 7 != 0)
  private def changes: DataFrame = frame(schema, rows(101 to 240, i => i % 7 == 0), 3)

  test("over the row threshold, over the byte threshold, or one task over its share: the distributed path") {
    withConf(NoCompaction: _*) {
      sameAsDistributed(Seq(VersionedOptions.ConfLocalCommitMaxRows -> "100"), changes, expected, minJobs = 2)
      sameAsDistributed(Seq(VersionedOptions.ConfLocalCommitMaxBytes -> "2k"), changes, expected, minJobs = 2)
      // skewed partitions: one task keeps its rows in memory, the other stages a file; the kept rows are staged too
      val skewed = spark.createDataFrame(spark.sparkContext.parallelize(rows(101 to 240, i => i % 7 == 0), 1)
        .mapPartitions(_.toSeq.zipWithIndex.map { case (r, i) => (if (i < 10) 0 else 1) -> r }.iterator)
        .partitionBy(new org.apache.spark.HashPartitioner(2)).values, schema)
      sameAsDistributed(Seq(VersionedOptions.ConfLocalCommitMaxRows -> "200"), skewed, expected, minJobs = 2)
      sameAsDistributed(Nil, changes, expected)
    }
  }

  test("upserts the fast path does not cover: a new table, a key-less table, a changed schema") {
    upsert(frame(schema, rows(1 to 30, i => i > 25)), "r.n", "primaryKey" -> "id")
    assertReads(read("r.n"), table(1 to 25), "first write with upsert and deleteColumn")
    upsert(frame(schema, rows(20 to 40, i => i % 2 == 0)), "r.n")
    assertReads(read("r.n"), table(1 to 40).filter(r => r.getInt(1) < 20 || r.getInt(1) % 2 == 1), "second write")
    val s = new StructType().add("a", StringType).add("b", IntegerType)
    write(frame(s, Seq(Row("x", 1), Row("x", 1))), "r.k")
    val before = repoState("r", "k")
    expectError(ErrorClass.InvalidOption, "An upsert needs a primary key")(
      write(frame(s, Seq(Row("x", 1), Row("y", 2))), "r.k", "upsert" -> "true"))
    assert(repoState("r", "k") == before, "an upsert into a key-less table must commit nothing")
    assertReads(read("r.k"), Seq(Row("x", 1), Row("x", 1)), "key-less table unchanged")
    val marked = s.add("del", BooleanType)
    expectError(ErrorClass.Unsupported, "deleteColumn needs a primary key")(
      write(frame(marked, Seq(Row("x", 1, true))), "r.k", "deleteColumn" -> "del"))
    assert(repoState("r", "k") == before, "a deleteColumn write into a key-less table must commit nothing")
    val wider = new StructType().add("v", StringType).add("id", IntegerType).add("w", IntegerType)
    expectError(ErrorClass.SchemaMismatch, "w")(write(frame(wider, Seq(Row("x", 1, 1))), "r.n", "upsert" -> "true"))
    assert(stagedWrites.isEmpty)
  }
}
