package versioned.spark.tx

import org.apache.spark.sql.Row
import versioned.core.{ErrorClass, Revision}

/**
 * A transaction meets commits made while it ran: commits to other tables are kept (the transaction lands
 * on top of them, as one image), a commit to a table it changes makes its commit fail with REF_CONFLICT,
 * and then nothing of it lands.
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

  test("a concurrent commit to a table the transaction changes: REF_CONFLICT and nothing of it lands") {
    seed()
    val tx = Transaction.begin(spark, "r")
    try {
      tx.upsert(frame(keyed, Seq(Row(1, "tx"))), "a")
      tx.write(frame(keyed, rowsOf(1 to 5, "n")), "n", primaryKey = "id")
      tx.upsert(frame(keyed, Seq(Row(2, "tx"))), "b")
      write(frame(keyed, Seq(Row(3, "other"))), "r.b", "upsert" -> "true") // another writer changes b
      val before = everything()
      expectError(ErrorClass.RefConflict, "b", "Nothing of the transaction was committed")(tx.commit())
      assert(everything() == before, "branch, log and tables are as the other writer left them")
      assert(engine.tableOption("r", headHash("r").get, "n").isEmpty)
      assert(!tx.isOpen, "a failed commit ends the transaction")
      expectError(ErrorClass.TransactionClosed, "commit failed")(tx.commit())
    } finally tx.close()
  }

  test("a branch reset while the transaction runs is a conflict when it changed a table the transaction writes") {
    seed()
    val tx = Transaction.begin(spark, "r")
    try {
      tx.upsert(frame(keyed, Seq(Row(1, "tx"))), "a")
      engine.refs.resetBranch("r", "main", Revision.Spec("main~2")) // drops c, then b: a is as the transaction saw it
      val reset = headHash("r").get
      val result = tx.commit().get
      assert(result.image.parents == Seq(reset) && engine.tables("r", result.image.hash).map(_.name).sorted == Seq("a"))
      val other = Transaction.begin(spark, "r")
      other.upsert(frame(keyed, Seq(Row(2, "x"))), "a")
      engine.refs.resetBranch("r", "main", Revision.Spec("main~1"))
      expectError(ErrorClass.RefConflict, "a")(other.commit())
    } finally tx.close()
  }
}
