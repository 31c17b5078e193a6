package versioned.spark.catalog

import org.apache.spark.sql.AnalysisException
import versioned.core.{ErrorClass, Revision}

/** Bad input fails with a clear error and commits nothing. */
class CatalogBadInputSuite extends CatalogSuiteBase {

  private def message(t: Throwable): String =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(" / ")

  test("unknown namespaces and tables") {
    val e1 = intercept[AnalysisException](sql("SELECT * FROM c.nope.t"))
    assert(e1.getCondition == "TABLE_OR_VIEW_NOT_FOUND", e1.getMessage)
    val e2 = intercept[AnalysisException](sql("CREATE TABLE c.nope.t (id INT)"))
    assert(e2.getCondition == "SCHEMA_NOT_FOUND", e2.getMessage)
    assert(!engine.repositoryExists("nope"))
    sql("CREATE NAMESPACE c.r")
    val e3 = intercept[AnalysisException](sql("SELECT * FROM c.r.missing"))
    assert(e3.getCondition == "TABLE_OR_VIEW_NOT_FOUND")
    intercept[AnalysisException](sql("INSERT INTO c.r.missing VALUES (1)"))
    intercept[AnalysisException](sql("DROP NAMESPACE c.nope"))
    intercept[AnalysisException](sql("SHOW TABLES IN c.nope"))
    intercept[AnalysisException](sql("SELECT * FROM c.a.b.t"))
  }

