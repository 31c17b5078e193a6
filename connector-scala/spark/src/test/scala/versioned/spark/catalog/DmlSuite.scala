package versioned.spark.catalog

import org.apache.spark.sql.Row
import versioned.core.{ChangeKind, ErrorClass, ObjectKind, ObjectMeta, Revision, TableUpdate, TableVersion}

/** A hook the test UDF calls once while a statement runs (local mode: same JVM as the driver). */
object ConcurrentCommit {
  @volatile var action: () => Unit = () => ()
  def fire(): Unit = synchronized { val a = action; action = () => (); a() }
}

/** DELETE / UPDATE / MERGE through Spark's row-level API in delta form: each statement is one DIFF commit. */
class DmlSuite extends CatalogSuiteBase {

  /** Objects the last commit on main added to table `t` of `r`. */
  private def newObjects(table: String = "t"): Seq[ObjectMeta] = {
    val now = tableAt("r", table).get.fragments.flatMap(_.objects).toSet
    val before = tableAt("r", table, "main~1").toSeq
      .flatMap(t => (t.fragments ++ t.compacted.toSeq.flatten).flatMap(_.objects)).toSet
    val metas = engine.objects((now -- before).toSeq)
    metas.values.toSeq
  }

  /** Change kinds of the DIFF rows the last commit wrote, read back from its objects. */
  private def changeKinds(table: String = "t"): Seq[Byte] = newObjects(table).flatMap { m =>
    spark.read.parquet(engine.config.objectUri(m.id)).select("_vchange").collect().map(_.getByte(0))
  }.sorted

  private def lastMessage: String = engine.history.log("r", Revision.DefaultBranch).head.image.message

  test("DELETE writes one DIFF with only the deleted keys") {
    keyedTable((1, "a"), (2, "b"), (3, "c"), (4, "b"))
    sql("DELETE FROM c.r.t WHERE v = 'b'")
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a"), Row(3, "c")))
    assert(commits("r") == 3 && lastMessage == "delete from t")
    assert(newObjects().forall(_.kind == ObjectKind.Diff))
    assert(changeKinds() == Seq(ChangeKind.Delete, ChangeKind.Delete))
    val head = headOf("r")
    sql("DELETE FROM c.r.t WHERE v = 'zzz'")
    assert(headOf("r") == head, "a DELETE that matches nothing records no image")
    assert(sorted(read("r.t")) == Seq(Row(1, "a"), Row(3, "c")))
  }

