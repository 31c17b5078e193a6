package versioned.spark.catalog

import org.apache.spark.sql.Row
import versioned.core.ErrorClass

/**
 * What DDL and table-creating writes promise (found by exploratory testing): a key names each column once, what is
 * not kept is refused rather than dropped, a statement that changes nothing commits nothing, SHOW CREATE TABLE
 * prints DDL that runs, and a write's primaryKey option keys the table it creates.
 */
class DdlContractSuite extends CatalogSuiteBase {

  /** No table `table` on the default branch of `repo` (which may have no commit yet). */
  private def absent(repo: String, table: String): Boolean =
    engine.branchHeadOption(repo, engine.defaultBranch(repo)).forall(h => engine.tableOption(repo, h.hash, table).isEmpty)

  test("a primary key naming a column twice is refused by CREATE TABLE and by the format, and nothing is committed") {
    sql("CREATE NAMESPACE c.r")
    val main = engine.defaultBranch("r")
    expectError(ErrorClass.SchemaMismatch, "id", "more than once")(failsWithoutCommit("r", main)(
      sql("CREATE TABLE c.r.pd (id INT, x INT, PRIMARY KEY (id, id))")))
    // the format's option says so itself (INVALID_OPTION, naming the option)
    expectError(ErrorClass.InvalidOption, "named twice")(failsWithoutCommit("r", main)(
      write(spark.range(3).toDF("id"), "r.pd", "primaryKey" -> "id,ID")))
    assert(absent("r", "pd"))
  }

  test("CHECK and UNIQUE constraints, and ADD COLUMN NOT NULL, are refused instead of dropped") {
    sql("CREATE NAMESPACE c.r")
    val main = engine.defaultBranch("r")
    expectError(ErrorClass.Unsupported, "CHECK", "only a PRIMARY KEY")(failsWithoutCommit("r", main)(
      sql("CREATE TABLE c.r.cc (id INT, x INT, CONSTRAINT pos CHECK (x > 0))")))
    expectError(ErrorClass.Unsupported, "UNIQUE")(failsWithoutCommit("r", main)(
      sql("CREATE TABLE c.r.cc (id INT, x INT, CONSTRAINT u UNIQUE (x))")))
    assert(absent("r", "cc"))
    keyedTable((1, "a"))
    expectError(ErrorClass.Unsupported, "NOT NULL")(failsWithoutCommit("r", main)(
      sql("ALTER TABLE c.r.t ADD COLUMN nn INT NOT NULL")))
    assert(spark.table("c.r.t").columns.toSeq == Seq("id", "v"))
  }

  test("an ALTER TABLE that changes nothing commits nothing; one that changes something commits once") {
    keyedTable((1, "a"), (2, "b"))
    val main = engine.defaultBranch("r")
    val before = commits("r", main)
    sql("ALTER TABLE c.r.t DROP COLUMN IF EXISTS nope")
    sql("ALTER TABLE c.r.t ALTER COLUMN v TYPE STRING")
    sql("ALTER TABLE c.r.t ADD CONSTRAINT t_pk PRIMARY KEY (id)")
    assert(commits("r", main) == before)
    sql("ALTER TABLE c.r.t ADD COLUMN w INT")
    assert(commits("r", main) == before + 1)
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a", null), Row(2, "b", null)))
  }

  test("SHOW CREATE TABLE of a keyed table prints DDL that creates the same table") {
    keyedTable((1, "a"))
    val ddl = sql("SHOW CREATE TABLE c.r.t").head().getString(0)
    assert(ddl.contains("PRIMARY KEY (id)"), ddl)
    sql(ddl.replace("c.r.t ", "c.r.t_copy "))
    val copy = tableAt("r", "t_copy", engine.defaultBranch("r")).get
    assert(copy.primaryKey == Seq("id") && !copy.hiddenKey)
    assert(spark.table("c.r.t_copy").schema == spark.table("c.r.t").schema)
  }

  test("writeTo(...).create(), createOrReplace() and saveAsTable take the write's primaryKey option") {
    sql("CREATE NAMESPACE c.shop")
    val main = engine.defaultBranch("shop")
    val df = spark.createDataFrame(Seq((1L, "a"), (2L, "b"))).toDF("id", "name")
    df.writeTo("c.shop.w1").option("primaryKey", "id").create()
    df.writeTo("c.shop.w2").option("primaryKey", "ID").createOrReplace()
    df.write.format("versioned").option("primaryKey", "id").saveAsTable("c.shop.w3")
    Seq("w1", "w2", "w3").foreach { t =>
      val v = tableAt("shop", t, main).get
      assert(v.primaryKey == Seq("id") && !v.hiddenKey, s"$t: ${v.primaryKey}")
    }
    // a second write of the same keys is an upsert's job: a plain append of an existing key is KEY_EXISTS
    expectError(ErrorClass.KeyExists)(failsWithoutCommit("shop", main)(df.writeTo("c.shop.w1").append()))
    // the statement's key and the option's must agree
    expectError(ErrorClass.SchemaMismatch, "disagree")(failsWithoutCommit("shop", main)(
      spark.sql("SELECT 1L AS id, 'a' AS name").writeTo("c.shop.w4").tableProperty("primaryKey", "id")
        .option("primaryKey", "name").create()))
    assert(absent("shop", "w4"))
  }

