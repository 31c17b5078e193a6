package versioned.spark.diff

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types._
import versioned.core.{ErrorClass, Revision}
import versioned.spark.VersionedTestBase
import versioned.spark.api.VersionedApi
import versioned.spark.catalog.VersionedCatalog

/**
 * Diffs across schema and key changes (scenarios after Wrgl's and Dolt's diff tests): columns are the
 * union of both versions' (the newer version's order, then dropped ones), null on the side that lacks
 * them, widened types read as the wider type; rows match by the shared key, or as whole rows over the
 * common columns when the key changed or one side has none. Only incomparable types are refused.
 */
class DiffSchemaSuite extends VersionedTestBase {
  override protected def extraConf: Map[String, String] = Map("spark.sql.catalog.c" -> classOf[VersionedCatalog].getName)

  private def sql(q: String): DataFrame = spark.sql(q)
  private def diff(from: String, to: String, table: String = "t"): DataFrame = VersionedApi.diff(spark, null, s"r.$table", from, to)
  private def tag(name: String): Unit = engine.refs.createTag("r", name, Revision.DefaultBranch)
  private def columns(df: DataFrame): Seq[String] = df.columns.toSeq

  private def keyed(): Unit = {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.t (id INT, v STRING, PRIMARY KEY (id))")
    sql("INSERT INTO c.r.t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    tag("v0")
  }

  test("added column: null before; rows whose new column is null are unchanged; the reverse diff mirrors it") {
    keyed()
    sql("ALTER TABLE c.r.t ADD COLUMN n INT")
    assert(diff("v0", "main").count() == 0, "a column of nulls changes no row")
    sql("UPDATE c.r.t SET n = 5 WHERE id = 2")
    val d = diff("v0", "main")
    assert(columns(d) == Seq("_change", "id", "v_before", "v_after", "n_before", "n_after"))
    assertSameRows(d.collect().toSeq, Seq(Row("update", 2, "b", "b", null, 5)), "v0 -> main")
    assertSameRows(diff("main", "v0").collect().toSeq, Seq(Row("update", 2, "b", "b", 5, null)), "main -> v0")
    assert(columns(diff("main", "v0")) == Seq("_change", "id", "v_before", "v_after", "n_before", "n_after"))
  }

  test("dropped column: its values disappear (null after); it is listed after the remaining columns") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.t (id INT, gone STRING, v STRING, PRIMARY KEY (id))")
    sql("INSERT INTO c.r.t VALUES (1, 'x', 'a'), (2, NULL, 'b')")
    tag("v0")
    sql("ALTER TABLE c.r.t DROP COLUMN gone")
    val d = diff("v0", "main")
    assert(columns(d) == Seq("_change", "id", "v_before", "v_after", "gone_before", "gone_after"))
    assertSameRows(d.collect().toSeq, Seq(Row("update", 1, "a", "a", "x", null)), "drop column")
  }

  test("renamed column: shows as a dropped and an added column") {
    keyed()
    sql("ALTER TABLE c.r.t RENAME COLUMN v TO w")
    val d = diff("v0", "main")
    assert(columns(d) == Seq("_change", "id", "w_before", "w_after", "v_before", "v_after"))
    assertSameRows(d.collect().toSeq, Seq(1 -> "a", 2 -> "b", 3 -> "c").map { case (i, s) => Row("update", i, null, s, s, null) },
      "rename")
  }

  test("renamed key column (Dolt: diff allowed across primary key renames): a row whose key value is unchanged is one update") {
    keyed()
    sql("ALTER TABLE c.r.t RENAME COLUMN id TO k")
    tag("renamed")
    assert(diff("v0", "renamed").count() == 0, "a rename alone changes no row")
    sql("UPDATE c.r.t SET v = 'bb' WHERE k = 2")
    sql("DELETE FROM c.r.t WHERE k = 3")
    sql("INSERT INTO c.r.t VALUES (4, 'd')")
    val d = diff("v0", "main")
    assert(columns(d) == Seq("_change", "k", "v_before", "v_after"))
    assertSameRows(d.collect().toSeq, Seq(Row("update", 2, "b", "bb"), Row("delete", 3, "c", null), Row("insert", 4, null, "d")),
      "across the key rename")
    assertSameRows(diff("main", "v0").collect().toSeq, Seq(Row("update", 2, "bb", "b"), Row("insert", 3, null, "c"),
      Row("delete", 4, "d", null)), "the reverse diff")
    // the summary counts rows by key and reports the schema change
    val summary = VersionedApi.diffSummary(spark, null, "r", "v0", "main").collect().toSeq
    assert(summary.map(r => (r.getString(0), r.getLong(1), r.getLong(2), r.getLong(3), r.getBoolean(6))) ==
      Seq(("t", 1L, 1L, 1L, true)), summary)
  }

  test("reordered columns: no change unless values change; columns in the newer order") {
    keyed()
    val s = new StructType().add("v", StringType).add("id", IntegerType)
    overwrite(frame(s, Seq(Row("a", 1), Row("B", 2), Row("c", 3))), "r.t")
    assert(engine.tableOption("r", headHash("r").get, "t").get.schemaJson.indexOf("\"v\"") <
      engine.tableOption("r", headHash("r").get, "t").get.schemaJson.indexOf("\"id\""))
    val d = diff("v0", "main")
    assert(columns(d) == Seq("_change", "id", "v_before", "v_after"))
    assertSameRows(d.collect().toSeq, Seq(Row("update", 2, "b", "B")), "reorder")
  }

