package versioned.spark.catalog

import org.apache.spark.sql.Row
import org.apache.spark.sql.functions.col
import versioned.core.ErrorClass

/**
 * Overwrites that replace the rows matching a condition: `INSERT INTO ... REPLACE WHERE`, `writeTo(...).overwrite`
 * and the write option `replaceWhere` are one commit each (the matching rows deleted, the data appended), refuse
 * data outside the condition and keys a kept row has, and agree with an in-memory oracle. On PostgreSQL too
 * (`VERSIONED_TEST_METASTORE`, bin/test).
 */
class ReplaceWhereSuite extends CatalogSuiteBase {

  private def main: String = engine.defaultBranch("r")

  test("INSERT INTO ... REPLACE WHERE replaces the matching rows of a keyed table in one commit") {
    keyedTable((1, "a"), (2, "b"), (3, "c"), (4, "d"))
    val before = commits("r", main)
    sql("INSERT INTO c.r.t REPLACE WHERE id >= 3 SELECT * FROM VALUES (3, 'C'), (5, 'e') AS s(id, v)")
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a"), Row(2, "b"), Row(3, "C"), Row(5, "e")))
    assert(commits("r", main) == before + 1)
    val head = engine.history.log("r", versioned.core.Revision.Spec(main)).head
    assert(head.image.message.contains("replace rows of t where"), head.image.message)
    // the same through the DataFrame API, with a condition on a non-key column
    spark.sql("SELECT 9 AS id, 'a' AS v").writeTo("c.r.t").overwrite(col("v") === "a" || col("v") === "b")
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(3, "C"), Row(5, "e"), Row(9, "a")))
    assert(commits("r", main) == before + 2)
  }

  test("the write option replaceWhere on a key-less table with duplicates, dates and strings in the condition") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.e (day DATE, kind STRING, n INT)")
    sql("INSERT INTO c.r.e VALUES (DATE'2026-01-30', 'x', 1), (DATE'2026-01-31', 'x', 1), (DATE'2026-01-31', 'x', 1), " +
      "(DATE'2026-01-31', 'y', 2)")
    val day = spark.sql("SELECT DATE'2026-01-31' AS day, 'x' AS kind, 7 AS n UNION ALL SELECT DATE'2026-01-31', 'x', 7")
    day.write.format("versioned").mode("overwrite").option("replaceWhere", "day = '2026-01-31' AND kind = 'x'").save("r.e")
    assert(sorted(sql("SELECT day, kind, n FROM c.r.e")).map(_.toString) == Seq(
      "[2026-01-30,x,1]", "[2026-01-31,x,7]", "[2026-01-31,x,7]", "[2026-01-31,y,2]"))
    sql("INSERT INTO c.r.e REPLACE WHERE day = DATE'2026-01-30' SELECT DATE'2026-01-30', 'w', 0")
    assert(sql("SELECT kind FROM c.r.e WHERE day = DATE'2026-01-30'").collect().toSeq == Seq(Row("w")))
    // a condition no row matches: the data is appended
    sql("INSERT INTO c.r.e REPLACE WHERE day > DATE'2027-01-01' SELECT DATE'2027-06-01', 'q', 3")
    assert(sql("SELECT count(*) FROM c.r.e").head().getLong(0) == 5)
  }

  test("data outside the condition, a key a kept row has, and bad options fail typed and commit nothing") {
    keyedTable((1, "a"), (2, "b"), (3, "c"))
    val rows = sorted(sql("SELECT * FROM c.r.t"))
    expectError(ErrorClass.ReplaceWhereMismatch, "(1, x)", "`id` >= 2")(failsWithoutCommit("r", main)(
      sql("INSERT INTO c.r.t REPLACE WHERE id >= 2 SELECT * FROM VALUES (2, 'B'), (1, 'x') AS s(id, v)")))
    // key 1 stays (outside the condition): appending it again is an existing key
    expectError(ErrorClass.KeyExists)(failsWithoutCommit("r", main)(
      spark.sql("SELECT 1 AS id, 'x' AS v").write.format("versioned").mode("overwrite")
        .option("replaceWhere", "v = 'x' OR id = 1 AND false").save("r.t")))
    val df = spark.sql("SELECT 3 AS id, 'C' AS v")
    expectError(ErrorClass.InvalidOption, "replaceWhere", "mode 'overwrite'")(failsWithoutCommit("r", main)(
      df.write.format("versioned").mode("append").option("replaceWhere", "id = 3").save("r.t")))
    expectError(ErrorClass.InvalidOption, "replaceWhere", "upsert")(failsWithoutCommit("r", main)(
      df.write.format("versioned").mode("overwrite").option("upsert", "true").option("replaceWhere", "id = 3").save("r.t")))
    expectError(ErrorClass.InvalidOption, "replaceWhere", "empty")(failsWithoutCommit("r", main)(
      df.write.format("versioned").mode("overwrite").option("replaceWhere", " ").save("r.t")))
    expectError(ErrorClass.InvalidOption, "leave the write option")(failsWithoutCommit("r", main)(
      df.writeTo("c.r.t").option("replaceWhere", "id = 3").overwrite(col("id") === 3)))
    failsWithoutCommit("r", main)(
      df.write.format("versioned").mode("overwrite").option("replaceWhere", "nope = 3").save("r.t"))
    // a condition Spark cannot pass as filters: typed, with the way that takes it
    expectError(ErrorClass.Unsupported, "replaceWhere")(failsWithoutCommit("r", main)(
      sql("INSERT INTO c.r.t REPLACE WHERE length(v) > 0 SELECT 3, 'C'")))
    spark.sql("SELECT 3 AS id, 'CC' AS v").write.format("versioned").mode("overwrite")
      .option("replaceWhere", "length(v) > 1 OR id = 3").save("r.t")
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a"), Row(2, "b"), Row(3, "CC")))
    sql("INSERT INTO c.r.t REPLACE WHERE id = 3 SELECT 3, 'c'")
    assert(sorted(sql("SELECT * FROM c.r.t")) == rows)
  }

  test("random replacements of key ranges agree with an in-memory oracle") {
    keyedTable()
    val rnd = new scala.util.Random(35)
    var oracle = Map.empty[Int, String]
    (1 to 8).foreach { round =>
      val lo = rnd.nextInt(40)
      val hi = lo + rnd.nextInt(15)
      val data = (lo to hi).filter(_ => rnd.nextInt(3) > 0).map(k => k -> s"r$round-$k").toMap
      val values = if (data.isEmpty) "SELECT * FROM VALUES (0, 'x') AS s(id, v) WHERE false"
        else data.toSeq.map { case (k, v) => s"($k, '$v')" }.mkString("SELECT * FROM VALUES ", ", ", " AS s(id, v)")
      sql(s"INSERT INTO c.r.t REPLACE WHERE id BETWEEN $lo AND $hi $values")
      oracle = oracle.filterNot { case (k, _) => k >= lo && k <= hi } ++ data
      assert(sorted(sql("SELECT * FROM c.r.t")) == oracle.toSeq.sortBy(_.toString).map { case (k, v) => Row(k, v) }
        .sortBy(_.toString), s"round $round: [$lo, $hi]")
    }
  }
}
