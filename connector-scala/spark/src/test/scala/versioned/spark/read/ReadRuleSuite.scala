package versioned.spark.read

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types._
import versioned.core._
import versioned.spark.VersionedTestBase
import versioned.spark.api.VersionedApi
import versioned.spark.diff.TableDiff
import versioned.spark.session.VersionedOptions

/**
 * The read rule (docs/FORMAT.md): every object of a fragment's chain is read within the fragment's bounds, so an
 * object listed by several fragments (a shared DIFF) gives each fragment its own keys. Two tables hold the same rows
 * and the same objects (content-addressed); `t` takes a scattered upsert as per-fragment DIFFs, `s` gets the same
 * DIFFs appended to every one of its chains, each chain listing objects mostly outside its bounds. Every reader
 * must see the same table in both: scans and key lookups, diffs, the change feed, blame, merges and compaction.
 */
class ReadRuleSuite extends VersionedTestBase {
  override protected def extraConf: Map[String, String] =
    Map("spark.sql.catalog.c" -> classOf[versioned.spark.catalog.VersionedCatalog].getName)

  private val schema = new StructType().add("id", IntegerType).add("v", StringType)
  private def location = Map(VersionedOptions.Warehouse -> warehouse.getAbsolutePath)
  private def head(branch: String = "main"): Image = engine.resolve("r", Revision.Spec(branch))
  private def sorted(df: DataFrame): Seq[Row] = df.collect().toSeq.sortBy(_.toString)

  /** Loads both tables, upserts `t` and gives `s` the upsert's DIFFs in every chain; the images before and after. */
  private def setUp(): (Image, Image) = {
    withConf(VersionedOptions.ConfFragmentRows -> "50") {
      val rows = (0 until 300).map(i => Row(i, s"n$i"))
      write(frame(schema, rows), "r.t", "primaryKey" -> "id")
      write(frame(schema, rows), "r.s", "primaryKey" -> "id")
    }
    val loaded = head()
    val (t0, s0) = (engine.table("r", loaded, "t"), engine.table("r", loaded, "s"))
    assert(t0.fragments.size >= 4, s"the table should have several fragments: ${t0.fragments.size}")
    assert(s0.fragments == t0.fragments, "both tables should list the same objects")
    val change = Seq(Row(3, "u3", false), Row(77, "u77", false), Row(140, null, true), Row(222, "u222", false),
      Row(299, "u299", false), Row(1000, "i1000", false), Row(51, null, true))
    // one DIFF per fragment (a shared DIFF is what `s` is given by hand)
    withConf(versioned.spark.session.Setting.SharedDiffMaxRows.key -> "0")(
      write(frame(schema.add("gone", BooleanType), change), "r.t", "upsert" -> "true", "deleteColumn" -> "gone"))
    val t1 = engine.table("r", head(), "t")
    val added = t1.fragments.zip(t0.fragments).flatMap { case (a, b) => a.objects.drop(b.objects.size) }
    assert(added.size >= 4, s"the upsert should write one DIFF per fragment it touches: $added")
    // recorded as shared objects (they may hold keys of other fragments), in a format 2 table version
    engine.metastore.tx(c => Sql.update(c, s"UPDATE vc_objects SET shared = 1 WHERE id IN (${added.map(_ => "?").mkString(",")})",
      added: _*))
    val shared = s0.copy(fragments = s0.fragments.map(f => f.copy(objects = f.objects ++ added)), compacted = None,
      format = TableFormat.SharedObjects)
    engine.commit("r", "main", Some(head().hash), Map("s" -> TableUpdate.Put(shared, Nil)), "test",
      "the upsert's DIFFs in every chain of s")
    awaitCompaction()
    (loaded, head())
  }

  test("scans, key lookups and counts read each chain's objects within the fragment's bounds") {
    setUp()
    val expected = sorted(read("r.t"))
    assert(expected.size == 299 && expected.contains(Row(1000, "i1000")) && !expected.exists(_.getInt(0) == 140))
    assert(sorted(read("r.s")) == expected)
    assert(read("r.s").count() == 299)
    for (cond <- Seq("id = 77", "id IN (3, 51, 140, 299, 1000)", "id > 200", "v LIKE 'u%'"))
      assert(sorted(read("r.s").filter(cond)) == sorted(read("r.t").filter(cond)), cond)
    // a lookup on the driver (deleteWhere by keys) finds each key once
    VersionedApi.deleteWhere(spark, null, "r.s", "id IN (77, 222)", null, null, null)
    VersionedApi.deleteWhere(spark, null, "r.t", "id IN (77, 222)", null, null, null)
    awaitCompaction()
    assert(sorted(read("r.s")) == sorted(read("r.t")))
  }

