package versioned.spark.governance

import versioned.core.ErrorClass
import versioned.spark.api.VersionedApi
import versioned.spark.catalog.CatalogSuiteBase

/**
 * A row predicate required by a protected branch is evaluated on the rows a merge changes only, when the check (as
 * defined now) passed on the branch's head and the predicate is row-local; else on the whole table. The verdict,
 * failing count and sample keys are the same either way.
 */
class ChangedRowsCheckSuite extends CatalogSuiteBase {
  private def main: String = engine.defaultBranch("r")
  private def merge() = VersionedApi.merge(spark, null, "r", "dev", main, "fail", "auto", false, null, null, null, false)
  /** Runs `f`; returns how many predicate evaluations read the changed rows only. */
  private def counted(f: => Any): Long = {
    val before = CheckRunner.changedOnly.get()
    f
    CheckRunner.changedOnly.get() - before
  }

  test("a row predicate gate reads only the merge's changed rows once the head passed; same verdicts as a whole evaluation") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.orders (id INT, price INT, PRIMARY KEY (id))")
    sql(s"INSERT INTO c.r.orders SELECT id, id % 50 FROM range(1, 2001)")
    sql("CALL c.system.add_check(repository => 'r', name => 'positive', table => 'orders', expression => 'price >= 0')")
    sql(s"CALL c.system.protect_branch(repository => 'r', pattern => '$main', checks => 'positive')")
    sql("CALL c.system.create_branch('r', 'dev')")

    // the head has no recorded pass: the first merge evaluates the whole table
    sql("INSERT INTO c.r.`orders@dev` VALUES (5001, 1)")
    assert(counted(assert(merge().status == "merged")) == 0)
    // now the head passed (the gate recorded it): the next merges read only what they change
    sql("UPDATE c.r.`orders@dev` SET price = 7 WHERE id = 10")
    sql("INSERT INTO c.r.`orders@dev` VALUES (5002, 2)")
    assert(counted(assert(merge().status == "merged")) == 1)
    assert(sql("SELECT price FROM c.r.orders WHERE id IN (10, 5002) ORDER BY id").collect().map(_.getInt(0)).toSeq == Seq(7, 2))

    // a bad changed row fails with the same count and keys as on the whole table; nothing moves
    sql("UPDATE c.r.`orders@dev` SET price = -1 WHERE id IN (20, 30)")
    sql("DELETE FROM c.r.`orders@dev` WHERE id = 40")
    val n = counted(expectError(ErrorClass.CheckFailed, "'positive' found 2 failing row(s)", "20", "30")(
      failsWithoutCommit("r", main)(merge())))
    assert(n == 1)
    val whole = sql("CALL c.system.run_checks(repository => 'r', ref => 'dev')").collect().head
    assert(whole.getAs[String]("status") == "fail" && whole.getAs[Long]("failing_rows") == 2L)

    // a predicate that is not row-local (not deterministic) is evaluated on the whole table
    sql("UPDATE c.r.`orders@dev` SET price = 1 WHERE price < 0")
    sql("CALL c.system.add_check(repository => 'r', name => 'fuzzy', table => 'orders', expression => 'price + rand() >= 0')")
    sql(s"CALL c.system.protect_branch(repository => 'r', pattern => '$main', checks => 'positive,fuzzy')")
    assert(counted(assert(merge().status == "merged")) == 1) // positive only; fuzzy never passed on the head before
    sql("INSERT INTO c.r.`orders@dev` VALUES (5003, 3)")
    val together = CheckRunner.evaluatedTogether.get()
    assert(counted(assert(merge().status == "merged")) == 1) // positive on changed rows; fuzzy whole
    assert(CheckRunner.evaluatedTogether.get() == together + 1, "the two predicates of one table are evaluated together")
    // evaluated together, each predicate reports its own count and keys (on the changed rows, on the whole table)
    sql("UPDATE c.r.`orders@dev` SET price = -3 WHERE id IN (11, 12, 13)")
    expectError(ErrorClass.CheckFailed, "2 check(s)", "'positive' found 3 failing row(s)", "'fuzzy' found 3 failing row(s)",
      "11", "12", "13")(failsWithoutCommit("r", main)(merge()))
    assert(CheckRunner.evaluatedTogether.get() == together + 2)
    sql("UPDATE c.r.`orders@dev` SET price = 3 WHERE id IN (11, 12, 13)")

    // a check added again (a new definition) does not build on runs of the old one
    sql("CALL c.system.add_check(repository => 'r', name => 'positive', table => 'orders', expression => 'price > 0')")
    sql("INSERT INTO c.r.`orders@dev` VALUES (5004, 4)")
    val e = expectError(ErrorClass.CheckFailed, "'positive'")(failsWithoutCommit("r", main)(merge()))
    assert(e.getMessage.contains("failing row(s)")) // rows with price 0 in the unchanged part of the table
  }
}
