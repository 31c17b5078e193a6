package versioned.spark.write

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import versioned.core._
import versioned.spark.VersionedTestBase
import versioned.spark.api.VersionedApi
import versioned.spark.diff.TableDiff
import versioned.spark.session.{Setting, VersionedOptions}

/**
 * Shared DIFFs (docs/FORMAT.md, format version 2): a driver commit of a change set touching several fragments writes
 * one object, listed by each touched fragment's chain; the table reads, diffs and compacts as with one DIFF per
 * fragment (`sharedDiffMaxRows` = 0), which commits with before-images keep writing.
 */
class SharedDiffSuite extends VersionedTestBase {
  private val schema = new StructType().add("id", IntegerType).add("v", StringType)
  private def location = Map(VersionedOptions.Warehouse -> warehouse.getAbsolutePath)
  private def head(): Image = engine.resolve("r", Revision.Spec("main"))
  private def sorted(rows: Seq[Row]): Seq[Row] = rows.sortBy(_.getInt(0))

  private def load(table: String): Unit = withConf(VersionedOptions.ConfFragmentRows -> "500") {
    write(frame(schema, (0 until 3000).map(i => Row(i, s"n$i"))), s"r.$table", "primaryKey" -> "id")
  }

  /** 1,000 scattered changes: updates, deletes and inserts across every fragment. */
  private val changes: Seq[Row] = {
    val r = new scala.util.Random(35)
    val keys = r.shuffle((0 until 3000).toList).take(950)
    keys.take(800).map(i => Row(i, s"u$i", false)) ++ keys.drop(800).map(i => Row(i, null, true)) ++
      (0 until 50).map(j => Row(5000 + j, s"i$j", false))
  }
  private def upsert(table: String, opts: (String, String)*): Unit =
    write(frame(schema.add("gone", BooleanType), changes), s"r.$table",
      (Seq("upsert" -> "true", "deleteColumn" -> "gone") ++ opts): _*)

  /** The objects the last commit added to `table`'s logical chains, distinct. */
  private def added(table: String): Seq[String] = {
    val h = head()
    val before = engine.table("r", engine.image("r", h.parents.head), table).fragments.flatMap(_.objects).toSet
    engine.table("r", h, table).fragments.flatMap(_.objects).filterNot(before).distinct
  }

  private val expected: Seq[Row] = {
    val m = scala.collection.mutable.TreeMap((0 until 3000).map(i => i -> s"n$i"): _*)
    changes.foreach(c => if (c.getBoolean(2)) m.remove(c.getInt(0)) else m(c.getInt(0)) = c.getString(1))
    m.toSeq.map { case (k, v) => Row(k, v) }
  }

  test("a 1,000-row scattered upsert into a table of several fragments writes one shared DIFF, read as the changes") {
    load("t")
    val loaded = head()
    assert(engine.table("r", loaded, "t").fragments.size >= 6)
    upsert("t")
    val ids = added("t")
    assert(ids.size == 1, s"one object for the commit: $ids")
    val meta = engine.objects(ids)(ids.head)
    assert(meta.shared && meta.kind == ObjectKind.Diff && meta.rowCount == 1000 && meta.parents.isEmpty)
    val t = engine.table("r", head(), "t")
    assert(t.format == TableFormat.SharedObjects)
    assert(t.fragments.forall(_.objects.last == ids.head), "every touched fragment lists it")
    assert(sorted(read("r.t").collect().toSeq) == expected)
    assert(sorted(read("r.t").filter("id IN (5, 2999, 5049)").collect().toSeq) == expected.filter(r => Set(5, 2999, 5049)(r.getInt(0))))
    // the same commit written per fragment: the same diff, both ways
    load("p")
    val loadedP = head()
    withConf(Setting.SharedDiffMaxRows.key -> "0")(upsert("p"))
    assert(added("p").size == engine.table("r", head(), "p").fragments.size, "one DIFF per touched fragment")
    assert(engine.table("r", head(), "p").format == TableFormat.Initial)
    assert(sorted(read("r.p").collect().toSeq) == expected)
    def diff(table: String, fast: Boolean) = TableDiff.diff(spark, location, s"r.$table", if (table == "t") loaded else loadedP,
      head(), fastPath = fast).collect().toSeq.sortBy(_.toString)
    assert(diff("t", fast = true) == diff("p", fast = false))
    assert(diff("t", fast = false) == diff("p", fast = true))
    assert(diff("t", fast = true).size == 1000)
  }

