package versioned.spark.diff

import scala.util.Random
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types._
import versioned.core.{ErrorClass, Revision}
import versioned.spark.VersionedTestBase
import versioned.spark.api.VersionedApi
import versioned.spark.catalog.VersionedCatalog

/** Row blame: `VersionedApi.blame` and the `t$blame` metadata table (docs/BLAME.md). */
class BlameSuite extends VersionedTestBase {
  override protected def extraConf: Map[String, String] = Map("spark.sql.catalog.c" -> classOf[VersionedCatalog].getName)

  private val schema = new StructType().add("id", IntegerType).add("v", StringType)
  private def data(rows: (Int, String)*): DataFrame = frame(schema, rows.map { case (i, v) => Row(i, v) }, 2)
  private def branch: String = engine.defaultBranch("r")
  private def head: String = headHash("r", branch).get
  private def upsert(rows: (Int, String)*): String = { write(data(rows: _*), "r.t", "upsert" -> "true"); head }
  private def delete(cond: String): String = {
    VersionedApi.deleteWhere(spark, null, "r.t", cond, null, null, null); awaitCompaction(); head
  }

  /** The blame as (identity columns..., commit hash), in a map from the identity. */
  private def blameOf(df: DataFrame, width: Int): Map[Seq[Any], String] = {
    val rows = df.collect().toSeq
    val byId = rows.map(r => (0 until width).map(r.get) -> r.getAs[String](Blame.CommitHash))
    assert(byId.map(_._1).distinct.size == rows.size, s"one blame row per row identity: $rows")
    byId.toMap
  }
  private def apiBlame(ref: String = null): Map[Seq[Any], String] =
    blameOf(VersionedApi.blame(spark, null, "r.t", ref), 1)

  test("blame: each row's last change along the first-parent line, with the commit's metadata, at any ref") {
    write(data((1 to 6).map(i => i -> s"a$i"): _*), "r.t", "primaryKey" -> "id", "message" -> "load", "author" -> "ann")
    val c0 = head
    val c1 = upsert(2 -> "b2", 7 -> "b7")
    engine.refs.createTag("r", "mid", Revision.Spec(branch))
    val c2 = delete("id = 3")
    val c3 = upsert(3 -> "c3", 5 -> "c5")
    val expected = Map(1 -> c0, 2 -> c1, 3 -> c3, 4 -> c0, 5 -> c3, 6 -> c0, 7 -> c1).map { case (k, c) => Seq(k) -> c }
    assert(apiBlame() == expected)
    assert(apiBlame(branch) == expected)
    assert(apiBlame("mid") == Map(1 -> c0, 2 -> c1, 3 -> c0, 4 -> c0, 5 -> c0, 6 -> c0, 7 -> c1).map { case (k, c) => Seq(k) -> c })
    assert(apiBlame(c2) == Map(1 -> c0, 2 -> c1, 4 -> c0, 5 -> c0, 6 -> c0, 7 -> c1).map { case (k, c) => Seq(k) -> c })
    // the commit columns, and the same answer through SQL (t$blame, t@ref$blame, VERSION AS OF)
    val df = VersionedApi.blame(spark, null, "r.t", null)
    assert(df.schema.fieldNames.toSeq == Seq("id", Blame.CommitHash, Blame.CommitVersion, Blame.CommitTimestamp,
      Blame.CommitAuthor, Blame.CommitMessage))
    val one = df.filter("id = 4").collect().head
    val img = engine.resolve("r", Revision.Spec(c0))
    assert(one.getAs[String](Blame.CommitAuthor) == "ann" && one.getAs[String](Blame.CommitMessage) == "load")
    assert(one.getAs[java.sql.Timestamp](Blame.CommitTimestamp).getTime == img.createdMs)
    assert(one.getAs[Long](Blame.CommitVersion) == engine.lineage.withSeq("r", c0).seq)
    assert(blameOf(spark.sql("SELECT * FROM c.r.`t$blame`"), 1) == expected)
    assert(blameOf(spark.sql("SELECT * FROM c.r.`t@mid$blame`"), 1) == apiBlame("mid"))
    assert(blameOf(spark.sql(s"SELECT * FROM c.r.`t$$blame` VERSION AS OF '$c2'"), 1) == apiBlame(c2))
    def shape(t: StructType) = t.fields.toSeq.map(f => f.name -> f.dataType)
    assert(shape(spark.sql("SELECT * FROM c.r.`t$blame`").schema) == shape(df.schema))
  }

