package versioned.spark.governance

import versioned.core.ErrorClass
import versioned.spark.api.VersionedApi
import versioned.spark.catalog.CatalogSuiteBase

/**
 * Checks: validated when added, run on demand and recorded (`$checks`), and required by a protection rule: a
 * merge lands only if they pass on the merged image; a failing or throwing check is CHECK_FAILED and nothing moves.
 */
class CheckGateSuite extends CatalogSuiteBase {
  private def main: String = engine.defaultBranch("r")

  private def repoWithChecks(): Unit = {
    keyedTable(1 -> "a", 2 -> "b")
    sql("CREATE TABLE c.r.orders (id INT, price INT, PRIMARY KEY (id))")
    sql("INSERT INTO c.r.orders VALUES (1, 10), (2, 20)")
    sql("CALL c.system.add_check(repository => 'r', name => 'positive', table => 'orders', expression => 'price >= 0')")
    sql("CALL c.system.add_check(repository => 'r', name => 'no_zz', expression => \"SELECT id FROM t WHERE v = 'zz'\")")
    sql("CALL c.system.create_branch('r', 'dev')")
    sql(s"CALL c.system.protect_branch(repository => 'r', pattern => '$main', checks => 'positive,no_zz')")
  }

  private def merge(source: String = "dev") =
    VersionedApi.merge(spark, null, "r", source, main, "fail", "auto", false, null, null, null, false)

  test("bad check definitions are refused when added, and nothing is added") {
    keyedTable(1 -> "a")
    def invalid(call: String, parts: String*) =
      expectError(ErrorClass.CheckInvalid, parts: _*)(intercept[Throwable](sql(s"CALL c.system.add_check($call)")))
    invalid("repository => 'r', name => 'x', expression => 'SELEC id FROM t'")
    invalid("repository => 'r', name => 'x', expression => 'SELECT * FROM missing_table'")
    invalid("repository => 'r', name => 'x', table => 'missing', expression => 'id > 0'", "missing")
    invalid("repository => 'r', name => 'x', table => 't', expression => 'nope > 0'")
    invalid("repository => 'r', name => 'x', table => 't', expression => 'id + 1'", "boolean")
    invalid("repository => 'r', name => 'x', table => 't', expression => 'id > 0', severity => 'fatal'", "severity")
    assert(sql("CALL c.system.checks('r')").collect().isEmpty)
    expectError(ErrorClass.CheckNotFound)(intercept[Throwable](sql("CALL c.system.remove_check('r', 'x')")))
    // a check asked for by name that does not exist: the checks there are, and how to add one (no protection rule)
    val missing = expectError(ErrorClass.CheckNotFound, "no check 'x'", "none", "add_check")(intercept[Throwable](
      sql("CALL c.system.run_checks(repository => 'r', checks => 'x')").collect()))
    assert(!missing.getMessage.contains("protection rule"), missing.getMessage)
  }

  test("a merge whose merged image passes the required checks lands; every run is recorded in $checks") {
    repoWithChecks()
    sql("INSERT INTO c.r.`orders@dev` VALUES (3, 30)")
    val out = merge()
    assert(out.status == "merged")
    val head = headOf("r", main).get
    val runs = sql("SELECT check, status, image, purpose FROM c.r.`$checks`").collect()
    assert(runs.map(r => (r.getString(0), r.getString(1), r.getString(2))).toSet ==
      Set(("positive", "pass", head), ("no_zz", "pass", head)))
    assert(runs.forall(_.getString(3) == s"gate:$main"))
  }

  test("a failing check blocks the merge with CHECK_FAILED naming it, its count and sample keys; nothing moves") {
    repoWithChecks()
    sql("INSERT INTO c.r.`orders@dev` VALUES (3, -5), (4, -6), (5, 7)")
    val before = engine.history.log("r", versioned.core.Revision.Spec(main)).size
    val e = expectError(ErrorClass.CheckFailed, "'positive' found 2 failing row(s)", "3", "4")(
      failsWithoutCommit("r", main)(merge()))
    assert(!e.getMessage.contains("no_zz"))
    assert(engine.history.log("r", versioned.core.Revision.Spec(main)).size == before)
    val failed = sql("SELECT failing_rows, sample_keys FROM c.r.`$checks` WHERE check = 'positive' AND status = 'fail'").collect()
    assert(failed.length == 1 && failed.head.getLong(0) == 2L && failed.head.getSeq[String](1).toSet == Set("3", "4"))
    // the merged image that failed is not reachable: no image of the log has it
    assert(engine.history.log("r", versioned.core.Revision.Spec(main)).forall(_.image.parents.size < 2))
    // run on demand: the source branch fails, the protected branch passes; recorded each time
    val onDev = sql("CALL c.system.run_checks(repository => 'r', ref => 'dev')").collect().map(r => r.getString(1) -> r.getString(3)).toMap
    assert(onDev == Map("positive" -> "fail", "no_zz" -> "pass"))
    assert(sql("CALL c.system.run_checks('r')").collect().forall(_.getString(3) == "pass"))
    // a fix on the source branch lets the merge land
    sql("UPDATE c.r.`orders@dev` SET price = 1 WHERE price < 0")
    assert(merge().status == "merged")
  }

