package versioned.spark.catalog

import org.apache.spark.sql.Row
import org.apache.spark.sql.types.{IntegerType, StringType, StructField, StructType}
import versioned.core.{ObjectKind, Revision}
import versioned.spark.write.Snapshots

/**
 * DELETE, UPDATE and MERGE through SQL on tables without a primary key, written every way a user can
 * write one (DataFrame API append and overwrite, CTAS, INSERT, many small commits, `materialize`),
 * with default compaction. Each statement is checked against a multiset oracle, and every earlier
 * version must still read as it was.
 */
class KeylessDmlSuite extends CatalogSuiteBase {
  private val schema = StructType(Seq(StructField("k", StringType), StructField("n", IntegerType)))

  /** Duplicates (also of NULLs) plus enough rows for several fragments (the suites use 50-row fragments). */
  private val initial: Seq[Row] =
    Seq(Row("a", 1), Row("a", 1), Row("b", 2), Row("b", 2), Row("c", null), Row("c", null), Row("d", 4)) ++
      (0 until 120).map(i => Row(s"x${i % 60}", i % 60))

  private def frame(rows: Seq[Row]) = spark.createDataFrame(spark.sparkContext.parallelize(rows, 3), schema)

  private def literal(r: Row): String = s"('${r.getString(0)}', ${if (r.isNullAt(1)) "CAST(NULL AS INT)" else r.getInt(1)})"

  private def multiset(rows: Seq[Row]): Map[Row, Int] = rows.groupBy(identity).map { case (r, g) => r -> g.size }

  private def assertRows(actual: Seq[Row], expected: Seq[Row], clue: String): Unit = {
    val (a, e) = (multiset(actual), multiset(expected))
    assert(a == e, s"$clue: unexpected ${(a.toSet -- e.toSet).take(8)}; missing ${(e.toSet -- a.toSet).take(8)}")
  }

  private val src = Seq(("b", 100, "upsert"), ("d", 0, "delete"), ("e", 5, "upsert"), ("x3", 33, "upsert"), ("x4", 0, "delete"))

  /** The statements and their oracles over the multiset of rows. */
  private val statements: Seq[(String, Seq[Row] => Seq[Row])] = Seq(
    "DELETE FROM c.r.t WHERE k = 'a'" -> (_.filterNot(_.getString(0) == "a")),
    "UPDATE c.r.t SET n = coalesce(n, 0) + 10 WHERE k IN ('b', 'c', 'x7')" -> (_.map {
      case Row(k: String, n) if Set("b", "c", "x7")(k) => Row(k, Option(n).fold(0)(_.asInstanceOf[Int]) + 10)
      case r => r
    }),
    """MERGE INTO c.r.t AS t USING msrc AS s ON t.k = s.k
      |WHEN MATCHED AND s.op = 'delete' THEN DELETE
      |WHEN MATCHED THEN UPDATE SET t.n = s.n
      |WHEN NOT MATCHED THEN INSERT (k, n) VALUES (s.k, s.n)""".stripMargin -> { rows =>
      val bySrc = src.map(s => s._1 -> s).toMap
      rows.flatMap { r =>
        bySrc.get(r.getString(0)) match {
          case Some((_, _, "delete")) => None
          case Some((k, n, _)) => Some(Row(k, n))
          case None => Some(r)
        }
      } ++ src.filter(s => !rows.exists(_.getString(0) == s._1)).map(s => Row(s._1, s._2))
    },
    "DELETE FROM c.r.t WHERE n >= 50 OR n IS NULL" -> (_.filterNot(r => r.isNullAt(1) || r.getInt(1) >= 50)))

  /** Runs every statement on `c.r.t` (holding `initial`), checking each result and every earlier version. */
  private def dmlMatchesOracle(): Unit = {
    val session = spark; import session.implicits._
    src.toDF("k", "n", "op").createOrReplaceTempView("msrc")
    var expected = initial
    var versions = Seq(headOf("r").get -> expected)
    assertRows(sql("SELECT * FROM c.r.t").collect().toSeq, expected, "initial content")
    statements.foreach { case (stmt, oracle) =>
      sql(stmt)
      expected = oracle(expected)
      assertRows(sql("SELECT * FROM c.r.t").collect().toSeq, expected, s"after: $stmt")
      assertRows(read("r.t").collect().toSeq, expected, s"format read after: $stmt")
      versions.foreach { case (hash, rows) =>
        assertRows(sql(s"SELECT * FROM c.r.t VERSION AS OF '$hash'").collect().toSeq, rows, s"version $hash after: $stmt")
      }
      versions :+= headOf("r").get -> expected
    }
    assert(versions.map(_._1).distinct.size == versions.size, "every statement committed")
  }

  test("key-less DML after a DataFrame API append") {
    write(frame(initial.take(40)), "r.t")
    write(frame(initial.drop(40)), "r.t")
    dmlMatchesOracle()
  }

  test("key-less DML after a DataFrame API overwrite") {
    write(frame(Seq(Row("z", 0))), "r.t")
    overwrite(frame(initial), "r.t")
    dmlMatchesOracle()
  }

  test("key-less DML after CTAS") {
    frame(initial).createOrReplaceTempView("init")
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.t AS SELECT * FROM init")
    dmlMatchesOracle()
  }

  test("key-less DML after INSERT") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.t (k STRING, n INT)")
    sql(s"INSERT INTO c.r.t VALUES ${initial.map(literal).mkString(", ")}")
    dmlMatchesOracle()
  }

  test("key-less DML after many small commits (commit-time compaction)") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.t (k STRING, n INT)")
    initial.grouped(9).foreach(g => sql(s"INSERT INTO c.r.t VALUES ${g.map(literal).mkString(", ")}"))
    val log = engine.history.log("r", Revision.DefaultBranch)
    assert(log.exists(e => tableAt("r", "t", e.image.hash).exists(_.compacted.isDefined)), "commit-time compaction ran")
    dmlMatchesOracle()
  }

  test("key-less DML after Snapshots.materialize") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.t (k STRING, n INT)")
    sql(s"INSERT INTO c.r.t VALUES ${initial.drop(3).map(literal).mkString(", ")}")
    sql(s"INSERT INTO c.r.t VALUES ${initial.take(3).map(literal).mkString(", ")}")
    Snapshots.materialize(spark, engine, "r", Map.empty)
    val t = tableAt("r", "t").get
    val ids = t.effectiveFragments.flatMap(_.objects)
    assert(t.compacted.isDefined && ids.map(engine.objects(ids)).forall(_.kind == ObjectKind.Snap), t)
    dmlMatchesOracle()
  }
}
