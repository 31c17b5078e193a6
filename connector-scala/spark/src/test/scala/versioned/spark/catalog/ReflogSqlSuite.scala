package versioned.spark.catalog

import versioned.core.{Actor, ErrorClass, Hashing, Reflog, Sql}
import versioned.spark.api.VersionedApi

/**
 * The reflog through SQL and the session (both metastores): the identity a session records (`spark.versioned.user`,
 * the application id, the client), the `$reflog` table and the `reflog` procedure, restoring a deleted branch with
 * `create_branch` from an entry, and `verify` finding an entry edited in the metastore.
 */
class ReflogSqlSuite extends CatalogSuiteBase {
  private def reflog(q: String = "SELECT * FROM c.r.`$reflog`") = sql(q).collect().toSeq
  private def tamper(q: String): Unit = engine.metastore.tx(c => Sql.update(c, q))

  private def withConf[T](kv: (String, String)*)(f: => T): T = {
    kv.foreach { case (k, v) => spark.conf.set(k, v) }
    try f finally kv.foreach { case (k, _) => spark.conf.unset(k) }
  }

  test("a session's user, application and client are recorded with every move; SQL procedures record sql") {
    withConf("spark.versioned.user" -> "dora", "spark.versioned.client" -> "python") {
      keyedTable((1, "a"))
      sql("CALL c.system.create_branch('r', 'dev')")
      sql("INSERT INTO c.r.t VALUES (2, 'b')")
    }
    val rows = reflog("SELECT ref, operation, who, app_id, client FROM c.r.`$reflog` ORDER BY seq")
    val main = engine.defaultBranch("r")
    assert(rows.map(r => (r.getString(0), r.getString(1))) == Seq(s"heads/$main" -> "commit", s"heads/$main" -> "commit",
      "heads/dev" -> "create", s"heads/$main" -> "commit"))
    assert(rows.forall(r => r.getString(2) == "dora" && r.getString(3) == spark.sparkContext.applicationId))
    assert(rows.map(_.getString(4)) == Seq(Actor.Python, Actor.Python, Actor.Sql, Actor.Python))
    // without a user setting: Spark's user; without a declared client: scala
    sql("INSERT INTO c.r.t VALUES (3, 'c')")
    val last = reflog("SELECT who, client FROM c.r.`$reflog` ORDER BY seq DESC LIMIT 1").head
    assert(last.getString(0) == spark.sparkContext.sparkUser && last.getString(1) == Actor.Scala)
    // the commit's author follows spark.versioned.user when no author is given
    withConf("spark.versioned.user" -> "erin")(sql("INSERT INTO c.r.t VALUES (4, 'd')"))
    assert(sql("SELECT author FROM c.r.`$log` LIMIT 1").head.getString(0) == "erin")
  }