  test("saveAsTable with another provider is refused in every save mode, and nothing is created") {
    sql("CREATE NAMESPACE c.shop")
    val df = spark.createDataFrame(Seq((1L, "a"))).toDF("id", "name")
    expectError(ErrorClass.Unsupported, "USING parquet", "format(\"versioned\")")(
      intercept[Throwable](df.write.format("parquet").saveAsTable("c.shop.p1")))
    expectError(ErrorClass.Unsupported, "USING parquet")(
      intercept[Throwable](df.write.mode("overwrite").format("parquet").saveAsTable("c.shop.p2")))
    expectError(ErrorClass.Unsupported, "PARTITIONED BY")(
      intercept[Throwable](sql("CREATE OR REPLACE TABLE c.shop.p3 (id INT, v INT) PARTITIONED BY (v)")))
    expectError(ErrorClass.Unsupported, "CLUSTER BY")(
      intercept[Throwable](sql("CREATE TABLE c.shop.p4 (id INT, v INT) CLUSTER BY (v)")))
    Seq("p1", "p2", "p3", "p4").foreach(t => assert(absent("shop", t), t))
  }

  test("a name with a revision and VERSION AS OF name two versions: INVALID_REVISION, not one of them in silence") {
    keyedTable((1, "a"))
    engine.refs.createTag("r", "v1", versioned.core.Revision.DefaultBranch)
    sql("INSERT INTO c.r.t VALUES (2, 'b')")
    expectError(ErrorClass.InvalidRevision, "v1", "Give one")(intercept[Throwable](
      sql(s"SELECT * FROM c.r.`t@v1` VERSION AS OF '${engine.defaultBranch("r")}'").collect()))
    assert(sorted(sql("SELECT * FROM c.r.`t@v1`")) == Seq(Row(1, "a")))
    assert(sorted(sql("SELECT * FROM c.r.t VERSION AS OF 'v1'")) == Seq(Row(1, "a")))
  }
  test("a table COMMENT, LOCATION and custom TBLPROPERTIES are refused instead of dropped, and nothing is created") {
    sql("CREATE NAMESPACE c.r")
    val main = engine.defaultBranch("r")
    expectError(ErrorClass.Unsupported, "COMMENT")(failsWithoutCommit("r", main)(
      sql("CREATE TABLE c.r.p1 (id INT, v STRING, PRIMARY KEY (id)) COMMENT 'orders'")))
    expectError(ErrorClass.Unsupported, "LOCATION", "/tmp/elsewhere")(failsWithoutCommit("r", main)(
      sql("CREATE TABLE c.r.p2 (id INT) LOCATION '/tmp/elsewhere'")))
    expectError(ErrorClass.Unsupported, "'retention'", "primaryKey")(failsWithoutCommit("r", main)(
      sql("CREATE TABLE c.r.p3 TBLPROPERTIES ('primaryKey' = 'id', 'retention' = '7d') AS SELECT 1 AS id")))
    expectError(ErrorClass.Unsupported, "'team'")(failsWithoutCommit("r", main)(
      spark.sql("SELECT 1L AS id").writeTo("c.r.p4").tableProperty("team", "ops").create()))
    expectError(ErrorClass.InvalidOption, "'compression'")(failsWithoutCommit("r", main)(
      sql("CREATE TABLE c.r.p5 (id INT) OPTIONS ('compression' = 'zstd')")))
    Seq("p1", "p2", "p3", "p4", "p5").foreach(t => assert(absent("r", t), t))
    // what the connector does keep still creates: column comments, the key property, saveAsTable's write options
    sql("CREATE TABLE c.r.ok (id INT COMMENT 'the id', v STRING) TBLPROPERTIES ('primaryKey' = 'id')")
    spark.sql("SELECT 1L AS id").write.format("versioned").option("primaryKey", "id").option("message", "first")
      .saveAsTable("c.r.ok2")
    assert(tableAt("r", "ok", main).get.primaryKey == Seq("id") && tableAt("r", "ok2", main).get.primaryKey == Seq("id"))
    assert(spark.table("c.r.ok").schema("id").getComment().contains("the id"))
  }

  test("columns named like the ones diffs, change feeds and blame add are refused, as is a key named <c>_before") {
    sql("CREATE NAMESPACE c.r")
    val main = engine.defaultBranch("r")
    Seq("_change", "_CHANGE_TYPE", "_commit_version", "_commit_hash").foreach { n =>
      expectError(ErrorClass.SchemaMismatch, n, "Rename")(failsWithoutCommit("r", main)(
        sql(s"CREATE TABLE c.r.g (id INT, $n STRING, PRIMARY KEY (id))")))
    }
    expectError(ErrorClass.SchemaMismatch, "_commit_timestamp")(failsWithoutCommit("r", main)(
      write(spark.sql("SELECT 1 AS id, current_timestamp() AS _commit_timestamp"), "r.g", "primaryKey" -> "id")))
    expectError(ErrorClass.SchemaMismatch, "price_before", "'price'")(failsWithoutCommit("r", main)(
      sql("CREATE TABLE c.r.g (price_before INT, price INT, PRIMARY KEY (price_before))")))
    assert(absent("r", "g"))
    // a non-key column may be called so (its diff columns are price_before_before, ...), and ALTER checks it too
    keyedTable((1, "a"))
    sql("ALTER TABLE c.r.t ADD COLUMN v_before STRING")
    expectError(ErrorClass.SchemaMismatch, "_change_type")(failsWithoutCommit("r", main)(
      sql("ALTER TABLE c.r.t ADD COLUMN _change_type STRING")))
    assert(spark.table("c.r.t").columns.toSeq == Seq("id", "v", "v_before"))
  }
}
