package versioned.spark.governance

import versioned.core.{Revision, VersionedException}
import versioned.spark.catalog.CatalogSuiteBase

/**
 * A gated publish that fails between its checks and the move of the protected branch (the metastore refuses the
 * branch's update, as a process dying or losing its database at that point would leave it): nothing is published,
 * nothing is lost, and the same publish lands once the fault is gone. On both metastores.
 */
class GatedPublishFaultSuite extends CatalogSuiteBase {
  private def main: String = engine.defaultBranch("r")
  private def postgres: Boolean = engine.config.metastoreUrl.startsWith("jdbc:postgresql")

  /** Makes the metastore refuse every update of `heads/<branch>` until [[heal]]. */
  private def breakBranchMoves(branch: String): Unit = engine.metastore.tx { c =>
    val s = c.createStatement()
    try {
      if (postgres) {
        s.execute("CREATE FUNCTION vc_test_fault() RETURNS trigger AS $$ BEGIN " +
          "RAISE EXCEPTION 'injected fault: the metastore is gone'; END $$ LANGUAGE plpgsql")
        s.execute(s"CREATE TRIGGER vc_test_fault BEFORE UPDATE ON vc_refs FOR EACH ROW WHEN (NEW.name = 'heads/$branch') " +
          "EXECUTE FUNCTION vc_test_fault()")
      } else s.execute(s"CREATE TRIGGER vc_test_fault BEFORE UPDATE ON vc_refs WHEN NEW.name = 'heads/$branch' " +
        "BEGIN SELECT RAISE(ABORT, 'injected fault: the metastore is gone'); END")
    } finally s.close()
  }

  private def heal(): Unit = engine.metastore.tx { c =>
    val s = c.createStatement()
    try {
      if (postgres) { s.execute("DROP TRIGGER vc_test_fault ON vc_refs"); s.execute("DROP FUNCTION vc_test_fault()") }
      else s.execute("DROP TRIGGER vc_test_fault")
    } finally s.close()
  }

  private def imageCount: Int = engine.metastore.read { c =>
    val s = c.createStatement()
    try { val r = s.executeQuery("SELECT count(*) FROM vc_images WHERE repo = 'r'"); r.next(); r.getInt(1) } finally s.close()
  }

  private def contents(ref: String): Map[String, Set[String]] = Seq("t", "orders", "added").flatMap { t =>
    engine.tableOption("r", engine.resolve("r", Revision.Spec(ref)).hash, t).map { _ =>
      t -> sql(s"SELECT * FROM c.r.`$t@$ref`").collect().map(_.toString).toSet
    }
  }.toMap

  test("a gated publish killed between its checks and the branch move publishes nothing and loses nothing") {
    keyedTable(1 -> "a", 2 -> "b")
    sql("CREATE TABLE c.r.orders (id INT, price INT, PRIMARY KEY (id))")
    sql("INSERT INTO c.r.orders VALUES (1, 10), (2, 20)")
    sql("CALL c.system.add_check(repository => 'r', name => 'positive', table => 'orders', expression => 'price >= 0')")
    sql("CALL c.system.create_branch('r', 'dev')")
    sql(s"CALL c.system.protect_branch(repository => 'r', pattern => '$main', checks => 'positive')")
    // the branch to publish changes three tables (one of them new)
    sql("INSERT INTO c.r.`orders@dev` VALUES (3, 30)")
    sql("UPDATE c.r.`t@dev` SET v = 'B' WHERE id = 2")
    sql("CREATE TABLE c.r.`added@dev` (k INT, PRIMARY KEY (k))")
    sql("INSERT INTO c.r.`added@dev` VALUES (7)")
    val (mainBefore, devBefore) = (headOf("r", main), headOf("r", "dev"))
    val (mainRows, devRows) = (contents(main), contents("dev"))
    val images = imageCount
    val runsBefore = sql("SELECT count(*) FROM c.r.`$checks`").collect().head.getLong(0)

    breakBranchMoves(main)
    val t = try failsWithoutCommit("r", main)(
      sql("CALL c.system.publish(repository => 'r', branch => 'dev', delete_branch => 'true')").collect())
    finally heal()
    assert(Iterator.iterate(t)(_.getCause).takeWhile(_ != null).exists(e =>
      Option(e.getMessage).exists(_.contains("injected fault"))), s"the injected fault should surface: $t")
    assert(Iterator.iterate(t)(_.getCause).takeWhile(_ != null).exists(_.isInstanceOf[VersionedException]) ||
      t.isInstanceOf[org.apache.spark.SparkThrowable], s"a typed error: $t")
    // the checks had passed on the candidate image: the fault came after them
    val runs = sql(s"SELECT check, status, image FROM c.r.`$$checks` WHERE purpose = 'gate:$main'").collect()
    assert(sql("SELECT count(*) FROM c.r.`$checks`").collect().head.getLong(0) > runsBefore)
    assert(runs.nonEmpty && runs.forall(_.getString(1) == "pass"))
    val candidate = runs.head.getString(2)
    // nothing published: the protected branch, its rows and the graph are as before; the candidate image is gone
    assert(headOf("r", main) == mainBefore && contents(main) == mainRows)
    assert(imageCount == images, "the candidate image the failed publish recorded was removed")
    assert(scala.util.Try(engine.resolve("r", Revision.Spec(candidate))).isFailure)
    // nothing lost: the published branch is still there (delete_branch did not run), with all its rows
    assert(headOf("r", "dev") == devBefore && contents("dev") == devRows)

    // the same publish lands once the metastore is back, every table at once
    val done = sql("CALL c.system.publish(repository => 'r', branch => 'dev', delete_branch => 'true')").collect().head
    assert(done.getAs[String]("status") == "merged" && headOf("r", main).contains(done.getAs[String]("commit")))
    assert(contents(main) == devRows)
    assert(engine.history.log("r", Revision.Spec(main)).head.tablesChanged.toSet == Set("orders", "t", "added"))
  }
}
