package versioned.spark.diff

import java.io.File
import java.nio.file.Files
import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import versioned.core._
import versioned.spark.VersionedTestBase
import versioned.spark.session.VersionedOptions

/**
 * Before-images (write option `beforeImages`): commits record each key's row in the chain they follow, a diff
 * across them reads only their DIFFs (no SNAP page decoded), gives the rows the whole comparison gives, and
 * never trusts before-images on a chain other than the one they were recorded on. A commit that cannot read its
 * chain raises a typed error and commits nothing; bad values of the option are refused.
 */
class BeforeImagesSuite extends VersionedTestBase {
  override protected def extraConf: Map[String, String] =
    Map("spark.sql.catalog.c" -> classOf[versioned.spark.catalog.VersionedCatalog].getName)

  private val schema = new StructType().add("id", IntegerType).add("name", StringType).add("x", DoubleType)
  private def location = Map(VersionedOptions.Warehouse -> warehouse.getAbsolutePath)
  private def head(): Image = engine.resolve("r", Revision.Spec("main"))
  /** The objects the last commit added to `table` (its DIFFs). */
  private def lastDiffs(table: String): Seq[ObjectMeta] = {
    val h = head()
    def ids(img: Image) = engine.table("r", img, table).fragments.flatMap(_.objects).toSet
    val added = (ids(h) -- ids(engine.image("r", h.parents.head))).toSeq
    assert(added.nonEmpty, "the last commit wrote no object")
    added.map(engine.objects(added))
  }
  private def lastDiff(table: String): ObjectMeta = lastDiffs(table).head
  private def recorded(m: ObjectMeta): Boolean = m.minValues.contains(VersionedOptions.PriorChainColumn)
  private def allRecorded(table: String): Boolean = lastDiffs(table).forall(recorded)

  private def base(table: String, values: Int => String = i => s"n$i"): Unit =
    write(frame(schema, (0 until 3000).map(i => Row(i, values(i), i * 0.5))), s"r.$table", "primaryKey" -> "id")

  /** Updates, a no-op rewrite, inserts, deletes of present and missing keys, as one upsert with deleteColumn. */
  private def changes(table: String, seed: Int, opts: (String, String)*): Unit = {
    val r = new scala.util.Random(seed)
    val keys = r.shuffle((0 until 3000).toList)
    val upd = keys.take(40).map(i => Row(i, s"u$seed-$i", -i * 1.0, false))
    val noop = keys.slice(40, 43).map(i => Row(i, s"n$i", i * 0.5, false))
    val del = keys.slice(43, 55).map(i => Row(i, null, null, true))
    val ins = (0 until 6).map(j => Row(5000 + seed * 10 + j, s"i$j", j.toDouble, false))
    val missing = Seq(Row(9000 + seed, null, null, true))
    write(frame(schema.add("gone", BooleanType), r.shuffle(upd ++ noop ++ del ++ ins ++ missing)), s"r.$table",
      (Seq("upsert" -> "true", "deleteColumn" -> "gone") ++ opts): _*)
  }

  private def diffs(table: String, from: Image, to: Image): (Seq[Row], Seq[Row]) =
    (TableDiff.diff(spark, location, s"r.$table", from, to).collect().toSeq,
      TableDiff.diff(spark, location, s"r.$table", from, to, fastPath = false).collect().toSeq)

  test("a diff across commits with before-images decodes no SNAP row and equals the whole comparison, both ways") {
    base("t")
    val v0 = head()
    changes("t", 1, VersionedOptions.BeforeImages -> "true")
    assert(allRecorded("t"), "the upsert's DIFFs should record before-images")
    val v1 = head()
    withConf(VersionedOptions.ConfBeforeImages -> "true")(changes("t", 2)) // the session default
    assert(allRecorded("t"))
    val v2 = head()
    Seq((v0, v1), (v1, v0), (v0, v2), (v2, v0), (v1, v2)).foreach { case (a, b) =>
      val snapRows = FragmentDiff.snapRowsRead.get()
      val sides = PriorImages.recordedSides.get()
      val (fast, whole) = diffs("t", a, b)
      assert(FragmentDiff.snapRowsRead.get() == snapRows, s"${a.shortHash} -> ${b.shortHash} looked keys up in the SNAP")
      assert(PriorImages.recordedSides.get() > sides)
      assertSameRows(fast, whole, s"diff ${a.shortHash} -> ${b.shortHash}")
      assert(fast.size > 50)
    }
    val kinds = diffs("t", v0, v1)._1.groupBy(_.getString(0)).map { case (k, g) => k -> g.size }
    assert(kinds == Map("update" -> 40, "delete" -> 12, "insert" -> 6), kinds)
  }

