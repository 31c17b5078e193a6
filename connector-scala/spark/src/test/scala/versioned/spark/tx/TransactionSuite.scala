package versioned.spark.tx

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types._
import versioned.core.{ErrorClass, Revision}
import versioned.spark.VersionedTestBase

/**
 * Multi-table transactions: one image for every table a transaction changes, operations that build on
 * each other inside it, and all or nothing when anything fails. Default settings (compaction on).
 */
class TransactionSuite extends TxTestBase {
  test("three tables change in one image with one parent") {
    seed()
    val before = headHash("r").get
    val result = Transaction.run(spark, "r", message = "nightly load", author = "etl") { tx =>
      tx.write(frame(keyed, rowsOf(1 to 40, "A")), "a", mode = "overwrite")
      tx.upsert(frame(keyed, Seq(Row(5, "B5"), Row(100, "B100"))), "b")
      assert(tx.deleteWhere("c", "n = 0") == 10)
      assert(tx.changedTables == Seq("a", "b", "c"))
      assert(headHash("r").contains(before), "nothing is visible before the commit")
    }.get
    assert(result.image.parents == Seq(before) && result.changedTables == Seq("a", "b", "c"))
    assert(headHash("r").contains(result.image.hash) && logSize("r") == 4)
    val top = engine.history.log("r", Revision.Spec("main"), 1).head
    assert(top.image.message == "nightly load" && top.image.author == "etl" && top.tablesChanged == Seq("a", "b", "c"))
    assertReads(read("r.a"), rowsOf(1 to 40, "A"), "a overwritten")
    assertReads(read("r.b"), rowsOf(1 to 60, "b").filterNot(_.getInt(0) == 5) ++ Seq(Row(5, "B5"), Row(100, "B100")), "b")
    assertReads(read("r.c"), (1 to 30).filter(_ % 3 != 0).map(i => Row(s"k${i % 5}", i % 3)), "c")
    assertReads(read("r.a", "ref" -> "main~1"), rowsOf(1 to 60, "a"), "the parent is untouched")
  }

  test("an operation builds on the earlier operations of the transaction on the same table") {
    seed()
    val tx = Transaction.begin(spark, "r")
    try {
      tx.upsert(frame(keyed, Seq(Row(1, "new"), Row(2, "new"), Row(200, "new"))), "a")
      assertReads(tx.read("a").filter("v = 'new'"), Seq(Row(1, "new"), Row(2, "new"), Row(200, "new")), "read sees op 1")
      assert(tx.deleteWhere("a", "v = 'new' and id > 1") == 2, "the delete matches the rows the upsert wrote")
      expectError(ErrorClass.KeyExists)(tx.write(frame(keyed, Seq(Row(1, "dup"))), "a"))
      tx.write(frame(keyed, Seq(Row(200, "again"))), "a") // 200 was deleted inside the transaction
      val expected = rowsOf(3 to 60, "a") ++ Seq(Row(1, "new"), Row(200, "again"))
      assertReads(tx.read("a"), expected, "the view after four operations")
      tx.write(tx.read("a").filter("id <= 10"), "a", mode = "overwrite") // an overwrite compares with the view
      assertReads(tx.read("a"), expected.filter(_.getInt(0) <= 10), "after the overwrite")
      tx.write(frame(keyless, Seq(Row("x", 1), Row("x", 1))), "c")
      tx.write(frame(keyless, Seq(Row("x", 1))), "c")
      assert(tx.deleteWhere("c", "k = 'x'") == 3, "key-less appends keep duplicates, also inside a transaction")
      assertReads(read("r.a"), rowsOf(1 to 60, "a"), "the branch does not see the transaction")
      val result = tx.commit().get
      assert(result.changedTables == Seq("a", "c"), "c has new objects (its rows are the same)")
      assertReads(read("r.a"), expected.filter(_.getInt(0) <= 10), "committed")
      assertReads(read("r.c"), at("c", "main~1"), "c has its rows")
    } finally tx.close()
  }

  test("an exception in the middle of a transaction leaves the branch, the log and every table unchanged") {
    seed()
    val before = everything()
    val boom = intercept[IllegalStateException](Transaction.run(spark, "r") { tx =>
      tx.write(frame(keyed, rowsOf(1 to 10, "X")), "a", mode = "overwrite")
      tx.upsert(frame(keyed, Seq(Row(7, "Y"))), "b")
      tx.write(frame(keyed, rowsOf(1 to 5, "new")), "d", primaryKey = "id")
      throw new IllegalStateException("boom")
    })
    assert(boom.getMessage == "boom")
    assert(everything() == before)
    assert(engine.tableOption("r", headHash("r").get, "d").isEmpty)
  }