  test("widened types: int to bigint (value and key columns) compare as bigint") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.t (id INT, n INT, PRIMARY KEY (id))")
    sql("INSERT INTO c.r.t VALUES (1, 10), (2, 20)")
    tag("v0")
    val s = new StructType().add("id", LongType).add("n", LongType)
    overwrite(frame(s, Seq(Row(1L, 10L), Row(2L, 21L), Row(3L, 30L))), "r.t")
    val d = diff("v0", "main")
    assert(d.schema.map(f => f.name -> f.dataType) == Seq("_change" -> StringType, "id" -> LongType, "n_before" -> LongType,
      "n_after" -> LongType))
    assertSameRows(d.collect().toSeq, Seq(Row("update", 2L, 20L, 21L), Row("insert", 3L, null, 30L)), "int -> bigint")
    assertSameRows(diff("main", "v0").collect().toSeq, Seq(Row("update", 2L, 21L, 20L), Row("delete", 3L, 30L, null)), "reverse")
  }

  test("key added to a key-less table: rows match as whole rows, so only changed rows show") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.t (x INT, y STRING)")
    sql("INSERT INTO c.r.t VALUES (1, 'a'), (2, 'b'), (2, 'b'), (3, 'c')")
    tag("v0")
    overwrite(frame(new StructType().add("x", IntegerType).add("y", StringType), Seq(Row(1, "a"), Row(2, "b"), Row(3, "C"))),
      "r.t", "primaryKey" -> "x")
    assert(engine.tableOption("r", headHash("r").get, "t").get.primaryKey == Seq("x"))
    val d = diff("v0", "main")
    assert(columns(d) == Seq("_change", "x", "y"))
    assertSameRows(d.collect().toSeq, Seq(Row("delete", 2, "b"), Row("delete", 3, "c"), Row("insert", 3, "C")), "key added")
  }

  test("keyed to key-less (a typed diff, no longer `_vdup cannot be resolved`), with duplicates") {
    keyed()
    sql("CREATE OR REPLACE TABLE c.r.t AS SELECT * FROM VALUES (1, 'a'), (1, 'a'), (3, 'C') AS s(id, v)")
    assert(engine.tableOption("r", headHash("r").get, "t").get.hiddenKey)
    val d = diff("v0", "main")
    assert(columns(d) == Seq("_change", "id", "v"))
    assertSameRows(d.collect().toSeq, Seq(Row("insert", 1, "a"), Row("delete", 2, "b"), Row("delete", 3, "c"),
      Row("insert", 3, "C")), "keyed -> key-less")
    assertSameRows(diff("main", "v0").collect().toSeq, Seq(Row("delete", 1, "a"), Row("insert", 2, "b"), Row("insert", 3, "c"),
      Row("delete", 3, "C")), "key-less -> keyed")
  }

  test("key changed and a column added: whole rows over the common columns, the new column carried by inserts") {
    keyed()
    val s = new StructType().add("id", IntegerType).add("v", StringType).add("z", DoubleType)
    overwrite(frame(s, Seq(Row(1, "a", 1.5), Row(2, "B", 2.5), Row(4, "d", null))), "r.t", "primaryKey" -> "v")
    val d = diff("v0", "main")
    assert(columns(d) == Seq("_change", "id", "v", "z"))
    assertSameRows(d.collect().toSeq, Seq(Row("delete", 2, "b", null), Row("delete", 3, "c", null), Row("insert", 2, "B", 2.5),
      Row("insert", 4, "d", null)), "key id -> v")
  }

  test("table absent on one side: every row is an insert (created) or a delete (dropped)") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.other (x INT)")
    tag("before")
    sql("CREATE TABLE c.r.t (id INT, v STRING, PRIMARY KEY (id))")
    sql("INSERT INTO c.r.t VALUES (1, 'a'), (2, 'b')")
    tag("with")
    sql("DROP TABLE c.r.t")
    assertSameRows(diff("before", "with").collect().toSeq, Seq(Row("insert", 1, null, "a"), Row("insert", 2, null, "b")), "created")
    assertSameRows(diff("with", "main").collect().toSeq, Seq(Row("delete", 1, "a", null), Row("delete", 2, "b", null)), "dropped")
    assert(columns(diff("with", "main")) == Seq("_change", "id", "v_before", "v_after"))
    expectError(ErrorClass.TableNotFound, "t")(diff("before", "main").collect())
  }

  test("a type change with no common type is SCHEMA_MISMATCH naming the column") {
    keyed()
    overwrite(frame(new StructType().add("id", IntegerType).add("v", new StructType().add("x", IntegerType)),
      Seq(Row(1, Row(1)))), "r.t")
    expectError(ErrorClass.SchemaMismatch, "'v'", "string", "struct")(diff("v0", "main"))
  }

  test("wider: integral, floating point, decimal and date widening; none for unrelated types") {
    assert(DiffShape.wider(IntegerType, LongType).contains(LongType))
    assert(DiffShape.wider(ShortType, ByteType).contains(ShortType))
    assert(DiffShape.wider(FloatType, DoubleType).contains(DoubleType))
    assert(DiffShape.wider(IntegerType, DoubleType).contains(DoubleType))
    assert(DiffShape.wider(DecimalType(5, 2), DecimalType(10, 0)).contains(DecimalType(12, 2)))
    assert(DiffShape.wider(IntegerType, DecimalType(4, 1)).contains(DecimalType(11, 1)))
    assert(DiffShape.wider(DateType, TimestampType).contains(TimestampType))
    assert(DiffShape.wider(StringType, IntegerType).isEmpty)
    assert(DiffShape.wider(BooleanType, IntegerType).isEmpty)
  }
}
