package versioned.spark.catalog

import org.apache.spark.sql.Row
import versioned.core.ErrorClass

/**
 * Value types Spark compares in its own way, through SQL as users write it: maps (Spark has no equality on them)
 * in keyed tables through every row-level write, diff and merge; collated strings, refused (values are stored and
 * compared byte for byte); key columns named in another case than the schema's.
 */
class ValueTypesSuite extends CatalogSuiteBase {
  private def branch: String = engine.defaultBranch("m")
  private def rows(q: String): Seq[Row] = sql(q).collect().toSeq.sortBy(_.getInt(0))

  test("a keyed table with map columns (also inside a struct): UPDATE, DELETE, MERGE, INSERT OVERWRITE, diff and merge") {
    sql("CREATE NAMESPACE c.m")
    sql("CREATE TABLE c.m.t (id INT, m MAP<STRING, INT>, s STRUCT<n: INT, tags: MAP<STRING, STRING>>, v INT, PRIMARY KEY (id))")
    sql("INSERT INTO c.m.t VALUES (1, map('a', 1), named_struct('n', 1, 'tags', map('x', 'y')), 10), " +
      "(2, map('b', 2), named_struct('n', 2, 'tags', map()), 20), (3, NULL, NULL, 30)")
    val loaded = commits("m", branch)
    // the same map, entries in another order: no change, no commit
    sql("UPDATE c.m.t SET m = map('b', 2) WHERE id = 2")
    assert(commits("m", branch) == loaded)
    sql("UPDATE c.m.t SET m = map('a', 1, 'c', 3), v = 11 WHERE id = 1")
    assert(commits("m", branch) == loaded + 1)
    sql("UPDATE c.m.t SET s = named_struct('n', 2, 'tags', map('k', 'v')) WHERE id = 2")
    sql("DELETE FROM c.m.t WHERE id = 3")
    sql("CREATE OR REPLACE TEMP VIEW src AS SELECT * FROM VALUES " +
      "(2, map('b', 5), CAST(NULL AS STRUCT<n: INT, tags: MAP<STRING, STRING>>), 21), (4, map(), NULL, 40) AS s(id, m, s, v)")
    sql("MERGE INTO c.m.t t USING src ON t.id = src.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
    val expected = Seq(Row(1, Map("a" -> 1, "c" -> 3), Row(1, Map("x" -> "y")), 11), Row(2, Map("b" -> 5), null, 21),
      Row(4, Map.empty[String, Int], null, 40))
    assert(rows("SELECT * FROM c.m.t") == expected)
    // a diff across all of it, by key
    val diff = sql(s"CALL c.system.diff(repository => 'm', table => 't', from_ref => '$branch~4', to_ref => '$branch')")
      .collect().map(r => r.getAs[String]("_change") -> r.getAs[Int]("id")).toSet
    assert(diff == Set("update" -> 1, "update" -> 2, "delete" -> 3, "insert" -> 4), diff)
    // two branches changing other cells of the same rows merge cell by cell; the same map on both sides agrees
    sql(s"CALL c.system.create_branch('m', 'dev')").collect()
    sql("UPDATE c.m.`t@dev` SET m = map('z', 26), v = 12 WHERE id = 1")
    sql("UPDATE c.m.t SET v = 22 WHERE id = 2")
    sql("UPDATE c.m.t SET m = map('z', 26) WHERE id = 1")
    val merged = sql("CALL c.system.merge(repository => 'm', source => 'dev')").collect().head
    assert(merged.getAs[String]("status") == "merged", merged)
    assert(rows("SELECT id, m, v FROM c.m.t") == Seq(Row(1, Map("z" -> 26), 12), Row(2, Map("b" -> 5), 22),
      Row(4, Map.empty[String, Int], 40)))
    // an overwrite compares the rows it replaces
    val before = commits("m", branch)
    sql("INSERT OVERWRITE c.m.t SELECT id, m, s, v FROM c.m.t")
    assert(commits("m", branch) == before, "the same rows: nothing to commit")
    sql("INSERT OVERWRITE c.m.t SELECT id, CASE WHEN id = 4 THEN map('n', 1) ELSE m END, s, v FROM c.m.t")
    assert(rows("SELECT id, m FROM c.m.t").map(_.getMap[String, Int](1)) == Seq(Map("z" -> 26), Map("b" -> 5), Map("n" -> 1)))
  }

  test("columns with a collation other than UTF8_BINARY are refused, by SQL and DataFrame writes, before any commit") {
    sql("CREATE NAMESPACE c.m")
    expectError(ErrorClass.SchemaMismatch, "'v'", "COLLATE")(failsWithoutCommit("m", branch)(
      sql("CREATE TABLE c.m.t (id INT, v STRING COLLATE UTF8_LCASE, PRIMARY KEY (id))")))
    expectError(ErrorClass.SchemaMismatch, "'tags'")(failsWithoutCommit("m", branch)(
      sql("CREATE TABLE c.m.t (id INT, tags ARRAY<STRING COLLATE UNICODE_CI>, PRIMARY KEY (id))")))
    sql("CREATE TABLE c.m.t (id INT, v STRING, PRIMARY KEY (id))")
    val df = sql("SELECT 1 AS id, 'abc' COLLATE UTF8_LCASE AS v")
    expectError(ErrorClass.SchemaMismatch, "'v'")(failsWithoutCommit("m", branch)(
      df.write.format("versioned").option("primaryKey", "id").mode("append").save("m.u")))
    assert(sql("SHOW TABLES IN c.m").collect().map(_.getString(1)).toSeq == Seq("t"))
    // CHAR and VARCHAR are strings of the default collation
    sql("CREATE TABLE c.m.v (id INT, s VARCHAR(5), c CHAR(2), PRIMARY KEY (id))")
    sql("INSERT INTO c.m.v VALUES (1, 'ab', 'x')")
    assert(sql("SELECT s FROM c.m.v").head().getString(0) == "ab")
  }

  test("key columns are named as the session resolves columns: case-insensitively by default") {
    sql("CREATE NAMESPACE c.m")
    sql("CREATE TABLE c.m.t (id INT, v INT, PRIMARY KEY (ID))")
    assert(tableAt("m", "t", branch).get.primaryKey == Seq("id"))
    sql("CREATE TABLE c.m.u TBLPROPERTIES ('primaryKey' = 'Id') AS SELECT 1 AS id, 2 AS v")
    assert(tableAt("m", "u", branch).get.primaryKey == Seq("id"))
    sql("INSERT INTO c.m.u VALUES (2, 3)")
    assert(rows("SELECT * FROM c.m.u") == Seq(Row(1, 2), Row(2, 3)))
    sql("CREATE TABLE c.m.w (k INT, v INT)")
    sql("INSERT INTO c.m.w VALUES (1, 1)")
    sql("ALTER TABLE c.m.w ADD CONSTRAINT pk PRIMARY KEY (K)")
    assert(tableAt("m", "w", branch).get.primaryKey == Seq("k"))
    spark.conf.set("spark.sql.caseSensitive", "true")
    try expectError(ErrorClass.MissingKeyColumn, "ID")(failsWithoutCommit("m", branch)(
      sql("CREATE TABLE c.m.x (id INT, v INT, PRIMARY KEY (ID))")))
    finally spark.conf.unset("spark.sql.caseSensitive")
  }

  test("timestamps before the Gregorian cutover are found by filters, UPDATE, DELETE and deleteWhere, as keys and values") {
    sql("CREATE NAMESPACE c.z")
    val times = Seq("0001-01-01 00:00:00", "1000-06-01 12:00:00", "1582-10-10 00:00:00", "1582-10-20 00:00:00",
      "2024-01-01 00:00:00")
    val values = times.zipWithIndex.map { case (t, i) => s"(TIMESTAMP'$t', $i)" }.mkString(", ")
    sql("CREATE TABLE c.z.k (ts TIMESTAMP, v INT, PRIMARY KEY (ts))")
    sql("CREATE TABLE c.z.n (ts TIMESTAMP, v INT)")
    sql(s"INSERT INTO c.z.k VALUES $values")
    sql(s"INSERT INTO c.z.n VALUES $values")
    for (t <- times; table <- Seq("c.z.k", "c.z.n"))
      assert(sql(s"SELECT v FROM $table WHERE ts = TIMESTAMP'$t'").collect().toSeq == Seq(Row(times.indexOf(t))), s"$table $t")
    sql("UPDATE c.z.k SET v = 100 WHERE ts = TIMESTAMP'1000-06-01 12:00:00'")
    sql("DELETE FROM c.z.k WHERE ts = TIMESTAMP'1582-10-10 00:00:00'")
    val api = versioned.spark.api.TableApi.deleteWhere(spark, java.util.Map.of[String, String](), "z.k",
      "ts = TIMESTAMP'0001-01-01 00:00:00'", null, null, null)
    assert(api == 1L)
    assert(sorted(sql("SELECT cast(ts AS STRING), v FROM c.z.k")) ==
      Seq(Row("1000-06-01 12:00:00", 100), Row("1582-10-20 00:00:00", 3), Row("2024-01-01 00:00:00", 4)))
  }

  test("a column whose name has a backtick takes DELETE and UPDATE, keyed and key-less") {
    sql("CREATE NAMESPACE c.q")
    sql("CREATE TABLE c.q.w (id INT, `we``ird` INT, PRIMARY KEY (id))")
    sql("INSERT INTO c.q.w VALUES (1, 2), (2, 3)")
    sql("DELETE FROM c.q.w WHERE id = 2")
    sql("UPDATE c.q.w SET `we``ird` = 20 WHERE id = 1")
    assert(sorted(sql("SELECT * FROM c.q.w")) == Seq(Row(1, 20)))
    sql("CREATE TABLE c.q.k (`we``ird` INT, v INT)")
    sql("INSERT INTO c.q.k VALUES (1, 2), (2, 3)")
    sql("UPDATE c.q.k SET v = 0 WHERE v = 3")
    sql("DELETE FROM c.q.k WHERE `we``ird` = 1")
    assert(sorted(sql("SELECT * FROM c.q.k")) == Seq(Row(2, 0)))
  }
}
