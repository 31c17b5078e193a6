package versioned.spark.catalog

import org.apache.spark.sql.Row
import versioned.core.Revision

/** History as users of Delta, git and Dolt expect it (issue 31.12): commit numbers in VERSION AS OF, pick authors. */
class HistoryUsabilitySuite extends CatalogSuiteBase {
  test("VERSION AS OF takes the commit numbers the change feed reports") {
    keyedTable((1, "a"))
    sql("INSERT INTO c.r.t VALUES (2, 'b')")
    sql("UPDATE c.r.t SET v = 'B' WHERE id = 2")
    val numbers = sql("SELECT DISTINCT _commit_version FROM c.r.t CHANGES FROM VERSION 'main~2' TO VERSION 'main'")
      .collect().map(_.getLong(0)).sorted
    assert(numbers.length == 3)
    assert(sorted(sql(s"SELECT * FROM c.r.t VERSION AS OF ${numbers(1)}")) == Seq(Row(1, "a"), Row(2, "b")))
    assert(sorted(sql(s"SELECT * FROM c.r.t VERSION AS OF '${numbers(2)}'")) == Seq(Row(1, "a"), Row(2, "B")))
    assert(sorted(spark.read.option("versionAsOf", numbers(0).toString).table("c.r.t")) == Seq(Row(1, "a")))
    expectError(versioned.core.ErrorClass.ImageNotFound)(intercept[Throwable](sql("SELECT * FROM c.r.t VERSION AS OF 987654").collect()))
  }

  test("a cherry-pick keeps the picked commit's author and records who picked it") {
    keyedTable((1, "a"))
    sql("CALL c.system.create_branch(repository => 'r', branch => 'dev')")
    spark.createDataFrame(Seq((2, "b"))).toDF("id", "v").write.format("versioned").mode("append")
      .option("branch", "dev").option("author", "alice").option("message", "add b").save("r.t")
    sql("CALL c.system.cherry_pick(repository => 'r', commit => 'dev', author => 'bob')").collect()
    val head = engine.history.log("r", Revision.DefaultBranch).head.image
    assert(head.author == "alice", head)
    assert(head.message.contains("add b") && head.message.contains("cherry picked from commit") && head.message.contains("by bob"),
      head.message)
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a"), Row(2, "b")))
  }
}