  test("SQL UPDATE, DELETE and MERGE record before-images with the setting on, and diffs across them use them") {
    base("t")
    val v0 = head()
    withConf(VersionedOptions.ConfBeforeImages -> "true") {
      spark.sql("UPDATE c.r.t SET name = 'z' WHERE id % 97 = 0")
      assert(allRecorded("t"))
      spark.sql("DELETE FROM c.r.t WHERE id % 89 = 1")
      assert(allRecorded("t"))
      spark.sql("MERGE INTO c.r.t t USING (SELECT id, 'm' AS name, -1.0 AS x FROM range(2990, 3010)) s ON t.id = s.id " +
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
      assert(allRecorded("t"))
    }
    val snapRows = FragmentDiff.snapRowsRead.get()
    val (fast, whole) = diffs("t", v0, head())
    assert(FragmentDiff.snapRowsRead.get() == snapRows)
    assertSameRows(fast, whole, "diff across DML")
    val kinds = fast.groupBy(_.getString(0)).map { case (k, g) => k -> g.size }
    assert(kinds == Map("update" -> (31 + 10), "delete" -> 34, "insert" -> 10), kinds)
  }

  test("without the option DIFFs record nothing and the same diff looks the keys up") {
    base("t")
    val v0 = head()
    changes("t", 1)
    assert(!lastDiffs("t").exists(recorded))
    val snapRows = FragmentDiff.snapRowsRead.get()
    val (fast, whole) = diffs("t", v0, head())
    assert(FragmentDiff.snapRowsRead.get() > snapRows)
    assertSameRows(fast, whole, "diff")
  }

  test("before-images recorded on another chain are not used: the diff looks the keys up in its own") {
    withConf(VersionedOptions.ConfFragmentRows -> "1000000")(otherChain())
  }

  /** One fragment per table: table a's DIFF on top of table b's SNAP. */
  private def otherChain(): Unit = {
    base("a")
    changes("a", 1, VersionedOptions.BeforeImages -> "true")
    val d = lastDiff("a")
    assert(recorded(d))
    base("b", i => s"other$i") // same keys and schema, other values: another SNAP
    val b0 = head()
    val snapB = engine.table("r", b0, "b").fragments.flatMap(_.objects)
    assert(snapB.size == 1)
    // table b with a's DIFF on top of b's SNAP: the DIFF's before-images describe a's SNAP, not this chain
    val tb = engine.table("r", b0, "b")
    engine.commit("r", "main", Some(b0.hash), Map("b" -> TableUpdate.Put(tb.copy(fragments = Seq(Fragment(None, snapB :+ d.id)),
      compacted = None), Nil)), "test", "reuse a DIFF on another chain")
    val b1 = head()
    val sides = PriorImages.recordedSides.get()
    val (fast, whole) = diffs("b", b0, b1)
    assert(PriorImages.recordedSides.get() == sides, "before-images of another chain were used")
    assertSameRows(fast, whole, "diff on the other chain")
    assert(fast.exists(r => r.getString(0) == "update" && r.getString(2).startsWith("other")), "before-values come from b's SNAP")
  }

  test("a commit that cannot read its chain for before-images raises a typed error and commits nothing") {
    base("t")
    val before = head()
    val snap = engine.table("r", before, "t").fragments.flatMap(_.objects).head
    val file = new File(warehouse, ObjectMeta.relativePath(snap))
    Files.delete(file.toPath)
    Files.deleteIfExists(new File(file.getParentFile, s".${file.getName}.crc").toPath)
    expectError(ErrorClass.ObjectMissing)(changes("t", 1, VersionedOptions.BeforeImages -> "true"))
    assert(head() == before, "nothing may be committed")
  }

  test("bad values of the option and of the setting are refused before anything is committed") {
    base("t")
    val before = head()
    expectError(ErrorClass.InvalidOption, "beforeImages", "true or false")(changes("t", 1, VersionedOptions.BeforeImages -> "yes"))
    expectError(ErrorClass.InvalidOption, VersionedOptions.ConfBeforeImages)(
      withConf(VersionedOptions.ConfBeforeImages -> "maybe")(changes("t", 1)))
    assert(head() == before)
  }
}