  test("bad versions and timestamps name the problem") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.first (x INT)")
    keyedTable((1, "a"))
    expectError(ErrorClass.RefNotFound, "nope")(intercept[Throwable](sql("SELECT * FROM c.r.t VERSION AS OF 'nope'")))
    expectError(ErrorClass.ImageNotFound, "past the root")(
      intercept[Throwable](sql("SELECT * FROM c.r.t VERSION AS OF 'main~9'")))
    expectError(ErrorClass.RefNotFound)(intercept[Throwable](sql("SELECT * FROM c.r.`t@nope`")))
    expectError(ErrorClass.ImageNotFound)(intercept[Throwable](
      sql("SELECT * FROM c.r.t TIMESTAMP AS OF '2000-01-01 00:00:00'")))
    expectError(ErrorClass.TableNotFound, "main~2")(intercept[Throwable](sql("SELECT * FROM c.r.t VERSION AS OF 'main~2'")))
    expectError(ErrorClass.InvalidRevision)(intercept[Throwable](sql("SELECT * FROM c.r.t VERSION AS OF ' '")))
    val bad = intercept[Throwable](sql("SELECT * FROM c.r.`t$bogus`"))
    expectError(ErrorClass.InvalidName, "bogus", "$history")(bad)
    expectError(ErrorClass.InvalidName, "repository-level")(intercept[Throwable](sql("SELECT * FROM c.r.`t$log`")))
  }

  test("PRIMARY KEY on a missing column, PARTITIONED BY and another provider are refused") {
    sql("CREATE NAMESPACE c.r")
    val e = failsWithoutCommit("r")(sql("CREATE TABLE c.r.t (id INT, v STRING, PRIMARY KEY (nope))"))
    assert(message(e).contains("nope"), message(e))
    assert(!sql("SHOW TABLES IN c.r").collect().exists(_.getString(1) == "t"))
    expectError(ErrorClass.MissingKeyColumn, "nope")(failsWithoutCommit("r")(
      sql("CREATE TABLE c.r.t (id INT) TBLPROPERTIES ('primaryKey' = 'nope')")))
    expectError(ErrorClass.Unsupported, "PARTITIONED BY")(failsWithoutCommit("r")(
      sql("CREATE TABLE c.r.t (id INT, d STRING) PARTITIONED BY (d)")))
    expectError(ErrorClass.Unsupported, "parquet")(failsWithoutCommit("r")(sql("CREATE TABLE c.r.t (id INT) USING parquet")))
    expectError(ErrorClass.SchemaMismatch, "reserved")(failsWithoutCommit("r")(sql("CREATE TABLE c.r.t (_vdup INT)")))
    expectError(ErrorClass.SchemaMismatch, "reserved")(failsWithoutCommit("r")(sql("CREATE TABLE c.r.t (_vrowid INT)")))
    expectError(ErrorClass.SchemaMismatch, "reserved")(failsWithoutCommit("r")(sql("CREATE TABLE c.r.t AS SELECT 1 AS _vrowid")))
    assert(commits("r") == 0)
  }

  test("MERGE whose source matches one target row twice fails and commits nothing") {
    keyedTable((1, "a"), (2, "b"))
    val session = spark; import session.implicits._
    Seq((1, "x"), (1, "y")).toDF("id", "v").createOrReplaceTempView("dup_src")
    val e = failsWithoutCommit("r")(sql(
      "MERGE INTO c.r.t t USING dup_src s ON t.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v"))
    assert(message(e).contains("MERGE_CARDINALITY_VIOLATION"), message(e))
  }

  test("UPDATE of a key column to a colliding value fails and commits nothing") {
    keyedTable((1, "a"), (2, "b"), (3, "c"))
    expectError(ErrorClass.KeyExists, "id=2")(failsWithoutCommit("r")(sql("UPDATE c.r.t SET id = 2 WHERE id = 1")))
    expectError(ErrorClass.DuplicateKey, "id=7")(failsWithoutCommit("r")(sql("UPDATE c.r.t SET id = 7 WHERE id > 1")))
    val e = failsWithoutCommit("r")(sql("UPDATE c.r.t SET id = NULL WHERE id = 1"))
    assert(message(e).toLowerCase.contains("null"), message(e))
    val session = spark; import session.implicits._
    Seq((1, "x"), (5, "y"), (5, "z")).toDF("id", "v").createOrReplaceTempView("ins_src")
    expectError(ErrorClass.DuplicateKey, "id=5")(failsWithoutCommit("r")(sql(
      """MERGE INTO c.r.t t USING ins_src s ON t.id = s.id
        |WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)""".stripMargin)))
    assert(sorted(sql("SELECT * FROM c.r.t")).size == 3)
  }

  test("INSERT of an existing or null key, and writes to a tag, commit nothing") {
    keyedTable((1, "a"))
    expectError(ErrorClass.KeyExists, "id=1")(failsWithoutCommit("r")(sql("INSERT INTO c.r.t VALUES (1, 'again')")))
    // literal rows are projected by Spark's optimizer before the write: its own not-null error, nothing committed
    val e = failsWithoutCommit("r")(sql("INSERT INTO c.r.t VALUES (NULL, 'x')"))
    assert(message(e).toLowerCase.contains("null"), message(e))
    engine.refs.createTag("r", "v1", Revision.DefaultBranch)
    expectError(ErrorClass.ImmutableRef)(failsWithoutCommit("r")(sql("DELETE FROM c.r.`t@v1` WHERE id = 1")))
    expectError(ErrorClass.RefNotFound)(failsWithoutCommit("r")(sql("INSERT INTO c.r.`t@nobranch` VALUES (5, 'x')")))
  }

  test("UPDATE, MERGE or INSERT ... SELECT setting a key to NULL fails with NULL_PRIMARY_KEY and commits nothing") {
    keyedTable((1, "a"), (2, "b"), (3, "c"))
    val before = sorted(sql("SELECT * FROM c.r.t"))
    expectError(ErrorClass.NullPrimaryKey, "UPDATE", "(id)", "Nothing was committed")(
      failsWithoutCommit("r")(sql("UPDATE c.r.t SET id = NULL")))
    expectError(ErrorClass.NullPrimaryKey, "UPDATE", "(id)")(
      failsWithoutCommit("r")(sql("UPDATE c.r.t SET id = CASE WHEN id = 2 THEN NULL ELSE id END WHERE id >= 2")))
    spark.createDataFrame(Seq((2, "x"))).toDF("k", "v").createOrReplaceTempView("src")
    expectError(ErrorClass.NullPrimaryKey, "MERGE", "(id)")(failsWithoutCommit("r")(sql(
      "MERGE INTO c.r.t t USING src s ON t.id = s.k WHEN MATCHED THEN UPDATE SET id = NULL")))
    // an insert-only MERGE is an INSERT of the source rows that match nothing
    expectError(ErrorClass.NullPrimaryKey, "(id)")(failsWithoutCommit("r")(sql(
      "MERGE INTO c.r.t t USING src s ON t.id = s.k + 10 WHEN NOT MATCHED THEN INSERT (id, v) VALUES (NULL, s.v)")))
    expectError(ErrorClass.NullPrimaryKey, "MERGE", "(id)")(failsWithoutCommit("r")(sql("MERGE INTO c.r.t t USING src s " +
      "ON t.id = s.k + 10 WHEN MATCHED THEN DELETE WHEN NOT MATCHED THEN INSERT (id, v) VALUES (NULL, s.v)")))
    expectError(ErrorClass.NullPrimaryKey, "INSERT", "(id)")(failsWithoutCommit("r")(
      sql("INSERT INTO c.r.t SELECT CASE WHEN id = 2 THEN NULL ELSE id + 10 END, v FROM c.r.t")))
    assert(sorted(sql("SELECT * FROM c.r.t")) == before)
    // a non-key column may still be set to NULL
    sql("UPDATE c.r.t SET v = NULL WHERE id = 1")
    assert(sorted(sql("SELECT * FROM c.r.t")).head == org.apache.spark.sql.Row(1, null))
  }

  test("bad procedure calls") {
    keyedTable((1, "a"))
    val unknown = intercept[Throwable](sql("CALL c.system.make_coffee('r')"))
    assert(message(unknown).contains("create_branch"), message(unknown))
    intercept[AnalysisException](sql("CALL c.system.create_branch('r')"))
    expectError(ErrorClass.RepositoryNotFound)(intercept[Throwable](sql("CALL c.system.create_branch('nope', 'dev')")))
    expectError(ErrorClass.RefNotFound)(intercept[Throwable](sql("CALL c.system.create_branch('r', 'dev', 'zzz')")))
    expectError(ErrorClass.InvalidName)(intercept[Throwable](sql("CALL c.system.create_branch('r', 'a b')")))
    expectError(ErrorClass.InvalidName, "empty")(intercept[Throwable](sql("CALL c.system.create_tag('r', '')")))
    expectError(ErrorClass.InvalidOption, "'tag'")(intercept[Throwable](sql("CALL c.system.create_tag('r', NULL)")))
    assert(engine.refs.all("r").map(_.shortName) == Seq("main"))
  }

  test("ALTER TABLE changes that cannot be applied") {
    keyedTable((1, "a"))
    expectError(ErrorClass.Unsupported, "primary key")(failsWithoutCommit("r")(sql("ALTER TABLE c.r.t DROP COLUMN id")))
    intercept[Throwable](sql("ALTER TABLE c.r.t ADD COLUMN v INT"))
    expectError(ErrorClass.Unsupported)(failsWithoutCommit("r")(sql("ALTER TABLE c.r.t ALTER COLUMN v COMMENT 'x'")))
    assert(commits("r") == 2)
  }
}