  test("a failing operation (duplicate key, schema mismatch) fails the transaction block and commits nothing") {
    seed()
    val before = everything()
    expectError(ErrorClass.DuplicateKey)(Transaction.run(spark, "r") { tx =>
      tx.upsert(frame(keyed, Seq(Row(1, "u"))), "a")
      tx.deleteWhere("c", "true")
      tx.write(frame(keyed, Seq(Row(300, "x"), Row(300, "y"))), "b")
    })
    assert(everything() == before)
    expectError(ErrorClass.SchemaMismatch)(Transaction.run(spark, "r") { tx =>
      tx.write(frame(keyed, rowsOf(1 to 3, "z")), "a", mode = "overwrite")
      tx.write(frame(keyed.add("extra", IntegerType), Seq(Row(400, "q", 1))), "b")
    })
    assert(everything() == before)
  }

  test("a failed operation changes nothing in the transaction, which can go on") {
    seed()
    val tx = Transaction.begin(spark, "r")
    try {
      tx.upsert(frame(keyed, Seq(Row(1, "one"))), "a")
      expectError(ErrorClass.NullPrimaryKey)(tx.upsert(frame(keyed, Seq(Row(2, "two"))).selectExpr(
        "cast(null as int) as id", "v"), "a"))
      expectError(ErrorClass.TableNotFound)(tx.deleteWhere("nope", "true"))
      expectError(ErrorClass.InvalidOption)(tx.write(frame(keyed, Nil), "a", mode = "upsert"))
      tx.upsert(frame(keyed, Seq(Row(2, "two"))), "a")
      tx.commit()
      assertReads(read("r.a").filter("id <= 2"), Seq(Row(1, "one"), Row(2, "two")), "both good operations landed")
    } finally tx.close()
  }

  test("a transaction that changes nothing commits nothing") {
    seed()
    val before = everything()
    assert(Transaction.run(spark, "r")(_ => ()).isEmpty)
    assert(Transaction.run(spark, "r") { tx =>
      assert(tx.deleteWhere("a", "id > 1000") == 0)
      tx.write(read("r.b"), "b", mode = "overwrite")
    }.isEmpty)
    assert(everything() == before)
  }

  test("operations after commit or abort raise TRANSACTION_CLOSED") {
    seed()
    val tx = Transaction.begin(spark, "r")
    tx.upsert(frame(keyed, Seq(Row(1, "x"))), "a")
    val committed = tx.commit()
    assert(committed.isDefined && !tx.isOpen && tx.committed == committed)
    expectError(ErrorClass.TransactionClosed, "committed")(tx.upsert(frame(keyed, Seq(Row(2, "x"))), "a"))
    expectError(ErrorClass.TransactionClosed)(tx.read("a"))
    expectError(ErrorClass.TransactionClosed)(tx.commit())
    expectError(ErrorClass.TransactionClosed)(tx.abort())
    tx.close() // closing an ended transaction does nothing
    val aborted = Transaction.begin(spark, "r")
    aborted.deleteWhere("a", "true")
    aborted.abort()
    expectError(ErrorClass.TransactionClosed, "aborted")(aborted.deleteWhere("a", "true"))
    assert(read("r.a").count() == 60)
    val leases = engine.metastore.read { c =>
      val rs = c.createStatement().executeQuery("SELECT count(*) FROM vc_leases"); rs.next(); rs.getInt(1)
    }
    assert(leases == 0, "an ended transaction holds no write lease")
  }

  test("a first load creates the repository and the branch with one image") {
    val result = Transaction.run(spark, "fresh", message = "first load") { tx =>
      assert(tx.base.isEmpty)
      tx.write(frame(keyed, rowsOf(1 to 20, "p")), "p", primaryKey = "id")
      tx.write(frame(keyless, Seq(Row("a", 1))), "q")
      tx.upsert(frame(keyed, Seq(Row(3, "P3"))), "p")
    }.get
    assert(result.image.parents.isEmpty && result.branch == "main" && result.changedTables == Seq("p", "q"))
    assert(engine.defaultBranch("fresh") == "main" && logSize("fresh") == 1)
    assertReads(read("fresh.p"), rowsOf(1 to 20, "p").map(r => if (r.getInt(0) == 3) Row(3, "P3") else r), "p")
  }

  test("a transaction needs a branch: a tag or a missing branch is refused") {
    seed()
    engine.refs.createTag("r", "v1", Revision.Spec("main"))
    expectError(ErrorClass.ImmutableRef)(Transaction.begin(spark, "r", branch = "v1"))
    expectError(ErrorClass.RefNotFound)(Transaction.begin(spark, "r", branch = "nope"))
    engine.refs.createBranch("r", "dev", Revision.Spec("main"))
    Transaction.run(spark, "r", branch = "dev")(_.upsert(frame(keyed, Seq(Row(1, "dev"))), "a"))
    assert(read("r.a", "ref" -> "dev").filter("id = 1").collect().head == Row(1, "dev"))
    assert(read("r.a").filter("id = 1").collect().head == Row(1, "a1"), "main is untouched")
  }