  test("a change set written by Spark tasks: each task's DIFF is shared by the fragments it covers, up to sharedDiffMaxRows") {
    load("p")
    val loadedP = head()
    withConf(Setting.SharedDiffMaxRows.key -> "0")(upsert("p")) // one DIFF per fragment: the reference
    load("t")
    val loaded = head()
    val fragments = engine.table("r", loaded, "t").fragments.size
    // over localCommitMaxRows: the changes are routed and written by Spark tasks
    withConf(VersionedOptions.ConfLocalCommitMaxRows -> "0")(upsert("t"))
    val ids = added("t")
    val tasks = math.min(fragments, spark.sparkContext.defaultParallelism)
    assert(ids.nonEmpty && ids.size <= tasks && ids.size < fragments, s"one object per task: $ids")
    val metas = engine.objects(ids)
    val t = engine.table("r", head(), "t")
    assert(t.fragments.forall(f => f.objects.count(ids.contains) == 1), "each touched fragment lists one of them")
    for (id <- ids) {
      val listing = t.fragments.count(_.objects.contains(id))
      val m = metas(id)
      if (listing > 1) assert(m.shared && m.parents.isEmpty, s"$id is listed by $listing fragments")
      else assert(!m.shared && m.parents.size == 1)
    }
    assert(metas.values.map(_.rowCount).sum == 1000)
    assert(t.format == TableFormat.SharedObjects)
    assert(sorted(read("r.t").collect().toSeq) == expected)
    assert(sorted(read("r.t").filter("id IN (5, 2999, 5049)").collect().toSeq) == expected.filter(r => Set(5, 2999, 5049)(r.getInt(0))))
    def diff(table: String, from: Image, fast: Boolean) =
      TableDiff.diff(spark, location, s"r.$table", from, head(), fastPath = fast).collect().toSeq.sortBy(_.toString)
    assert(diff("t", loaded, fast = true) == diff("p", loadedP, fast = false))
    // a lower bound: a task starts a new object at its next fragment once one holds 100 rows
    load("s")
    withConf(VersionedOptions.ConfLocalCommitMaxRows -> "0", Setting.SharedDiffMaxRows.key -> "100")(upsert("s"))
    val small = engine.objects(added("s")).values.toSeq
    assert(small.size > ids.size && small.map(_.rowCount).sum == 1000)
    // 500 keys a fragment: at most 500 changes of one fragment, and the inserts past the last key
    assert(small.forall(_.rowCount < 100 + 550), small.map(_.rowCount))
    assert(sorted(read("r.s").collect().toSeq) == expected)
  }

  test("commits with before-images and single-fragment changes keep one DIFF per fragment") {
    load("t")
    upsert("t", VersionedOptions.BeforeImages -> "true")
    assert(added("t").size > 1 && !engine.objects(added("t")).values.exists(_.shared))
    write(frame(schema.add("gone", BooleanType), Seq(Row(7, "x", false), Row(8, "y", false))), "r.t",
      "upsert" -> "true", "deleteColumn" -> "gone")
    assert(added("t").size == 1 && !engine.objects(added("t")).values.exists(_.shared))
    assert(read("r.t").filter("id = 7").collect().toSeq == Seq(Row(7, "x")))
  }

  test("compaction pushes a shared DIFF down into per-fragment objects; the rows stay") {
    load("t")
    upsert("t")
    val shared = added("t").head
    withConf("spark.versioned.compaction.maxDiffRatio" -> "0.01") {
      VersionedApi.compact(spark, null, "r", null, "t").collect()
    }
    awaitCompaction()
    val compacted = engine.table("r", head(), "t").compacted
    assert(compacted.isDefined, "the policy compacted the fragments under the shared DIFF")
    assert(!compacted.get.exists(_.objects.contains(shared)), "no compacted chain lists the shared DIFF")
    assert(!engine.objects(compacted.get.flatMap(_.objects).distinct).values.exists(_.shared))
    assert(sorted(read("r.t").collect().toSeq) == expected)
  }

  test("sharedDiffMaxRows must be an integer >= 0; a bad value is refused before any commit") {
    load("t")
    val before = head()
    for (bad <- Seq("-1", "abc"))
      withConf(Setting.SharedDiffMaxRows.key -> bad) {
        expectError(ErrorClass.InvalidOption, "sharedDiffMaxRows")(upsert("t"))
      }
    assert(head() == before)
  }