  test("diffs and the change feed across a commit of shared DIFFs give the per-fragment DIFFs' rows") {
    val (loaded, shared) = setUp()
    val upsert = engine.image("r", shared.parents.head)
    def diff(table: String, from: Image, to: Image, fast: Boolean) =
      sorted(TableDiff.diff(spark, location, s"r.$table", from, to, fastPath = fast))
    val expected = diff("t", loaded, upsert, fast = false)
    assert(expected.size == 7)
    assert(diff("s", loaded, shared, fast = true) == expected)
    assert(diff("s", loaded, shared, fast = false) == expected)
    assert(diff("s", shared, loaded, fast = true) == diff("t", upsert, loaded, fast = false))
    def feed(table: String, from: Image, to: Image) = sorted(spark.sql(
      s"SELECT * FROM c.r.$table CHANGES FROM VERSION '${from.hash}' TO VERSION '${to.hash}'").drop("_commit_version", "_commit_timestamp"))
    assert(feed("s", shared, shared) == feed("t", upsert, upsert))
    assert(feed("s", shared, shared).size >= 7)
  }

  test("blame attributes each changed key once, to the commit that listed the shared DIFFs") {
    val (_, shared) = setUp()
    val upsert = engine.image("r", shared.parents.head)
    def changedBy(table: String, c: Image) = VersionedApi.blame(spark, null, s"r.$table", null).collect()
      .filter(_.getAs[String](versioned.spark.diff.Blame.CommitHash) == c.hash).map(_.getInt(0)).sorted.toSeq
    assert(changedBy("t", upsert) == Seq(3, 222, 299, 1000, 77).sorted)
    assert(changedBy("s", shared) == changedBy("t", upsert))
    assert(VersionedApi.blame(spark, null, "r.s", null).count() == 299)
  }

  test("a three-way merge of a branch whose chains list shared DIFFs, and compaction, keep the rows") {
    val (loaded, _) = setUp()
    VersionedApi.createBranch(spark, null, "r", "side", loaded.hash)
    // the side branch changes other keys of both tables
    val side = Seq(Row(10, "side10", false), Row(190, "side190", false), Row(260, null, true))
    for (table <- Seq("t", "s"))
      write(frame(schema.add("gone", BooleanType), side), s"r.$table", "upsert" -> "true", "deleteColumn" -> "gone",
        VersionedOptions.Branch -> "side")
    VersionedApi.merge(spark, null, "r", "main", "side", "fail", "never", false, "merge main", "test", null, false)
    awaitCompaction()
    val t = sorted(read("r.t", VersionedOptions.Branch -> "side"))
    assert(t.contains(Row(10, "side10")) && t.contains(Row(77, "u77")) && !t.exists(_.getInt(0) == 260))
    assert(sorted(read("r.s", VersionedOptions.Branch -> "side")) == t)
    // compaction of main reads each fragment's range of the shared DIFFs: the rows stay
    VersionedApi.compact(spark, null, "r", null, "s").collect()
    awaitCompaction()
    assert(sorted(read("r.s")) == sorted(read("r.t")))
  }

  test("a table version of a format this build does not read is TABLE_FORMAT_UNSUPPORTED for reads and writes; nothing is committed") {
    write(frame(schema, (0 until 20).map(i => Row(i, s"n$i"))), "r.t", "primaryKey" -> "id")
    engine.metastore.tx(c => Sql.update(c, "UPDATE vc_tables SET format_version = 3 WHERE repo = 'r' AND name = 't'"))
    val before = head()
    expectError(ErrorClass.TableFormatUnsupported, "format version 3")(read("r.t").collect())
    expectError(ErrorClass.TableFormatUnsupported, "format version 3")(
      write(frame(schema, Seq(Row(1, "x"))), "r.t", "upsert" -> "true"))
    assert(head() == before, "nothing was committed")
    engine.metastore.tx(c => Sql.update(c, "UPDATE vc_tables SET format_version = 2 WHERE repo = 'r' AND name = 't'"))
    assert(read("r.t").count() == 20, "format 2 is read (the read rule)")
  }
}