  test("a check that throws at run time is CHECK_FAILED; a warn check that fails does not block") {
    repoWithChecks()
    sql("CALL c.system.add_check(repository => 'r', name => 'boom', " +
      "expression => \"SELECT id FROM t WHERE CASE WHEN v = 'boom' THEN CAST(v AS INT) ELSE 1 END < 0\")")
    sql("CALL c.system.add_check(repository => 'r', name => 'soft', table => 't', expression => \"v <> 'w'\", severity => 'warn')")
    sql(s"CALL c.system.protect_branch(repository => 'r', pattern => '$main', checks => 'positive,boom,soft')")
    sql("INSERT INTO c.r.`t@dev` VALUES (7, 'boom')")
    expectError(ErrorClass.CheckFailed, "'boom' could not run")(failsWithoutCommit("r", main)(merge()))
    sql("UPDATE c.r.`t@dev` SET v = 'w' WHERE id = 7")
    assert(merge().status == "merged")
    val soft = sql("SELECT status FROM c.r.`$checks` WHERE check = 'soft'").collect().map(_.getString(0)).toSeq
    assert(soft == Seq("fail", "pass")) // newest first: the landed merge's run, then the blocked one's
    expectError(ErrorClass.ProtectedRef, "required by protection rule")(intercept[Throwable](
      sql("CALL c.system.remove_check('r', 'boom')")))
  }

  test("publish: a dry run reports the checks on the merged image and lands nothing; publish lands every table at once") {
    repoWithChecks()
    sql("INSERT INTO c.r.`orders@dev` VALUES (3, -1)")
    sql("INSERT INTO c.r.`t@dev` VALUES (3, 'c')")
    val before = headOf("r", main)
    val dry = sql("CALL c.system.publish(repository => 'r', branch => 'dev', dry_run => 'true')").collect().head
    // the required check fails on the merged image: the publish would be refused, and the dry run says so
    assert(dry.getAs[String]("status") == "check_failed" && dry.isNullAt(1) && !dry.getAs[Boolean]("branch_deleted"))
    val checks = dry.getSeq[org.apache.spark.sql.Row](5).map(r => r.getString(0) -> r.getString(2)).toMap
    assert(checks == Map("positive" -> "fail", "no_zz" -> "pass"))
    assert(headOf("r", main) == before && engine.refs.branches("r").map(_.shortName).contains("dev"))
    expectError(ErrorClass.CheckFailed, "positive")(failsWithoutCommit("r", main)(
      sql("CALL c.system.publish(repository => 'r', branch => 'dev', delete_branch => 'true')")))
    assert(engine.refs.branches("r").map(_.shortName).contains("dev"))
    sql("UPDATE c.r.`orders@dev` SET price = 3 WHERE id = 3")
    assert(sql("CALL c.system.publish(repository => 'r', branch => 'dev', dry_run => 'true')").collect().head
      .getAs[String]("status") == "merged")
    val done = sql("CALL c.system.publish(repository => 'r', branch => 'dev', delete_branch => 'true')").collect().head
    assert(done.getAs[String]("status") == "merged" && done.getAs[Boolean]("branch_deleted"))
    assert(headOf("r", main).contains(done.getAs[String]("commit")))
    assert(done.getSeq[org.apache.spark.sql.Row](5).map(r => r.getString(0) -> r.getString(2)).toMap ==
      Map("positive" -> "pass", "no_zz" -> "pass"))
    val landed = engine.history.log("r", versioned.core.Revision.Spec(main)).head
    assert(landed.tablesChanged.toSet == Set("orders", "t") && landed.image.parents.size == 2)
    assert(!engine.refs.branches("r").map(_.shortName).contains("dev"))
  }

  test("bisect finds the first failing commit of the first-parent line in O(log n) recorded runs") {
    keyedTable(1 -> "a")
    val good = headOf("r", main).get
    val commits = (2 to 9).map { i =>
      sql(s"INSERT INTO c.r.t VALUES ($i, '${if (i == 6) "zz" else "x"}')")
      headOf("r", main).get
    }
    sql("CALL c.system.add_check(repository => 'r', name => 'no_zz', expression => \"SELECT id FROM t WHERE v = 'zz'\")")
    val found = sql(s"CALL c.system.bisect(repository => 'r', check => 'no_zz', good => '$good')").collect().head
    assert(found.getString(0) == commits(4) && found.getString(2) == commits(3) && found.getInt(3) == 8)
    val runs = found.getSeq[org.apache.spark.sql.Row](4)
    assert(runs.size <= 1 + 3 && runs.head.getString(0) == commits.last) // the bad end, then log2(8) steps
    assert(sql("SELECT count(*) FROM c.r.`$checks` WHERE purpose = 'bisect'").collect().head.getLong(0) == runs.size)
    // an ad-hoc query, and the errors
    val adhoc = sql(s"CALL c.system.bisect('r', \"SELECT id FROM t WHERE id >= 8\", '$good')").collect().head
    assert(adhoc.getString(0) == commits(6))
    expectError(ErrorClass.InvalidOption, "passes")(intercept[Throwable](
      sql(s"CALL c.system.bisect('r', 'no_zz', '$good', '${commits(2)}')")))
    expectError(ErrorClass.InvalidOption, "first-parent")(intercept[Throwable](
      sql(s"CALL c.system.bisect('r', 'no_zz', '${commits(3)}', '${commits(1)}')")))
    expectError(ErrorClass.CheckNotFound)(intercept[Throwable](sql(s"CALL c.system.bisect('r', 'nope', '$good')")))
  }

  test("a direct write to a branch whose rule allows writes but requires checks is gated the same way") {
    repoWithChecks()
    sql(s"CALL c.system.protect_branch(repository => 'r', pattern => '$main', require_merge => 'false', checks => 'positive')")
    expectError(ErrorClass.CheckFailed, "'positive' found 1 failing row(s)")(failsWithoutCommit("r", main)(
      sql("INSERT INTO c.r.orders VALUES (9, -9)")))
    assert(sql("SELECT count(*) FROM c.r.orders WHERE id = 9").collect().head.getLong(0) == 0L)
    sql("INSERT INTO c.r.orders VALUES (9, 9)")
    assert(sql("SELECT price FROM c.r.orders WHERE id = 9").collect().head.getInt(0) == 9)
  }
}
