package versioned.spark.catalog

import java.nio.file.Files
import org.apache.spark.sql.Row
import versioned.core.{Engine, ObjectKind, Revision, WarehouseConfig}

class DdlSuite extends CatalogSuiteBase {

  test("namespaces are repositories: CREATE, SHOW, DESCRIBE and DROP NAMESPACE") {
    sql("CREATE NAMESPACE c.sales")
    assert(engine.repositoryExists("sales"))
    assert(sql("SHOW NAMESPACES IN c").collect().map(_.getString(0)).toSeq == Seq("sales"))
    sql("CREATE NAMESPACE c.dev_repo WITH DBPROPERTIES ('defaultBranch' = 'trunk')")
    assert(engine.defaultBranch("dev_repo") == "trunk")
    sql("CREATE NAMESPACE IF NOT EXISTS c.sales")
    intercept[Exception](sql("CREATE NAMESPACE c.sales"))
    val desc = sql("DESCRIBE NAMESPACE EXTENDED c.sales").collect().map(_.mkString(" ")).mkString("\n")
    assert(desc.contains("defaultBranch"), desc)
    sql("DROP NAMESPACE c.dev_repo")
    assert(!engine.repositoryExists("dev_repo"))
    sql("CREATE TABLE c.sales.t (id INT)")
    intercept[Exception](sql("DROP NAMESPACE c.sales"))
    assert(engine.repositoryExists("sales"))
    // a tag keeps a table's history as a branch does: dropping the table on every branch leaves the tag's
    engine.refs.createTag("sales", "v1", versioned.core.Revision.DefaultBranch)
    sql("DROP TABLE c.sales.t")
    val refused = intercept[Exception](sql("DROP NAMESPACE c.sales"))
    assert(refused.getMessage.contains("SCHEMA_NOT_EMPTY"), refused.getMessage)
    assert(engine.repositoryExists("sales"))
    sql("DROP NAMESPACE c.sales CASCADE")
    assert(!engine.repositoryExists("sales"))
  }