  test("reads of a transaction stay valid after it commits; compaction runs after the commit") {
    seed()
    var view: DataFrame = null
    val result = Transaction.run(spark, "r") { tx =>
      tx.upsert(frame(keyed, rowsOf(1 to 30, "u")), "a") // half the rows: over the DIFF ratio, compacted after
      view = tx.read("a")
    }.get
    assertReads(view, rowsOf(1 to 30, "u") ++ rowsOf(31 to 60, "a"), "the transaction's read after the commit")
    awaitCompaction() // compaction runs off the commit path
    assert(engine.table("r", result.image, "a").compacted.isDefined, "commit-time compaction ran")
    assertReads(read("r.a"), rowsOf(1 to 30, "u") ++ rowsOf(31 to 60, "a"), "head")
  }

  test("the internal option of transaction writes cannot be set by a user") {
    expectError(ErrorClass.InvalidOption, "internal")(
      write(frame(keyed, rowsOf(1 to 3, "x")), "r.a", "primaryKey" -> "id", "versioned.internal.deferred" -> "guess"))
    assert(!engine.repositoryExists("r"))
    seed()
    expectError(ErrorClass.InvalidOption, "internal")(read("r.a", "versioned.internal.deferred" -> "guess").collect())
  }

  test("a new table of a few keyed rows is written by the driver exactly as jobs write it, with the same key rules") {
    val schema = new StructType().add("v", StringType).add("k", StringType).add("n", IntegerType, nullable = false)
    val rows = new scala.util.Random(7L).shuffle((0 until 500).map(i =>
      Row(if (i % 9 == 0) null else s"v$i", Seq("", "a", "\u00e9", "z")(i % 4), i / 4)))
    def load(repo: String): Unit = Transaction.run(spark, repo) { tx =>
      tx.write(frame(schema, rows), "n", primaryKey = "k,n")
      tx.upsert(frame(keyed, rowsOf(1 to 5, "u")), "u", primaryKey = "id")
    }
    import versioned.spark.session.VersionedOptions.{ConfFragmentRows, ConfLocalCommitMaxRows}
    withConf(ConfFragmentRows -> "1000") {
      // the rows stay on the driver, which writes the SNAP: a write's one job (its tasks hand their rows over), no other
      val fast = jobsOf(load("f"))
      val staged = withConf(ConfLocalCommitMaxRows -> "0")(jobsOf(load("d"))) // staged: validated and written by jobs
      assert(fast == 2 && staged > fast, s"jobs: $fast on the driver's path, $staged staged")
    }
    awaitCompaction()
    def table(repo: String, t: String) = engine.tableOption(repo, headHash(repo).get, t).get
    for (t <- Seq("n", "u")) {
      val (f, d) = (table("f", t), table("d", t))
      assert(f.hash == d.hash && f.fragments.size == 1, s"$t: ${f.fragments} vs ${d.fragments}")
      assert(engine.objects(f.fragments.flatMap(_.objects)).size == 1) // the same object id: the same content
    }
    assertReads(read("f.n"), rows, "the driver's SNAP")
    assertReads(read("f.u"), rowsOf(1 to 5, "u"), "the driver's SNAP of an upsert into a new table")
    // bad keys in a new table: the errors of any write, and nothing committed
    val log = logSize("f")
    expectError(ErrorClass.DuplicateKey)(Transaction.run(spark, "f")(
      _.write(frame(keyed, Seq(Row(1, "x"), Row(2, "y"), Row(1, "z"))), "m", primaryKey = "id")))
    expectError(ErrorClass.NullPrimaryKey)(Transaction.run(spark, "f")(
      _.write(frame(keyed, Seq(Row(1, "x"))).selectExpr("cast(null as int) as id", "v"), "m", primaryKey = "id")))
    assert(logSize("f") == log && engine.tableOption("f", headHash("f").get, "m").isEmpty)
    // more rows than a fragment holds: written by jobs, in fragments
    withConf(ConfFragmentRows -> "100")(
      Transaction.run(spark, "f")(_.write(frame(keyed, rowsOf(1 to 250, "w")), "w", primaryKey = "id")))
    assert(table("f", "w").fragments.size >= 2)
    assertReads(read("f.w"), rowsOf(1 to 250, "w"), "a new table of several fragments")
  }
}
