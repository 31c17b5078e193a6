package versioned.spark.catalog

import org.apache.spark.sql.Row
import versioned.core.{ErrorClass, Revision}

/**
 * The procedures that give every Python `Repository` operation a SQL form (what a Spark Connect client
 * sends): resolve, show, rename_branch, delete_where, materialize, diff, last_commit and merge resolutions
 * given as view names.
 */
class SqlApiProcedureSuite extends CatalogSuiteBase {
  private def hash(rev: String) = engine.resolve("r", Revision.Spec(rev)).hash
  private def one(q: String): Row = { val rows = sql(q).collect(); assert(rows.length == 1, q); rows.head }

  test("resolve and show name an image; an empty revision is INVALID_REVISION, not the default branch") {
    keyedTable((1, "a"))
    sql("INSERT INTO c.r.t VALUES (2, 'b')")
    assert(one("CALL c.system.resolve('r')").getString(0) == hash("main"))
    assert(one("CALL c.system.resolve(repository => 'r', ref => 'main~1')").getString(0) == hash("main~1"))
    val shown = one("CALL c.system.show('r', 'main~1')")
    assert(shown.getString(0) == hash("main~1") && shown.getString(1).contains("\"changed_tables\""))
    expectError(ErrorClass.InvalidRevision)(intercept[Throwable](sql("CALL c.system.resolve('r', '')").collect()))
    expectError(ErrorClass.RefNotFound)(intercept[Throwable](sql("CALL c.system.resolve('r', 'nope')").collect()))
  }

  test("rename_branch moves the name; an invalid new name commits nothing") {
    keyedTable((1, "a"))
    sql("CALL c.system.create_branch('r', 'dev')").collect()
    val row = one("CALL c.system.rename_branch(repository => 'r', branch => 'dev', new_name => 'feature')")
    assert(row == Row("feature", "branch", hash("main")))
    assert(engine.refs.branches("r").map(_.shortName).sorted == Seq("feature", "main"))
    expectError(ErrorClass.InvalidName)(intercept[Throwable](sql("CALL c.system.rename_branch('r', 'feature', 'a b')").collect()))
    assert(engine.refs.branches("r").map(_.shortName).sorted == Seq("feature", "main"))
  }

  test("delete_where commits one change with its message; nothing matching commits nothing") {
    keyedTable((1, "a"), (2, "b"), (3, "c"))
    val before = commits("r")
    assert(one("CALL c.system.delete_where('r', 't', 'id >= 2', message => 'trim')").getLong(0) == 2L)
    assert(commits("r") == before + 1)
    assert(engine.history.show("r", Revision.Spec("main")).image.message == "trim")
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a")))
    assert(one("CALL c.system.delete_where('r', 't', 'id > 100')").getLong(0) == 0L)
    assert(commits("r") == before + 1)
    expectError(ErrorClass.TableNotFound)(failsWithoutCommit("r")(sql("CALL c.system.delete_where('r', 'nope', 'true')").collect()))
  }

  test("diff returns the row-level diff; last_commit the newest commit of this session's writes") {
    keyedTable((1, "a"), (2, "b"))
    val from = hash("main")
    spark.createDataFrame(java.util.List.of(Row(2, "B"), Row(3, "c")), spark.table("c.r.t").schema)
      .write.format("versioned").option("upsert", "true").mode("append").save("r.t")
    val last = one("CALL c.system.last_commit()")
    assert(last.getString(0) == "r" && last.getString(1) == "main" && last.getString(2) == hash("main"))
    val changes = sql(s"CALL c.system.diff(repository => 'r', table => 't', from_ref => '$from')").collect()
      .map(r => r.getAs[String]("_change") -> r.getAs[Int]("id")).toSet
    assert(changes == Set("update" -> 2, "insert" -> 3))
  }

  test("materialize compacts the images refs point at") {
    keyedTable((1, "a"))
    (2 to 4).foreach(i => sql(s"INSERT INTO c.r.t VALUES ($i, 'x')"))
    sql("CALL c.system.create_tag('r', 'old', 'main~2')").collect()
    val done = sql("CALL c.system.materialize('r')").collect()
    assert(done.map(_.getAs[String]("image")).toSet.subsetOf(Set(hash("main"), hash("old"))))
    assert(sql("CALL c.system.materialize('r')").collect().isEmpty, "a second run has nothing to do")
    assert(sorted(sql("SELECT id FROM c.r.t")) == (1 to 4).map(Row(_)))
    assert(sorted(sql("SELECT id FROM c.r.t VERSION AS OF 'old'")) == (1 to 2).map(Row(_)))
  }

  test("merge resolutions name a view per table; bad resolutions are refused before anything is committed") {
    keyedTable((1, "a"))
    sql("CALL c.system.create_branch('r', 'dev')").collect()
    sql("UPDATE c.r.t SET v = 'main' WHERE id = 1")
    sql("UPDATE c.r.`t@dev` SET v = 'dev' WHERE id = 1")
    val conflicted = one("CALL c.system.merge(repository => 'r', source => 'dev')")
    assert(conflicted.getAs[String]("status") == "conflicts" && conflicted.getAs[Long]("conflicts") == 1L)
    assert(conflicted.getAs[scala.collection.Seq[Row]]("conflict_details").map(_.getAs[String]("column")) == Seq("v"))
    val head = hash("main")
    // resolutions are a map (table -> view): a string is refused by Spark's type check, a NULL view by the procedure
    assert(intercept[org.apache.spark.SparkThrowable](sql(
      """CALL c.system.merge(repository => 'r', source => 'dev', resolutions => '{"t": "fixed"}')""").collect())
      .getCondition.startsWith("DATATYPE_MISMATCH"))
    expectError(ErrorClass.InvalidOption, "'t'")(intercept[Throwable](sql(
      "CALL c.system.merge(repository => 'r', source => 'dev', resolutions => map('t', CAST(NULL AS STRING)))").collect()))
    assert(hash("main") == head)
    spark.createDataFrame(java.util.List.of(Row(1, "both")), spark.table("c.r.t").schema).createOrReplaceTempView("fixed")
    val merged = one("CALL c.system.merge(repository => 'r', source => 'dev', resolutions => map('t', 'fixed'))")
    assert(merged.getAs[String]("status") == "merged")
    assert(merged.getAs[scala.collection.Seq[Row]]("table_details").map(_.getAs[String]("table")) == Seq("t"))
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "both")))
  }
}