  test("a clone copies a shared DIFF once and reads the same table; gc keeps it, verify checks it once") {
    val origin = java.nio.file.Files.createTempDirectory("versioned-shared-origin").toFile
    try {
      val o = Map(VersionedOptions.Warehouse -> origin.getAbsolutePath,
        VersionedOptions.MetastoreUrl -> s"jdbc:sqlite:${origin.getAbsolutePath}/metastore.db")
      withConf(VersionedOptions.ConfFragmentRows -> "500") {
        write(frame(schema, (0 until 3000).map(i => Row(i, s"n$i"))), "r.t", (o + ("primaryKey" -> "id")).toSeq: _*)
      }
      write(frame(schema.add("gone", BooleanType), changes), "r.t",
        (o ++ Map("upsert" -> "true", "deleteColumn" -> "gone")).toSeq: _*)
      VersionedApi.cloneRepository(spark, null, "r", o(VersionedOptions.Warehouse), o(VersionedOptions.MetastoreUrl),
        null, null, "all")
      val ids = added("t")
      assert(ids.size == 1 && engine.objects(ids)(ids.head).shared, "the clone records the shared DIFF as shared")
      assert(engine.table("r", head(), "t").format == TableFormat.SharedObjects)
      val copies = new java.io.File(warehouse, "objects").listFiles().flatMap(d => Option(d.listFiles()).toSeq.flatten)
        .count(_.getName == s"${ids.head}.parquet")
      assert(copies == 1, "the object is stored once")
      assert(sorted(read("r.t").collect().toSeq) == expected)
      VersionedApi.collectGarbage(spark, null, "r", 0L, true, false).collect()
      assert(sorted(read("r.t").collect().toSeq) == expected, "gc keeps the shared DIFF")
      val checked = VersionedApi.verify(spark, null, "r", null).collect()
      assert(checked.forall(_.getAs[String]("status") == "ok") && checked.count(_.getAs[String]("object") == ids.head) == 1,
        checked.mkString("\n"))
    } finally {
      val s = java.nio.file.Files.walk(origin.toPath)
      try s.sorted(java.util.Comparator.reverseOrder[java.nio.file.Path]()).forEach(f => java.nio.file.Files.deleteIfExists(f))
      finally s.close()
    }
  }

  test("a shared DIFF has row groups of at most SharedRowGroupRows rows; a fragment reads only those that may hold its keys") {
    withConf(VersionedOptions.ConfFragmentRows -> "5000") {
      write(frame(schema, (0 until 30000).map(i => Row(i, s"n$i"))), "r.g", "primaryKey" -> "id")
    }
    // 9,000 updates, every third key: spread over all six fragments
    val updates = (0 until 30000 by 3).take(9000).map(i => Row(i, s"u$i"))
    write(frame(schema, updates), "r.g", "upsert" -> "true")
    val ids = added("g")
    assert(ids.size == 1, s"one shared object: $ids")
    val meta = engine.objects(ids)(ids.head)
    val snap = versioned.spark.session.TableSnapshot.load(engine, "r", "g", head())
    val path = new org.apache.hadoop.fs.Path(meta.uriIn(snap.config))
    val conf = spark.sparkContext.hadoopConfiguration
    val tail = ObjectChecksum.verifyTail(path.getFileSystem(conf), path, meta.id, meta.sizeBytes, meta.checksum).get
    val footer = org.apache.parquet.hadoop.ParquetFileReader.readFooter(
      org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(path, conf), org.apache.parquet.format.converter.ParquetMetadataConverter.NO_FILTER)
    val groups = footer.getBlocks
    assert(groups.size == 3 && groups.stream().allMatch(_.getRowCount <= versioned.core.format.ObjectShape.SharedRowGroupRows),
      s"row groups of ${meta.rowCount} rows: ${groups.size}")
    val frags = snap.version.effectiveFragments
    val bounds = versioned.spark.read.FragmentBounds.of(snap.layout, frags)
    val spans = bounds.map(b => versioned.spark.read.RowGroupSpan.of(tail, b, conf))
    assert(spans.forall(_.isDefined), "integer keys with statistics: every fragment plans its span")
    // the first and the last fragment each read fewer bytes than the whole object
    assert(spans.head.get._2 - spans.head.get._1 < meta.sizeBytes && spans.last.get._2 - spans.last.get._1 < meta.sizeBytes, s"$spans")
    val expected = (0 until 30000).map(i => Row(i, if (i % 3 == 0 && i / 3 < 9000) s"u$i" else s"n$i"))
    assert(sorted(read("r.g").collect().toSeq) == expected)
    assert(sorted(read("r.g").filter("id IN (0, 14999, 15000, 29997)").collect().toSeq) ==
      expected.filter(r => Set(0, 14999, 15000, 29997)(r.getInt(0))))
  }
}
