package versioned.spark.tx

import org.apache.spark.sql.Row
import versioned.core.{ErrorClass, Revision}

/**
 * A transaction meets commits made while it ran: commits to other tables are kept (the transaction lands
 * on top of them, as one image); commits to other keys of a table it changes are kept too (its net
 * changes of that table are planned again on the new head); a commit to keys it changed makes its commit
 * fail with REF_CONFLICT, and then nothing of it lands.
 */
class TransactionConcurrencySuite extends TxTestBase {
  test("a concurrent commit to another table: the transaction is rebased and both land") {
    seed()
    val start = headHash("r").get
    val tx = Transaction.begin(spark, "r", message = "tx")
    try {
      tx.upsert(frame(keyed, Seq(Row(1, "tx"))), "a")
      tx.deleteWhere("b", "id > 50")
      write(frame(keyless, Seq(Row("other", 9))), "r.c", "message" -> "concurrent") // another writer
      val concurrent = headHash("r").get
      assert(concurrent != start)
      val result = tx.commit().get
      assert(result.image.parents == Seq(concurrent), "one image, on top of the concurrent commit")
      assert(result.changedTables == Seq("a", "b"))
      assert(engine.history.log("r", Revision.Spec("main"), 2).map(_.image.message) == Seq("tx", "concurrent"))
      assert(at("a").contains(Row(1, "tx")) && at("b").size == 50)
      assert(at("c").contains(Row("other", 9)) && at("c").size == 31, "the concurrent change is kept")
    } finally tx.close()
  }

  test("a concurrent commit to other keys of tables the transaction changes: planned again on the new head, all land") {
    seed()
    val tx = Transaction.begin(spark, "r", message = "tx")
    try {
      tx.upsert(frame(keyed, Seq(Row(1, "tx"), Row(61, "tx"))), "a")
      tx.deleteWhere("b", "id > 50")
      tx.write(frame(keyed, rowsOf(1 to 5, "n")), "n", primaryKey = "id")
      tx.upsert(frame(keyed, Seq(Row(2, "tx"))), "a")
      // other writers change other keys of a and b
      write(frame(keyed, Seq(Row(3, "other"), Row(70, "other"))), "r.a", "upsert" -> "true", "message" -> "concurrent a")
      write(frame(keyed, Seq(Row(4, "other"))), "r.b", "upsert" -> "true", "message" -> "concurrent b")
      val concurrent = headHash("r").get
      val result = tx.commit().get
      assert(result.image.parents == Seq(concurrent), "one image, on top of the concurrent commits")
      assert(result.changedTables == Seq("a", "b", "n"))
      assert(engine.history.log("r", Revision.Spec("main"), 3).map(_.image.message) == Seq("tx", "concurrent b", "concurrent a"))
      val tag = Map(1 -> "tx", 2 -> "tx", 3 -> "other")
      assertSameRows(at("a"), (1 to 60).map(i => Row(i, tag.getOrElse(i, s"a$i"))) ++ Seq(Row(61, "tx"), Row(70, "other")), "a")
      assertSameRows(at("b"), (1 to 50).map(i => Row(i, if (i == 4) "other" else s"b$i")), "b")
      assertSameRows(at("n"), rowsOf(1 to 5, "n"), "n")
      assert(!tx.isOpen && tx.committed.contains(result))
    } finally tx.close()
  }

  test("a concurrent commit to keys the transaction changed: REF_CONFLICT and nothing of it lands") {
    seed()
    val tx = Transaction.begin(spark, "r")
    try {
      tx.upsert(frame(keyed, Seq(Row(1, "tx"))), "a")
      tx.write(frame(keyed, rowsOf(1 to 5, "n")), "n", primaryKey = "id")
      tx.upsert(frame(keyed, Seq(Row(2, "tx"))), "b")
      write(frame(keyed, Seq(Row(3, "other"))), "r.a", "upsert" -> "true") // other keys of a: could be replanned
      write(frame(keyed, Seq(Row(2, "other"))), "r.b", "upsert" -> "true") // another writer changes b's key 2
      val before = everything()
      expectError(ErrorClass.RefConflict, "b", "Nothing of the transaction was committed")(tx.commit())
      assert(everything() == before, "branch, log and tables are as the other writer left them")
      assert(engine.tableOption("r", headHash("r").get, "n").isEmpty)
      assert(!tx.isOpen, "a failed commit ends the transaction")
      expectError(ErrorClass.TransactionClosed, "commit failed")(tx.commit())
    } finally tx.close()
  }

  test("a branch reset while the transaction runs: planned again on it unless it changed the transaction's keys") {
    seed()
    val tx = Transaction.begin(spark, "r")
    try {
      tx.upsert(frame(keyed, Seq(Row(1, "tx"))), "a")
      engine.refs.resetBranch("r", "main", Revision.Spec("main~2")) // drops c, then b: a is as the transaction saw it
      val reset = headHash("r").get
      val result = tx.commit().get
      assert(result.image.parents == Seq(reset) && engine.tables("r", result.image.hash).map(_.name).sorted == Seq("a"))
      val same = Transaction.begin(spark, "r")
      same.upsert(frame(keyed, Seq(Row(1, "x"))), "a")
      val other = Transaction.begin(spark, "r")
      other.upsert(frame(keyed, Seq(Row(2, "x"))), "a")
      engine.refs.resetBranch("r", "main", Revision.Spec("main~1")) // a as before the first transaction: key 1 changed
      expectError(ErrorClass.RefConflict, "a")(same.commit())
      val replanned = other.commit().get // key 2 did not change: planned again on the reset head
      assert(replanned.image.parents == Seq(reset))
      assertSameRows(at("a"), (1 to 60).map(i => Row(i, if (i == 2) "x" else s"a$i")), "a")
    } finally tx.close()
  }

  test("a concurrent commit to a key-less table the transaction changes is a conflict (not planned again)") {
    seed()
    val tx = Transaction.begin(spark, "r")
    try {
      tx.deleteWhere("c", "n = 0")
      write(frame(keyless, Seq(Row("z", 7))), "r.c")
      val before = everything()
      expectError(ErrorClass.RefConflict, "c", "key-less")(tx.commit())
      assert(everything() == before)
    } finally tx.close()
  }
}