  test("blame of a key-less table: by row identity, each copy of a duplicated row on its own") {
    val s = new StructType().add("x", IntegerType).add("y", StringType)
    write(frame(s, Seq(Row(1, "p"), Row(1, "p"), Row(2, null)), 1), "r.k", "message" -> "load")
    val c0 = head
    write(frame(s, Seq(Row(1, "p"), Row(3, "q")), 1), "r.k")
    val c1 = head
    def rows() = VersionedApi.blame(spark, null, "r.k", null).collect().toSeq
      .map(r => (r.get(0), r.get(1), r.getAs[String](Blame.CommitHash))).sortBy(_.toString)
    assert(rows() == Seq((1, "p", c0), (1, "p", c0), (1, "p", c1), (2, null, c0), (3, "q", c1)).sortBy(_.toString))
    // an overwrite: the rows it kept keep their commit, the copy it removed is gone
    overwrite(frame(s, Seq(Row(1, "p"), Row(2, null), Row(3, "q"), Row(4, "r")), 1), "r.k")
    val c2 = head
    assert(rows() == Seq((1, "p", c0), (2, null, c0), (3, "q", c1), (4, "r", c2)).sortBy(_.toString))
  }

  test("blame walks only as far as it must: every row rewritten stops the walk before the root") {
    write(data((1 to 4).map(i => i -> "a"): _*), "r.t", "primaryKey" -> "id")
    val hs = (1 to 6).map(n => upsert(n -> s"n$n"))
    val last = upsert((1 to 4).map(i => i -> "z"): _*)
    Blame.walked.set(0)
    assert(apiBlame() == (1 to 4).map(i => Seq(i) -> last).toMap ++ Map(Seq(5) -> hs(4), Seq(6) -> hs(5)))
    assert(Blame.walked.get() < 8, s"walked ${Blame.walked.get()} of 8 commits")
  }

  test("an overwrite: rows it left as they were keep their older commit") {
    write(data((1 to 5).map(i => i -> s"a$i"): _*), "r.t", "primaryKey" -> "id")
    val c0 = head
    val c1 = upsert(2 -> "b")
    overwrite(data((1 to 5).filter(_ != 4).map(i => i -> (if (i == 5) "new" else if (i == 2) "b" else s"a$i")) :+ (9 -> "n"): _*), "r.t")
    val c2 = head
    assert(apiBlame() == Map(1 -> c0, 2 -> c1, 3 -> c0, 5 -> c2, 9 -> c2).map { case (k, c) => Seq(k) -> c })
  }

  test("across a tail split of the compacted form (new fragment bounds), each row keeps the commit that changed it") {
    withConf("spark.versioned.fragment.targetRows" -> "20") {
      write(data((1 to 20).map(i => i -> "a"): _*), "r.t", "primaryKey" -> "id")
      val c0 = head
      val c1 = upsert((100 until 130).map(i => i -> "b"): _*) // above the SNAP's largest key: compaction splits the tail
      val c2 = upsert(5 -> "c", 200 -> "c")
      val expected = (1 to 20).map(i => Seq(i) -> (if (i == 5) c2 else c0)) ++ (100 until 130).map(i => Seq(i) -> c1) :+
        (Seq(200) -> c2)
      assert(apiBlame() == expected.toMap)
      val bounds = engine.tableOption("r", c2, "t").get.fragments.map(_.lower)
      assert(bounds.size > 1, s"the commit after the split has the split's bounds: $bounds")
    }
  }

  test("blame agrees with an oracle over random upserts and deletes (compaction on)") {
    val rnd = new Random(37)
    write(data((0 until 50).map(i => i -> "v0"): _*), "r.t", "primaryKey" -> "id")
    val last = scala.collection.mutable.Map[Int, String]((0 until 50).map(_ -> head): _*)
    (1 to 25).foreach { n =>
      if (rnd.nextInt(4) == 0 && last.nonEmpty) {
        val gone = rnd.shuffle(last.keys.toSeq).take(1 + rnd.nextInt(3))
        val c = delete(s"id IN (${gone.mkString(",")})")
        gone.foreach(last.remove)
        assert(c != null)
      } else {
        val keys = Seq.fill(1 + rnd.nextInt(6))(rnd.nextInt(70)).distinct
        val c = upsert(keys.map(k => k -> s"v$n"): _*)
        keys.foreach(k => last(k) = c)
      }
    }
    assert(apiBlame() == last.map { case (k, c) => Seq(k) -> c }.toMap)
  }

  test("blame of a table that does not exist at the ref: TABLE_NOT_FOUND, nothing committed") {
    write(data(1 -> "a"), "r.t", "primaryKey" -> "id")
    engine.refs.createTag("r", "before", Revision.Spec(branch))
    write(data(1 -> "b"), "r.u", "primaryKey" -> "id")
    val before = repoState("r", "t")
    expectError(ErrorClass.TableNotFound, "u")(VersionedApi.blame(spark, null, "r.u", "before"))
    expectError(ErrorClass.TableNotFound, "nope")(VersionedApi.blame(spark, null, "r.nope", null))
    expectError(ErrorClass.TableNotFound, "u")(spark.sql("SELECT * FROM c.r.`u@before$blame`").collect())
    expectError(ErrorClass.RefNotFound)(VersionedApi.blame(spark, null, "r.t", "nope"))
    assert(repoState("r", "t") == before)
  }
}
