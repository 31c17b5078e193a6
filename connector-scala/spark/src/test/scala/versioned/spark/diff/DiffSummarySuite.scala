package versioned.spark.diff

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types._
import versioned.core.{ErrorClass, Revision}
import versioned.spark.VersionedTestBase
import versioned.spark.api.VersionedApi
import versioned.spark.catalog.VersionedCatalog

/** `VersionedApi.diffSummary`, the `diff_summary` procedure and the `$diff` metadata tables. */
class DiffSummarySuite extends VersionedTestBase {
  override protected def extraConf: Map[String, String] = Map("spark.sql.catalog.c" -> classOf[VersionedCatalog].getName)

  private def sql(q: String): DataFrame = spark.sql(q)
  private def rows(q: String): Seq[Row] = sql(q).collect().toSeq
  private def summary(from: String, to: String, table: String = null): Seq[Row] =
    VersionedApi.diffSummary(spark, null, "r", from, to, table).collect().toSeq

  private def setup(): Unit = {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.t (id INT, v STRING, w INT, PRIMARY KEY (id))")
    sql("INSERT INTO c.r.t VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3), (4, 'd', 4)")
    sql("CREATE TABLE c.r.k (x INT, y STRING)")
    sql("INSERT INTO c.r.k VALUES (1, 'p'), (1, 'p')")
    sql("CREATE TABLE c.r.same (x INT)")
    sql("INSERT INTO c.r.same VALUES (7)")
    sql("CREATE TABLE c.r.gone (x INT)")
    engine.refs.createTag("r", "v0", Revision.DefaultBranch)
    sql("UPDATE c.r.t SET v = upper(v) WHERE id <= 2")
    sql("UPDATE c.r.t SET w = 40 WHERE id = 4")
    sql("UPDATE c.r.t SET w = 40 WHERE id = 4") // a rewrite of the same value: no change
    sql("DELETE FROM c.r.t WHERE id = 3")
    sql("INSERT INTO c.r.t VALUES (5, 'e', 5)")
    sql("INSERT INTO c.r.k VALUES (1, 'p'), (2, 'q')")
    sql("DROP TABLE c.r.gone")
    sql("CREATE TABLE c.r.fresh (z STRING)")
  }

  private val none = Map.empty[String, Long]
  private val expected = Seq(
    Row("fresh", 0L, 0L, 0L, Seq("z"), none, true),
    Row("gone", 0L, 0L, 0L, Seq("x"), none, true),
    Row("k", 2L, 0L, 0L, Nil, none, false),
    Row("t", 1L, 3L, 1L, Seq("v", "w"), Map("v" -> 2L, "w" -> 1L), false))
  private def of(table: String) = expected.filter(_.getString(0) == table)

  test("diffSummary: per table rows inserted, updated, deleted, columns and cells changed; unchanged tables left out") {
    setup()
    assert(VersionedApi.diffSummary(spark, null, "r", "v0", "main").schema == DiffSummary.Schema)
    assert(summary("v0", "main") == expected)
    assert(summary("v0", "main", "t") == of("t"))
    assert(summary("v0", "main", "same").isEmpty)
    assert(summary("main", "main").isEmpty)
    assert(summary("main", "v0", "t") == Seq(Row("t", 1L, 3L, 1L, Seq("v", "w"), Map("v" -> 2L, "w" -> 1L), false)))
    expectError(ErrorClass.TableNotFound, "nope")(summary("v0", "main", "nope"))
    expectError(ErrorClass.RefNotFound)(summary("nope", "main"))
  }

  test("diffSummary: added columns and key changes are schema changes") {
    setup()
    engine.refs.createTag("r", "v1", Revision.DefaultBranch)
    sql("ALTER TABLE c.r.t ADD COLUMN n INT")
    sql("UPDATE c.r.t SET w = 0 WHERE id = 1")
    overwrite(frame(new StructType().add("x", IntegerType).add("y", StringType), Seq(Row(1, "p"), Row(2, "q"))), "r.k",
      "primaryKey" -> "x")
    assert(summary("v1", "main") == Seq(Row("k", 0L, 0L, 2L, Nil, none, true),
      Row("t", 0L, 1L, 0L, Seq("w", "n"), Map("w" -> 1L), true)))
  }

  test("diffSummary: a type change without a common type has null counts") {
    setup()
    engine.refs.createTag("r", "v1", Revision.DefaultBranch)
    overwrite(frame(new StructType().add("id", IntegerType).add("v", BooleanType).add("w", IntegerType), Seq(Row(1, true, 1))), "r.t")
    assert(summary("v1", "main") == Seq(Row("t", null, null, null, Seq("v"), null, true)))
  }

  test("CALL diff_summary: named and positional arguments, to_ref defaults to the default branch head") {
    setup()
    assert(rows("CALL c.system.diff_summary('r', 'v0')") == expected)
    assert(rows("CALL c.system.diff_summary(repository => 'r', from_ref => 'v0', to_ref => 'main', table => 't')") == of("t"))
    assert(rows("CALL c.system.diff_summary('r', 'main', 'v0', 'k')") == Seq(Row("k", 0L, 0L, 2L, Nil, none, false)))
    assert(rows("CALL c.system.diff_summary(table => 'same', from_ref => 'v0', repository => 'r')").isEmpty)
    expectError(ErrorClass.InvalidRevision, "empty")(rows("CALL c.system.diff_summary('r', '')"))
    expectError(ErrorClass.InvalidOption, "from_ref")(rows("CALL c.system.diff_summary('r', NULL)"))
    expectError(ErrorClass.TableNotFound, "nope")(rows("CALL c.system.diff_summary('r', 'v0', table => 'nope')"))
    expectError(ErrorClass.RefNotFound)(rows("CALL c.system.diff_summary('r', 'v0', 'nope')"))
  }

  test("`$diff` and `t$diff`: the summary through SQL, with the range in the name or VERSION AS OF") {
    setup()
    assert(rows("SELECT * FROM c.r.`$diff@v0..main` ORDER BY table") == expected)
    assert(rows("SELECT * FROM c.r.`$diff` VERSION AS OF 'v0..main' ORDER BY table") == expected)
    assert(rows("SELECT * FROM c.r.`$diff@v0`").sortBy(_.getString(0)) == expected, "from alone: to the default branch head")
    assert(rows("SELECT * FROM c.r.`t$diff@v0..main`") == of("t"))
    assert(rows("SELECT table, updated FROM c.r.`t@v0..main$diff`") == Seq(Row("t", 3L)))
    assert(rows("SELECT * FROM c.r.`same$diff@v0..main`").isEmpty)
    expectError(ErrorClass.InvalidRevision, "<from>..<to>")(rows("SELECT * FROM c.r.`t$diff`"))
    expectError(ErrorClass.InvalidRevision, "not a range")(rows("SELECT * FROM c.r.`t$diff@v0..`"))
    expectError(ErrorClass.RefNotFound)(rows("SELECT * FROM c.r.`t$diff@nope..main`"))
    expectError(ErrorClass.TableNotFound, "nope")(rows("SELECT * FROM c.r.`nope$diff@v0..main`"))
    expectError(ErrorClass.InvalidRevision, "TIMESTAMP AS OF")(
      rows("SELECT * FROM c.r.`t$diff` TIMESTAMP AS OF '2030-01-01 00:00:00'"))
  }
}