  test("CREATE TABLE with PRIMARY KEY commits an empty table version") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.t (id INT, v STRING, PRIMARY KEY (id))")
    val t = tableAt("r", "t").get
    assert(t.primaryKey == Seq("id") && !t.hiddenKey && t.fragments.isEmpty)
    assert(commits("r") == 1)
    assert(engine.history.log("r", Revision.DefaultBranch).head.image.message == "create table t")
    assert(sql("SELECT * FROM c.r.t").collect().isEmpty)
    assert(sql("SHOW TABLES IN c.r").collect().map(_.getString(1)).toSeq == Seq("t"))
    val cols = sql("DESCRIBE TABLE c.r.t").collect().map(r => r.getString(0) -> r.getString(1)).toMap
    assert(cols.get("id").contains("int") && cols.get("v").contains("string"), cols)
    intercept[Exception](sql("CREATE TABLE c.r.t (id INT)"))
    sql("CREATE TABLE IF NOT EXISTS c.r.t (id INT)")
    assert(commits("r") == 1)
  }

  test("INSERT INTO, INSERT OVERWRITE and SELECT go through the table's write path") {
    keyedTable((1, "a"), (2, "b"))
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a"), Row(2, "b")))
    sql("INSERT INTO c.r.t SELECT 3, 'c'")
    sql("INSERT INTO c.r.t (v, id) VALUES ('d', 4)")
    assert(sql("SELECT count(*) FROM c.r.t").head().getLong(0) == 4)
    assert(commits("r") == 4)
    sql("INSERT OVERWRITE c.r.t VALUES (1, 'a'), (2, 'B'), (5, 'e')")
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a"), Row(2, "B"), Row(5, "e")))
    assert(commits("r") == 5)
    // the same table through the format
    assert(sorted(read("r.t")) == Seq(Row(1, "a"), Row(2, "B"), Row(5, "e")))
    // DataFrameWriterV2
    val session = spark; import session.implicits._
    Seq((6, "f")).toDF("id", "v").writeTo("c.r.t").option("message", "from writeTo").append()
    assert(engine.history.log("r", Revision.DefaultBranch).head.image.message == "from writeTo")
    assert(sql("SELECT v FROM c.r.t WHERE id = 6").head().getString(0) == "f")
  }

  test("key-less tables keep duplicates") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.nk (k STRING, n INT)")
    assert(tableAt("r", "nk").get.hiddenKey)
    sql("INSERT INTO c.r.nk VALUES ('a', 1), ('a', 1), ('b', NULL)")
    sql("INSERT INTO c.r.nk VALUES ('a', 1)")
    assert(sorted(sql("SELECT * FROM c.r.nk")) == Seq(Row("a", 1), Row("a", 1), Row("a", 1), Row("b", null)))
  }

  test("CTAS and RTAS are one commit each; CREATE OR REPLACE") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.t TBLPROPERTIES ('primaryKey' = 'id') AS SELECT id, CAST(id * 2 AS STRING) AS v FROM range(10)")
    assert(commits("r") == 1)
    assert(tableAt("r", "t").get.primaryKey == Seq("id"))
    assert(sql("SELECT count(*) FROM c.r.t").head().getLong(0) == 10)
    sql("REPLACE TABLE c.r.t TBLPROPERTIES ('primaryKey' = 'id') AS SELECT id, 'x' AS v, true AS flag FROM range(3)")
    assert(commits("r") == 2)
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(0L, "x", true), Row(1L, "x", true), Row(2L, "x", true)))
    assert(sql("SELECT count(*) FROM c.r.t VERSION AS OF 'main~1'").head().getLong(0) == 10)
    sql("CREATE OR REPLACE TABLE c.r.u AS SELECT 1 AS a")
    sql("CREATE OR REPLACE TABLE c.r.u AS SELECT 2 AS a")
    assert(sql("SELECT a FROM c.r.u").collect().toSeq == Seq(Row(2)))
    assert(tableAt("r", "u").get.hiddenKey)
    sql("REPLACE TABLE c.r.u (a INT, b STRING, PRIMARY KEY (a))")
    assert(sql("SELECT * FROM c.r.u").collect().isEmpty)
    assert(tableAt("r", "u").get.primaryKey == Seq("a"))
    assert(commits("r") == 5)
  }

  test("DROP TABLE is a commit; the table stays readable in history") {
    keyedTable((1, "a"))
    sql("DROP TABLE c.r.t")
    assert(commits("r") == 3)
    assert(tableAt("r", "t").isEmpty)
    assert(sql("SHOW TABLES IN c.r").collect().isEmpty)
    intercept[Exception](sql("SELECT * FROM c.r.t"))
    assert(sql("SELECT * FROM c.r.t VERSION AS OF 'main~1'").collect().toSeq == Seq(Row(1, "a")))
    sql("DROP TABLE IF EXISTS c.r.t")
    assert(commits("r") == 3)
  }

  test("ALTER TABLE ADD / DROP / RENAME COLUMN rewrite the table as a new SNAP") {
    keyedTable((1, "a"), (2, "b"))
    sql("ALTER TABLE c.r.t ADD COLUMN n INT")
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a", null), Row(2, "b", null)))
    val t = tableAt("r", "t").get
    assert(objectsOf(t).forall(_.kind == ObjectKind.Snap))
    sql("UPDATE c.r.t SET n = id * 10")
    sql("ALTER TABLE c.r.t RENAME COLUMN v TO name")
    sql("ALTER TABLE c.r.t DROP COLUMN n")
    assert(sql("SELECT * FROM c.r.t").schema.fieldNames.toSeq == Seq("id", "name"))
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a"), Row(2, "b")))
    sql("ALTER TABLE c.r.t RENAME COLUMN id TO key")
    assert(tableAt("r", "t").get.primaryKey == Seq("key"))
    assert(sorted(sql("SELECT n FROM c.r.t VERSION AS OF 'main~3'")) == Seq(Row(10), Row(20)))
    val log = engine.history.log("r", Revision.DefaultBranch).map(_.image.message)
    assert(log.head == "alter table t: rename column id to key", log)
    intercept[Exception](sql("ALTER TABLE c.r.t DROP COLUMN key"))
  }

  test("ALTER TABLE RENAME TO moves the table in one commit") {
    keyedTable((1, "a"))
    sql("ALTER TABLE c.r.t RENAME TO c.r.t2")
    assert(tableAt("r", "t").isEmpty)
    assert(sql("SELECT * FROM c.r.t2").collect().toSeq == Seq(Row(1, "a")))
    assert(commits("r") == 3)
  }

  test("DESCRIBE EXTENDED shows the key, the image and the provider") {
    keyedTable((1, "a"))
    val text = sql("DESCRIBE TABLE EXTENDED c.r.t").collect().map(_.mkString(" | ")).mkString("\n")
    assert(text.contains(headOf("r").get), text)
    assert(text.contains("versioned"), text)
  }

  test("ALTER COLUMN TYPE and ADD PRIMARY KEY rewrite the table") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.k (id INT, n INT)")
    sql("INSERT INTO c.r.k VALUES (1, 10), (2, 20)")
    sql("ALTER TABLE c.r.k ALTER COLUMN n TYPE BIGINT")
    assert(sql("SELECT n FROM c.r.k").schema.head.dataType.typeName == "long")
    sql("ALTER TABLE c.r.k ADD CONSTRAINT k_pk PRIMARY KEY (id)")
    val t = tableAt("r", "k").get
    assert(t.primaryKey == Seq("id") && !t.hiddenKey)
    assert(sorted(sql("SELECT * FROM c.r.k")) == Seq(Row(1, 10L), Row(2, 20L)))
  }

  test("DDL on a branch-qualified name commits to that branch") {
    keyedTable((1, "a"))
    engine.refs.createBranch("r", "dev", Revision.DefaultBranch)
    val main = headOf("r")
    sql("CREATE TABLE c.r.`scratch@dev` (x INT)")
    sql("ALTER TABLE c.r.`t@dev` ADD COLUMN n INT")
    sql("DROP TABLE c.r.`t@dev`")
    assert(headOf("r") == main)
    assert(tableAt("r", "scratch", "dev").isDefined && tableAt("r", "t", "dev").isEmpty)
    assert(commits("r", "dev") == 5)
    engine.refs.createTag("r", "v1", Revision.DefaultBranch)
    assert(sql("SELECT * FROM c.r.`t@v1`").collect().toSeq == Seq(Row(1, "a")))
  }

  test("catalog options warehouse, metastoreUrl and defaultBranch override the session") {
    val other = Files.createTempDirectory("versioned-catalog").toFile
    val url = s"jdbc:sqlite:${new java.io.File(other, "meta.db").getAbsolutePath}"
    spark.conf.set("spark.sql.catalog.c2", classOf[VersionedCatalog].getName)
    spark.conf.set("spark.sql.catalog.c2.warehouse", other.getAbsolutePath)
    spark.conf.set("spark.sql.catalog.c2.metastoreUrl", url)
    spark.conf.set("spark.sql.catalog.c2.defaultBranch", "trunk")
    sql("CREATE NAMESPACE c2.r")
    sql("CREATE TABLE c2.r.t (id INT, PRIMARY KEY (id))")
    sql("INSERT INTO c2.r.t VALUES (1), (2)")
    sql("DELETE FROM c2.r.t WHERE id = 1")
    val e2 = Engine(WarehouseConfig(other.getAbsolutePath, url, "trunk"))
    assert(e2.defaultBranch("r") == "trunk")
    assert(e2.history.log("r", Revision.Spec("trunk")).size == 3)
    assert(!engine.repositoryExists("r"))
    assert(sql("SELECT * FROM c2.r.t").collect().toSeq == Seq(Row(2)))
    assert(new java.io.File(other, "objects").isDirectory)
  }
}
