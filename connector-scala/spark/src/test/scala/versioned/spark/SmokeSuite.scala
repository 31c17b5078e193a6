package versioned.spark

import org.apache.spark.sql.Row

class SmokeSuite extends VersionedSparkSuite {
  test("write, append, overwrite and time travel") {
    val session = spark; import session.implicits._
    val v1 = (1 to 200).map(i => (i, s"v$i", i * 1.5)).toDF("id", "name", "score")
    write(v1, "r.t", "primaryKey" -> "id", "message" -> "first")
    assert(read("r.t").count() == 200)
    write(Seq((201, "x", 0.0)).toDF("id", "name", "score"), "r.t")
    assert(read("r.t").count() == 201)
    val v3 = (1 to 150).map(i => (i, if (i % 10 == 0) s"changed$i" else s"v$i", i * 1.5)).toDF("id", "name", "score")
    overwrite(v3, "r.t")
    assert(rows(read("r.t")) == rows(v3))
    assert(rows(read("r.t", "ref" -> "main~1")).size == 201)
    assert(rows(read("r.t", "ref" -> "main~2")) == rows(v1))
    assert(read("r.t").filter($"id" === 30).collect().toSeq == Seq(Row(30, "changed30", 45.0)))
    assert(read("r.t").filter($"name" === "v31").collect().toSeq == Seq(Row(31, "v31", 46.5)))
    val log = engine.history.log("r", versioned.core.Revision.DefaultBranch)
    assert(log.size == 3)
  }

  test("key-less table keeps duplicates") {
    val session = spark; import session.implicits._
    val a = Seq(("a", 1), ("a", 1), ("b", 2)).toDF("k", "v")
    write(a, "r.nk")
    write(Seq(("a", 1)).toDF("k", "v"), "r.nk")
    assert(sortedRows(read("r.nk")) == Seq(Row("a", 1), Row("a", 1), Row("a", 1), Row("b", 2)))
    overwrite(Seq(("a", 1), ("c", 3)).toDF("k", "v"), "r.nk")
    assert(sortedRows(read("r.nk")) == Seq(Row("a", 1), Row("c", 3)))
    assert(sortedRows(read("r.nk", "ref" -> "main~1")).size == 4)
  }

  test("limit is pushed to partitions and results stay correct under DIFFs") {
    val session = spark; import session.implicits._
    write((1 to 300).map(i => (i, i)).toDF("id", "v"), "r.l", "primaryKey" -> "id")
    write((1 to 300 by 7).map(i => (i, -i)).toDF("id", "v"), "r.l", "upsert" -> "true")
    val df = read("r.l").limit(5)
    assert(df.queryExecution.executedPlan.toString.contains("limit=5"))
    val got = df.collect()
    assert(got.length == 5)
    val all = read("r.l").collect().map(r => r.getInt(0) -> r.getInt(1)).toMap
    got.foreach(r => assert(all(r.getInt(0)) == r.getInt(1)))
  }

  test("deleteColumn applies upserts and deletes by key in one commit without reading the table") {
    val session = spark; import session.implicits._
    write((1 to 100).map(i => (i, s"v$i")).toDF("id", "v"), "r.c", "primaryKey" -> "id")
    val feed = Seq((1, "one", false), (2, null, true), (500, "new", false), (999, null, true)).toDF("id", "v", "del")
    write(feed, "r.c", "deleteColumn" -> "del")
    val got = read("r.c").collect().map(r => r.getInt(0) -> r.getString(1)).toMap
    assert(got.size == 100 && got(1) == "one" && !got.contains(2) && got(500) == "new")
    val e = intercept[Exception](overwrite(feed, "r.c", "deleteColumn" -> "del"))
    assert(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).exists(_.getMessage.contains("INVALID_OPTION")))
    assert(engine.history.log("r", versioned.core.Revision.DefaultBranch).size == 2)
  }
}