  test("commits carry their actor: `$log`, the log DataFrame and the image hash; SQL DML commits as sql") {
    withConf("spark.versioned.user" -> "dora", "spark.versioned.client" -> "python") {
      keyedTable((1, "a"), (2, "b"))
      sql("UPDATE c.r.t SET v = 'B' WHERE id = 2") // SQL DML: sql, although the session declared python
      sql("DELETE FROM c.r.t WHERE id = 1")
      sql("MERGE INTO c.r.t AS t USING (SELECT 3 AS id, 'c' AS v) AS s ON t.id = s.id " +
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    }
    val app = spark.sparkContext.applicationId
    val log = sql("SELECT hash, message, committer, app_id, client FROM c.r.`$log`").collect().toSeq
    assert(log.map(r => (r.getString(2), r.getString(3), r.getString(4))) == Seq(("dora", app, Actor.Sql),
      ("dora", app, Actor.Sql), ("dora", app, Actor.Sql), ("dora", app, Actor.Python), ("dora", app, Actor.Python)))
    // the reflog entry of each commit names the same actor
    val moves = reflog("SELECT new_image, who, client FROM c.r.`$reflog` ORDER BY seq DESC").take(5)
    assert(moves.map(r => (r.getString(0), r.getString(1), r.getString(2))) == log.map(r => (r.getString(0), "dora", r.getString(4))))
    // the log DataFrame has the same columns
    val df = VersionedApi.log(spark, null, "r", engine.defaultBranch("r"), -1)
      .select("hash", "committer", "app_id", "client").collect().toSeq
    assert(df.map(_.toSeq) == log.map(r => Seq(r.get(0), r.get(2), r.get(3), r.get(4))))
    // the image hash covers the actor; an image without one (made before commits carried it) hashes as it did
    val head = engine.branchHeadOption("r", engine.defaultBranch("r")).get
    val tables = engine.tables("r", head.hash).map(t => t.name -> t.hash)
    assert(head.actor.contains(Actor("dora", app, Actor.Sql)))
    assert(Hashing.imageHash(head.parents, head.author, head.message, head.createdMs, tables, head.actor) == head.hash)
    assert(Hashing.imageHash(head.parents, head.author, head.message, head.createdMs, tables, None) != head.hash)
  }

  test("a client outside the known ones is INVALID_OPTION and commits nothing") {
    keyedTable((1, "a"))
    val n = reflog().size
    withConf("spark.versioned.client" -> "fortran") {
      expectError(ErrorClass.InvalidOption, "spark.versioned.client")(failsWithoutCommit("r", engine.defaultBranch("r"))(
        sql("INSERT INTO c.r.t VALUES (2, 'b')")))
    }
    assert(reflog().size == n)
  }

  test("the reflog procedure; a deleted branch restored by create_branch from its entry; an unknown entry creates nothing") {
    keyedTable((1, "a"))
    sql("CALL c.system.create_branch('r', 'dev')")
    sql("INSERT INTO c.r.`t@dev` VALUES (2, 'b')")
    val head = engine.branchHeadOption("r", "dev").get.hash
    sql("CALL c.system.delete_branch('r', 'dev')")
    val gone = sql("CALL c.system.reflog(repository => 'r', ref => 'dev', limit => 1)").collect().head
    assert(gone.getAs[String]("operation") == "delete" && gone.getAs[String]("old_image") == head &&
      gone.getAs[String]("new_image") == null)
    sql(s"CALL c.system.create_branch('r', 'dev', '${gone.getAs[String]("id")}')")
    assert(engine.branchHeadOption("r", "dev").map(_.hash).contains(head))
    assert(sorted(sql("SELECT * FROM c.r.`t@dev`")).map(_.toString) == Seq("[1,a]", "[2,b]"))
    val refs = engine.refs.all("r")
    val n = reflog().size
    expectError(ErrorClass.RefNotFound, "reflog@{4242}", "Nothing was created")(intercept[Throwable](
      sql("CALL c.system.create_branch('r', 'x', 'reflog@{4242}')").collect()))
    expectError(ErrorClass.InvalidOption, "limit")(intercept[Throwable](sql("CALL c.system.reflog('r', NULL, 0)").collect()))
    assert(engine.refs.all("r") == refs && reflog().size == n)
  }

  test("verify reports an entry edited, then one removed, in the metastore") {
    keyedTable((1, "a"))
    sql("CALL c.system.create_tag('r', 'v1')")
    sql("CALL c.system.create_branch('r', 'dev')")
    val ok = sql("CALL c.system.verify('r')").collect().filter(_.getString(1) == "reflog")
    assert(ok.map(r => (r.getString(0), r.getString(2))).toSeq == Seq("reflog" -> "ok"))
    tamper("UPDATE vc_reflog SET new_image = old_image WHERE repo = 'r' AND seq = 3")
    val bad = sql("CALL c.system.verify('r')").collect().filter(_.getString(2) != "ok")
    assert(bad.map(r => (r.getString(0), r.getString(1), r.getString(2))).toSeq == Seq(("reflog@{3}", "reflog", Reflog.Changed)))
    tamper("DELETE FROM vc_reflog WHERE repo = 'r' AND seq = 3")
    val removed = sql("CALL c.system.verify('r')").collect().filter(_.getString(2) != "ok")
    assert(removed.map(r => (r.getString(0), r.getString(2))).toSeq == Seq(("reflog@{3}", Reflog.Removed)))
  }
}
