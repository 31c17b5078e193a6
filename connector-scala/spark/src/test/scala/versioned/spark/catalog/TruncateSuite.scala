package versioned.spark.catalog

import org.apache.spark.sql.Row
import versioned.core.{ErrorClass, Revision}

/** TRUNCATE TABLE: one commit of a table with no rows on the name's branch; refs that never move refuse it. */
class TruncateSuite extends CatalogSuiteBase {

  test("TRUNCATE TABLE commits an empty version of a keyed table on the repository's default branch") {
    sql("CREATE NAMESPACE c.shop WITH DBPROPERTIES ('defaultBranch' = 'trunk')")
    val trunk = engine.defaultBranch("shop")
    sql("CREATE TABLE c.shop.t (id INT, v STRING, PRIMARY KEY (id))")
    sql("INSERT INTO c.shop.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    sql("CREATE TABLE c.shop.other (k INT, PRIMARY KEY (k))")
    sql("INSERT INTO c.shop.other VALUES (7)")
    val before = headOf("shop", trunk).get
    sql("TRUNCATE TABLE c.shop.t")
    assert(sql("SELECT * FROM c.shop.t").collect().isEmpty)
    assert(commits("shop", trunk) == 5)
    val head = engine.history.log("shop", Revision.Spec(trunk)).head.image
    assert(head.message == "truncate t" && head.parents == Seq(before))
    val t = tableAt("shop", "t", trunk).get
    assert(t.primaryKey == Seq("id") && !t.hiddenKey)
    assert(spark.table("c.shop.t").schema.fieldNames.toSeq == Seq("id", "v"))
    // the other table and the history are untouched
    assert(sorted(sql("SELECT * FROM c.shop.other")) == Seq(Row(7)))
    assert(sorted(sql(s"SELECT * FROM c.shop.t VERSION AS OF '$before'")) == Seq(Row(1, "a"), Row(2, "b"), Row(3, "c")))
    // the diff of the commit deletes every row
    val changes = sql(s"SELECT id, _change_type FROM c.shop.t CHANGES FROM VERSION '$before'").collect()
    assert(changes.map(_.getInt(0)).sorted.toSeq == Seq(1, 2, 3) && changes.forall(_.getString(1) == "delete"),
      changes.mkString(", "))
    // rows can be written again, and truncating a table with no rows commits nothing
    sql("TRUNCATE TABLE c.shop.t")
    assert(commits("shop", trunk) == 5)
    sql("INSERT INTO c.shop.t VALUES (4, 'd')")
    assert(sorted(sql("SELECT * FROM c.shop.t")) == Seq(Row(4, "d")))
  }

  test("TRUNCATE TABLE of a key-less table, and of a table on another branch") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.log (msg STRING)")
    sql("INSERT INTO c.r.log VALUES ('x'), ('x'), ('y')")
    val main = engine.defaultBranch("r")
    engine.refs.createBranch("r", "dev", Revision.DefaultBranch)
    val mainHead = headOf("r", main)
    sql("TRUNCATE TABLE c.r.`log@dev`")
    assert(sql("SELECT * FROM c.r.`log@dev`").collect().isEmpty)
    assert(headOf("r", main) == mainHead)
    assert(sql("SELECT count(*) FROM c.r.log").head().getLong(0) == 3)
    sql("TRUNCATE TABLE c.r.log")
    assert(sql("SELECT count(*) FROM c.r.log").head().getLong(0) == 0)
    assert(tableAt("r", "log", main).get.hiddenKey)
  }

  test("TRUNCATE TABLE of a tag, a lock or a missing table is refused and commits nothing") {
    keyedTable((1, "a"))
    val main = engine.defaultBranch("r")
    engine.refs.createTag("r", "v1", Revision.DefaultBranch)
    engine.refs.createLock("r", "app", "q1", Revision.DefaultBranch)
    expectError(ErrorClass.ImmutableRef, "'v1'")(failsWithoutCommit("r", main)(sql("TRUNCATE TABLE c.r.`t@v1`")))
    expectError(ErrorClass.ImmutableRef, "'app:q1'")(failsWithoutCommit("r", main)(sql("TRUNCATE TABLE c.r.`t@app:q1`")))
    failsWithoutCommit("r", main)(sql("TRUNCATE TABLE c.r.missing"))
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a")))
  }
}