  test("UPDATE writes only rows whose values change") {
    keyedTable((1, "a"), (2, "b"), (3, "c"))
    sql("UPDATE c.r.t SET v = upper(v) WHERE id <= 2")
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "A"), Row(2, "B"), Row(3, "c")))
    assert(changeKinds() == Seq(ChangeKind.Update, ChangeKind.Update) && lastMessage == "update t")
    sql("UPDATE c.r.t SET v = 'c' WHERE id >= 2")
    assert(changeKinds() == Seq(ChangeKind.Update), "the unchanged row 3 is not written")
    val head = headOf("r")
    sql("UPDATE c.r.t SET v = v")
    assert(headOf("r") == head)
  }

  test("UPDATE of key columns moves rows; shifting every key works") {
    keyedTable((1, "a"), (2, "b"), (3, "c"))
    sql("UPDATE c.r.t SET id = id + 100 WHERE id = 1")
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(101, "a"), Row(2, "b"), Row(3, "c")))
    assert(changeKinds() == Seq(ChangeKind.Insert, ChangeKind.Delete))
    sql("UPDATE c.r.t SET id = id + 1 WHERE id < 100")
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(101, "a"), Row(3, "b"), Row(4, "c")))
    assert(changeKinds() == Seq(ChangeKind.Insert, ChangeKind.Delete, ChangeKind.Update))
  }

  test("MERGE with delete, update and insert clauses is one commit") {
    keyedTable((1, "a"), (2, "b"), (3, "c"))
    val session = spark; import session.implicits._
    Seq((1, "x", "delete"), (2, "B", "upsert"), (3, "c", "upsert"), (9, "i", "upsert")).toDF("id", "v", "op")
      .createOrReplaceTempView("src")
    sql("""MERGE INTO c.r.t AS t USING src AS s ON t.id = s.id
          |WHEN MATCHED AND s.op = 'delete' THEN DELETE
          |WHEN MATCHED THEN UPDATE SET t.v = s.v
          |WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)""".stripMargin)
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(2, "B"), Row(3, "c"), Row(9, "i")))
    assert(commits("r") == 3 && lastMessage == "merge into t")
    assert(changeKinds() == Seq(ChangeKind.Insert, ChangeKind.Delete, ChangeKind.Update))
    // only NOT MATCHED: Spark plans an append
    Seq((10, "j", ""), (2, "no", "")).toDF("id", "v", "op").createOrReplaceTempView("src2")
    sql("MERGE INTO c.r.t t USING src2 s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, s.v)")
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(10, "j"), Row(2, "B"), Row(3, "c"), Row(9, "i")))
    // NOT MATCHED BY SOURCE
    sql("MERGE INTO c.r.t t USING src2 s ON t.id = s.id WHEN NOT MATCHED BY SOURCE THEN DELETE")
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(10, "j"), Row(2, "B")))
  }

  test("DML on a branch-qualified table moves only that branch") {
    keyedTable((1, "a"), (2, "b"))
    engine.refs.createBranch("r", "dev", Revision.DefaultBranch)
    val main = headOf("r")
    sql("DELETE FROM c.r.`t@dev` WHERE id = 1")
    sql("UPDATE c.r.`t@dev` SET v = 'z'")
    assert(headOf("r") == main)
    assert(sorted(sql("SELECT * FROM c.r.`t@dev`")) == Seq(Row(2, "z")))
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a"), Row(2, "b")))
    assert(commits("r", "dev") == 4)
  }

  test("key-less tables: rows are identified by all columns and their duplicate ordinal") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.nk (k STRING, n INT)")
    sql("INSERT INTO c.r.nk VALUES ('a', 1), ('a', 1), ('b', 2), ('c', NULL), ('c', NULL)")
    sql("DELETE FROM c.r.nk WHERE k = 'a'")
    assert(sorted(sql("SELECT * FROM c.r.nk")) == Seq(Row("b", 2), Row("c", null), Row("c", null)))
    assert(changeKinds("nk") == Seq(ChangeKind.Delete, ChangeKind.Delete))
    sql("UPDATE c.r.nk SET n = 7 WHERE k = 'c'")
    assert(sorted(sql("SELECT * FROM c.r.nk")) == Seq(Row("b", 2), Row("c", 7), Row("c", 7)))
    assert(changeKinds("nk") == Seq(ChangeKind.Insert, ChangeKind.Insert, ChangeKind.Delete, ChangeKind.Delete))
    val head = headOf("r")
    sql("UPDATE c.r.nk SET n = 2 WHERE k = 'b'")
    assert(headOf("r") == head, "an update that changes nothing records no image")
    val session = spark; import session.implicits._
    Seq(("b", 20), ("d", 4)).toDF("k", "n").createOrReplaceTempView("nsrc")
    sql("""MERGE INTO c.r.nk t USING nsrc s ON t.k = s.k
          |WHEN MATCHED THEN UPDATE SET n = s.n WHEN NOT MATCHED THEN INSERT *""".stripMargin)
    assert(sorted(sql("SELECT * FROM c.r.nk")) == Seq(Row("b", 20), Row("c", 7), Row("c", 7), Row("d", 4)))
    sql("INSERT INTO c.r.nk VALUES ('c', 7)")
    sql("DELETE FROM c.r.nk WHERE k = 'c'")
    assert(sorted(read("r.nk")) == Seq(Row("b", 20), Row("d", 4)))
    assert(sql("SELECT _vrowid._vdup FROM c.r.nk WHERE k = 'b'").head().getInt(0) >= 0)
  }

  test("many rows across fragments: DIFF rows only for the changed keys") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.big TBLPROPERTIES ('primaryKey' = 'id') AS SELECT id, id * 2 AS x FROM range(500)")
    assert(tableAt("r", "big").get.fragments.size > 1)
    sql("UPDATE c.r.big SET x = -1 WHERE id % 100 = 0")
    sql("DELETE FROM c.r.big WHERE id BETWEEN 10 AND 14")
    assert(sql("SELECT count(*) FROM c.r.big").head().getLong(0) == 495)
    assert(sql("SELECT count(*) FROM c.r.big WHERE x = -1").head().getLong(0) == 5)
    assert(newObjects("big").map(_.rowCount).sum == 5)
  }

  test("DML with a short chain limit: results stay exact and chains stay short") {
    spark.conf.set(versioned.spark.session.VersionedOptions.ConfMaxChain, "3")
    try {
      sql("CREATE NAMESPACE c.r")
      sql("CREATE TABLE c.r.t TBLPROPERTIES ('primaryKey' = 'id') AS SELECT CAST(id AS INT) AS id, 'v' AS v FROM range(120)")
      (1 to 5).foreach { i =>
        sql(s"UPDATE c.r.t SET v = 'u$i' WHERE id % 7 = $i")
        sql(s"DELETE FROM c.r.t WHERE id = ${i * 20}")
      }
      sql("MERGE INTO c.r.t t USING (SELECT CAST(id AS INT) AS id FROM range(115, 125)) s ON t.id = s.id " +
        "WHEN MATCHED THEN UPDATE SET v = 'm' WHEN NOT MATCHED THEN INSERT (id, v) VALUES (s.id, 'new')")
      val expected = (0 until 125).filterNot(i => i > 0 && i <= 100 && i % 20 == 0).map { i =>
        val v = if (i >= 120) "new" else if (i >= 115) "m" else if (i % 7 >= 1 && i % 7 <= 5) s"u${i % 7}" else "v"
        Row(i, v)
      }
      assert(sql("SELECT * FROM c.r.t").collect().toSet == expected.toSet)
      assert(read("r.t").count() == expected.size)
      val t = tableAt("r", "t").get
      assert(t.compacted.isDefined || t.fragments.forall(_.objects.size <= 4), t)
    } finally spark.conf.unset(versioned.spark.session.VersionedOptions.ConfMaxChain)
  }

  test("a commit to another table that lands while a statement runs is kept, and the statement is rebased on it") {
    keyedTable((1, "a"), (2, "b"))
    val read = headOf("r").get
    ConcurrentCommit.action = () => engine.commit("r", "main", Some(read),
      Map("other" -> TableUpdate.Put(TableVersion("other", "{\"type\":\"struct\",\"fields\":[]}", Nil, hiddenKey = true, Nil), Nil)),
      "someone", "concurrent")
    spark.udf.register("concurrently", (s: String) => { ConcurrentCommit.fire(); s })
    sql("UPDATE c.r.t SET v = concat(concurrently(v), '!')")
    val log = engine.history.log("r", Revision.DefaultBranch).map(_.image)
    assert(log(1).message == "concurrent" && log.head.parents == Seq(log(1).hash), "the UPDATE lands on the concurrent commit")
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a!"), Row(2, "b!")))
    assert(engine.tables("r", log.head.hash).map(_.name).sorted == Seq("other", "t"))
  }

  test("a concurrent commit changing the rows a statement changes makes it fail with REF_CONFLICT; one on other rows does not") {
    keyedTable((1, "a"), (2, "b"))
    val first = headOf("r").get
    sql("UPDATE c.r.t SET v = 'A' WHERE id = 1")
    // the concurrent commit puts back t as it was at `first`: it changes key 1 only
    val old = tableAt("r", "t", first).get
    def revertKey1(): Unit = engine.commit("r", "main", headOf("r"), Map("t" -> TableUpdate.Put(old, Nil)), "someone", "concurrent")
    spark.udf.register("concurrently", (s: String) => { ConcurrentCommit.fire(); s })
    ConcurrentCommit.action = () => revertKey1()
    val e = intercept[Throwable](sql("UPDATE c.r.t SET v = concat(concurrently(v), '!') WHERE id = 1"))
    expectError(ErrorClass.RefConflict)(e)
    assert(engine.history.log("r", Revision.DefaultBranch).head.image.message == "concurrent")
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a"), Row(2, "b")))
    sql("UPDATE c.r.t SET v = 'A' WHERE id = 1")
    ConcurrentCommit.action = () => revertKey1()
    sql("UPDATE c.r.t SET v = concat(concurrently(v), '!') WHERE id = 2")
    assert(sorted(sql("SELECT * FROM c.r.t")) == Seq(Row(1, "a"), Row(2, "b!")), "planned again on the new head")
  }
}
