package versioned.spark.catalog

import org.apache.spark.sql.Row
import versioned.core.{ErrorClass, Revision}
import versioned.spark.tx.OpenTransactions

/**
 * Multi-table transactions driven by SQL (what a Spark Connect client sends): begin_transaction returns a
 * token; transaction_write / transaction_upsert / transaction_delete_where take their rows from a view;
 * transaction_read gives the transaction's view of a table as a temporary view; commit_transaction records
 * one image, abort_transaction nothing. Unknown, ended and foreign tokens are TRANSACTION_CLOSED.
 */
class TransactionProcedureSuite extends CatalogSuiteBase {
  private def one(q: String): Row = { val rows = sql(q).collect(); assert(rows.length == 1, q); rows.head }
  private def begin(args: String = ""): String = one(s"CALL c.system.begin_transaction('r'$args)").getAs[String]("token")
  private def view(name: String, rows: Row*): Unit =
    spark.createDataFrame(java.util.List.of(rows: _*), spark.table("c.r.t").schema).createOrReplaceTempView(name)
  private def closed(q: String, parts: String*): Unit =
    expectError(ErrorClass.TransactionClosed, parts: _*)(failsWithoutCommit("r")(sql(q).collect()))

  test("write, upsert, delete_where and read in one transaction; commit_transaction records one image") {
    keyedTable((1, "a"), (2, "b"), (3, "c"))
    sql("CREATE TABLE c.r.u (id INT, v STRING, PRIMARY KEY (id))")
    sql("INSERT INTO c.r.u VALUES (1, 'x')")
    val start = headOf("r").get
    val state = one("CALL c.system.begin_transaction(repository => 'r', message => 'load', author => 'etl')")
    val token = state.getAs[String]("token")
    assert(state.getAs[String]("branch") == "main" && state.getAs[String]("base") == start && state.getAs[Boolean]("open"))
    view("new_u", Row(1, "X"), Row(2, "y"))
    view("more_t", Row(7, "g"), Row(8, "h"))
    one(s"CALL c.system.transaction_write(token => '$token', table => 'u', view => 'new_u', mode => 'overwrite')")
    val after = one(s"CALL c.system.transaction_upsert(token => '$token', table => 't', view => 'more_t')")
    assert(after.getAs[scala.collection.Seq[String]]("changed_tables") == Seq("t", "u") && after.getAs[String]("commit") == null)
    assert(one(s"CALL c.system.transaction_delete_where('$token', 't', 'id >= 3 AND id < 8')").getLong(0) == 2L)
    val read = one(s"CALL c.system.transaction_read('$token', 't')").getString(0)
    assert(sorted(sql(s"SELECT * FROM $read")) == Seq(Row(1, "a"), Row(2, "b"), Row(8, "h")))
    assert(headOf("r").get == start && sorted(sql("SELECT id FROM c.r.t")).size == 3, "nothing visible before the commit")
    val done = one(s"CALL c.system.commit_transaction('$token')")
    assert(!done.getAs[Boolean]("open") && done.getAs[String]("commit") == headOf("r").get)
    val image = engine.history.show("r", Revision.Spec("main")).image
    assert(image.parents == Seq(start) && image.message == "load" && image.author == "etl")
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a"), Row(2, "b"), Row(8, "h")))
    assert(sorted(sql("SELECT * FROM c.r.u")) == Seq(Row(1, "X"), Row(2, "y")))
    assert(sorted(sql(s"SELECT * FROM $read")).size == 3, "the read view stays valid after the commit")
    assert(one(s"CALL c.system.transaction_state('$token')").getAs[String]("commit") == image.hash)
  }

  test("abort_transaction commits nothing; a failed operation leaves the transaction as it was") {
    keyedTable((1, "a"))
    val before = commits("r")
    val token = begin()
    view("dups", Row(5, "p"), Row(5, "q"))
    expectError(ErrorClass.DuplicateKey)(intercept[Throwable](
      sql(s"CALL c.system.transaction_upsert('$token', 't', 'dups')").collect()))
    expectError(ErrorClass.InvalidOption, "mode")(intercept[Throwable](
      sql(s"CALL c.system.transaction_write('$token', 't', 'dups', 'upsert')").collect()))
    expectError(ErrorClass.InvalidOption, "view")(intercept[Throwable](
      sql(s"CALL c.system.transaction_write('$token', 't', ' ')").collect()))
    expectError(ErrorClass.TableNotFound)(intercept[Throwable](
      sql(s"CALL c.system.transaction_delete_where('$token', 'nope', 'true')").collect()))
    assert(intercept[Throwable](sql(s"CALL c.system.transaction_write('$token', 't', 'no_such_view')").collect())
      .getMessage.contains("no_such_view"))
    assert(one(s"CALL c.system.transaction_state('$token')").getAs[scala.collection.Seq[String]]("changed_tables").isEmpty)
    assert(one(s"CALL c.system.transaction_delete_where('$token', 't', 'true')").getLong(0) == 1L)
    assert(!one(s"CALL c.system.abort_transaction('$token')").getAs[Boolean]("open"))
    assert(commits("r") == before && sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a")))
    closed(s"CALL c.system.commit_transaction('$token')", "aborted")
    closed(s"CALL c.system.transaction_read('$token', 't')", "aborted")
  }

  test("unknown, ended and other sessions' tokens are TRANSACTION_CLOSED; a conflict ends the transaction") {
    keyedTable((1, "a"))
    view("rows", Row(2, "b"))
    closed("CALL c.system.transaction_upsert('no-such-token', 't', 'rows')", "no-such-token")
    closed("CALL c.system.commit_transaction('')")
    val token = begin()
    val other = spark.newSession()
    expectError(ErrorClass.TransactionClosed)(failsWithoutCommit("r")(
      other.sql(s"CALL c.system.commit_transaction('$token')").collect()))
    one(s"CALL c.system.transaction_upsert('$token', 't', 'rows')")
    sql("INSERT INTO c.r.t VALUES (2, 'concurrent')") // the key the transaction upserted: a real conflict
    expectError(ErrorClass.RefConflict, "Nothing of the transaction was committed")(
      failsWithoutCommit("r")(sql(s"CALL c.system.commit_transaction('$token')").collect()))
    assert(!one(s"CALL c.system.transaction_state('$token')").getAs[Boolean]("open"))
    closed(s"CALL c.system.transaction_upsert('$token', 't', 'rows')", "commit failed")
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a"), Row(2, "concurrent")))
  }

  test("a transaction no call used for the lease timeout is aborted, and its token forgotten") {
    keyedTable((1, "a"))
    view("rows", Row(2, "b"))
    val token = begin()
    one(s"CALL c.system.transaction_upsert('$token', 't', 'rows')")
    val tx = OpenTransactions(token, spark)
    OpenTransactions.sweep(System.currentTimeMillis() + OpenTransactions.IdleMs + 1000)
    assert(!tx.isOpen)
    closed(s"CALL c.system.commit_transaction('$token')", token)
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a")))
  }
}
