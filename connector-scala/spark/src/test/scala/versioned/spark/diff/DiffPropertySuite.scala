package versioned.spark.diff

import scala.collection.mutable.ArrayBuffer
import scala.util.Random
import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import versioned.core.{Image, Revision}
import versioned.spark.VersionedTestBase
import versioned.spark.session.VersionedOptions
import versioned.spark.api.VersionedApi

/**
 * The diff that follows the change against the full comparison and an in-memory oracle: seeded random
 * histories (appends, upserts with updates and no-op rewrites, upserts with deletes of present and
 * missing keys, delete-where, overwrites) on two branches, with compaction on (the default policy,
 * so re-snapshots, DIFF consolidations and tail splits happen) and small fragments. For consecutive
 * versions, random pairs in both directions and pairs across branches, `TableDiff.diff` must equal the
 * whole comparison (`fastPath = false`) and the oracle's diff, row for row. The prefix lookups decode only
 * the Parquet pages that can hold changed keys.
 */
class DiffPropertySuite extends VersionedTestBase {

  /** A table model: schema, key (None: key-less), rows. */
  private trait Model {
    def schema: StructType
    def key: Option[String]
    def keyOf(row: Row): Seq[Any]
    def freshKey(r: Random, ascending: Int): Row => Row // a row with a fresh key, from a row template
    def row(r: Random): Row
    def withValues(r: Random, old: Row): Row
  }

  private object IntKey extends Model {
    val schema: StructType = new StructType().add("id", IntegerType).add("name", StringType).add("v", IntegerType)
      .add("score", DoubleType)
    val key: Option[String] = Some("id")
    def keyOf(row: Row): Seq[Any] = Seq(row.get(0))
    def row(r: Random): Row = Row(r.nextInt(400), if (r.nextInt(6) == 0) null else s"n${r.nextInt(9)}", r.nextInt(5),
      r.nextInt(40) * 0.5)
    def withValues(r: Random, old: Row): Row = { val x = row(r); Row(old.get(0), x.get(1), x.get(2), x.get(3)) }
    def freshKey(r: Random, ascending: Int): Row => Row = x => Row(ascending, x.get(1), x.get(2), x.get(3))
  }

  private object CompositeKey extends Model {
    val schema: StructType = new StructType().add("k", StringType).add("n", LongType).add("s", StringType)
      .add("d", DecimalType(10, 2))
    val key: Option[String] = Some("k,n")
    def keyOf(row: Row): Seq[Any] = Seq(row.get(0), row.get(1))
    def row(r: Random): Row = Row(s"k${r.nextInt(12)}", r.nextInt(40).toLong, if (r.nextInt(5) == 0) null else s"s${r.nextInt(6)}",
      new java.math.BigDecimal(r.nextInt(500)).movePointLeft(2))
    def withValues(r: Random, old: Row): Row = { val x = row(r); Row(old.get(0), old.get(1), x.get(2), x.get(3)) }
    def freshKey(r: Random, ascending: Int): Row => Row = x => Row("z", ascending.toLong, x.get(2), x.get(3))
  }

  private object KeyLess extends Model {
    val schema: StructType = new StructType().add("a", StringType).add("b", IntegerType)
    val key: Option[String] = None
    def keyOf(row: Row): Seq[Any] = row.toSeq
    def row(r: Random): Row = Row(if (r.nextInt(10) == 0) null else s"p${r.nextInt(5)}", r.nextInt(30))
    def withValues(r: Random, old: Row): Row = Row(old.get(0), (old.getInt(1) + 1 + r.nextInt(3)) % 30)
    def freshKey(r: Random, ascending: Int): Row => Row = x => Row("zz", ascending)
  }

  private final case class Version(image: Image, rows: Seq[Row])

  /** Expected diff rows: keyed by the model's key, or whole rows with multiplicity. */
  private def oracle(m: Model, from: Seq[Row], to: Seq[Row]): Seq[Row] = m.key match {
    case None =>
      val (a, b) = (multiset(from), multiset(to))
      (a.keySet ++ b.keySet).toSeq.flatMap { row =>
        val d = b.getOrElse(row, 0) - a.getOrElse(row, 0)
        Seq.fill(math.abs(d))(Row.fromSeq((if (d > 0) "insert" else "delete") +: row.toSeq))
      }
    case Some(k) =>
      val keyCount = k.split(",").length
      val (a, b) = (from.map(r => m.keyOf(r) -> r).toMap, to.map(r => m.keyOf(r) -> r).toMap)
      def values(r: Option[Row]) = (keyCount until m.schema.length).map(i => r.map(_.get(i)).orNull)
      (a.keySet ++ b.keySet).toSeq.flatMap { key =>
        val (x, y) = (a.get(key), b.get(key))
        val change = if (x.isEmpty) Some("insert") else if (y.isEmpty) Some("delete")
          else Option.when(x.get != y.get)("update")
        change.map(c => Row.fromSeq((c +: key) ++ values(x).zip(values(y)).flatMap { case (p, q) => Seq(p, q) }))
      }
  }

  /** A random history on main and on branch `b` (from an early version); every version with its rows. */
  private def history(m: Model, seed: Long, table: String): Seq[Version] = {
    val r = new Random(seed)
    val versions = ArrayBuffer.empty[Version]
    var ascending = 10000
    val state = scala.collection.mutable.Map("main" -> Seq.empty[Row], "b" -> Seq.empty[Row])
    def keyed(rows: Seq[Row]): Seq[Row] = if (m.key.isEmpty) rows else rows.groupBy(m.keyOf).values.map(_.head).toSeq
    def commit(branch: String, rows: Seq[Row]): Unit = {
      state(branch) = rows
      val img = engine.resolve("r", Revision.Spec(branch))
      if (!versions.exists(_.image.hash == img.hash)) versions += Version(img, rows)
    }
    val initial = keyed(Seq.fill(160)(m.row(r)))
    write(frame(m.schema, initial), table, (Seq("message" -> "initial") ++ m.key.map("primaryKey" -> _)): _*)
    commit("main", initial)
    for (i <- 1 to 16) {
      if (i == 4) { VersionedApi.createBranch(spark, null, "r", "b", "main"); state("b") = state("main") }
      val branch = if (i > 4 && r.nextInt(3) == 0) "b" else "main"
      val cur = state(branch)
      val opts = Seq("branch" -> branch, "message" -> s"c$i")
      def fresh(n: Int): Seq[Row] = Seq.fill(n) {
        val x = if (r.nextBoolean()) { ascending += 1 + r.nextInt(3); m.freshKey(r, ascending)(m.row(r)) } else m.row(r)
        x
      }
      r.nextInt(m.key.fold(3)(_ => 6)) match {
        case 0 => // append: new rows (key-less: also copies of existing rows)
          val add = keyed(fresh(1 + r.nextInt(30))).filterNot(x => m.key.isDefined && cur.exists(c => m.keyOf(c) == m.keyOf(x))) ++
            (if (m.key.isEmpty) r.shuffle(cur).take(r.nextInt(4)) else Nil)
          if (add.nonEmpty) { write(frame(m.schema, add), table, opts: _*); commit(branch, cur ++ add) }
        case 1 => // overwrite: deletes, updates, inserts, copies
          val (dropped, kept) = r.shuffle(cur).splitAt(r.nextInt(12))
          val (changed, same) = kept.splitAt(r.nextInt(12))
          val next = keyed(same ++ changed.map(m.withValues(r, _)) ++ fresh(r.nextInt(10)))
          overwrite(frame(m.schema, next), table, opts: _*)
          commit(branch, next)
        case 2 => // delete where
          val victims = r.shuffle(cur).take(1 + r.nextInt(6)).filter(_.get(0) != null)
          if (victims.nonEmpty) {
            val col = m.schema.fields.head.name
            val values = victims.map(_.get(0)).distinct
            val cond = values.map(v => s"$col = ${if (v.isInstanceOf[String]) s"'$v'" else v}").mkString(" OR ")
            VersionedApi.deleteWhere(spark, null, table, cond, branch, s"c$i delete", "t")
            commit(branch, cur.filterNot(x => x.get(0) != null && values.contains(x.get(0))))
          }
        case _ => // upsert: updates, no-op rewrites, inserts, deletes of present and missing keys
          val (upd, rest) = r.shuffle(cur).splitAt(r.nextInt(15))
          val noop = rest.take(r.nextInt(4))
          val dels = rest.drop(noop.size).take(r.nextInt(5)).map(x => Row.fromSeq(x.toSeq :+ true))
          val missing = fresh(r.nextInt(2)).filterNot(x => cur.exists(c => m.keyOf(c) == m.keyOf(x)))
          val ins = keyed(fresh(r.nextInt(8))).filterNot(x => cur.exists(c => m.keyOf(c) == m.keyOf(x)) ||
            missing.exists(c => m.keyOf(c) == m.keyOf(x)))
          val ups = upd.map(m.withValues(r, _)) ++ noop ++ ins
          val rows = ups.map(x => Row.fromSeq(x.toSeq :+ false)) ++ dels ++ missing.map(x => Row.fromSeq(x.toSeq :+ true))
          val deleted = (dels ++ missing).map(x => m.keyOf(x)).toSet
          write(frame(m.schema.add("gone", BooleanType), r.shuffle(rows)), table,
            opts ++ Seq("upsert" -> "true", "deleteColumn" -> "gone"): _*)
          val byKey = ups.map(x => m.keyOf(x) -> x).toMap
          commit(branch, cur.filterNot(x => deleted(m.keyOf(x)) || byKey.contains(m.keyOf(x))) ++ byKey.values)
      }
    }
    versions.toSeq
  }

  private def check(m: Model, table: String, versions: Seq[Version], pairs: Seq[(Int, Int)]): Unit = {
    val location = Map(VersionedOptions.Warehouse -> warehouse.getAbsolutePath)
    pairs.foreach { case (i, j) =>
      val (a, b) = (versions(i), versions(j))
      val clue = s"diff of version $i (${a.image.shortHash}) to $j (${b.image.shortHash})"
      val fast = TableDiff.diff(spark, location, table, a.image, b.image)
      val full = TableDiff.diff(spark, location, table, a.image, b.image, fastPath = false)
      assert(fast.schema == full.schema, clue)
      val expected = oracle(m, a.rows, b.rows)
      assertSameRows(full.collect().toSeq, expected, s"$clue, whole comparison vs oracle")
      assertSameRows(fast.collect().toSeq, expected, s"$clue, fast path vs oracle")
    }
  }

  private def run(m: Model, seed: Long, table: String): Unit = {
    val before = (TableDiff.fastFragments.get(), TableDiff.comparedFragments.get())
    val versions = history(m, seed, table)
    val r = new Random(seed + 1)
    val n = versions.size
    val consecutive = (1 until n).map(i => (i - 1, i))
    val random = Seq.fill(versioned.core.TestDepth(4, 8))((r.nextInt(n), r.nextInt(n))).flatMap { case (i, j) => Seq((i, j), (j, i)) }
    check(m, table, versions, consecutive ++ random ++ Seq((0, n - 1), (n - 1, 0)))
    val t = engine.tableOption("r", versions.last.image.hash, table.split('.')(1)).get
    assert(versions.exists(v => engine.tableOption("r", v.image.hash, table.split('.')(1)).exists(_.compacted.isDefined)),
      "the default policy should have compacted some version")
    assert(t.fragments.size >= 3, "expected several fragments")
    val fast = TableDiff.fastFragments.get() - before._1
    assert(fast >= n / 2, s"only $fast fragments were diffed from their DIFFs over ${consecutive.size} consecutive pairs")
  }

  test("int key: fast path = whole comparison = oracle (branches, upserts, deletes, compaction, tail splits)") {
    run(IntKey, 5L, "r.t")
  }

  test("composite string/long key with decimals: fast path = whole comparison = oracle") {
    run(CompositeKey, 6L, "r.c")
  }

  test("int key, commits with before-images: fast path = whole comparison = oracle, before-images used") {
    withConf(VersionedOptions.ConfBeforeImages -> "true") {
      val sides = PriorImages.recordedSides.get()
      run(IntKey, 15L, "r.t")
      assert(PriorImages.recordedSides.get() > sides, "no diff used before-images")
    }
  }

  test("composite key, commits with before-images: fast path = whole comparison = oracle, before-images used") {
    withConf(VersionedOptions.ConfBeforeImages -> "true") {
      val sides = PriorImages.recordedSides.get()
      run(CompositeKey, 16L, "r.c")
      assert(PriorImages.recordedSides.get() > sides, "no diff used before-images")
    }
  }

  test("key-less table with duplicates: fast path = whole comparison = oracle") {
    run(KeyLess, 7L, "r.k")
  }

  test("tail splits: appends past the largest key split a fragment, and diffs across the split follow the DIFFs") {
    withConf(VersionedOptions.ConfMaxDiffRatio -> "0.1", VersionedOptions.ConfMaxChain -> "1000",
        VersionedOptions.ConfConsolidateAfter -> "1000") {
      val schema = IntKey.schema
      def rows(ids: Seq[Int], v: Int) = ids.map(i => Row(i, s"n$i-$v", i % 5, v * 0.5))
      val location = Map(VersionedOptions.Warehouse -> warehouse.getAbsolutePath)
      def head = engine.resolve("r", Revision.Spec("main"))
      write(frame(schema, rows(0 until 200, 0)), "r.s", "primaryKey" -> "id")
      val v0 = head
      write(frame(schema, rows(Seq(160, 200, 201, 202), 1)), "r.s", "upsert" -> "true")
      write(frame(schema, rows(Seq(203, 204), 2)), "r.s", "upsert" -> "true")
      val v2 = head
      val t2 = engine.tableOption("r", v2.hash, "s").get
      assert(t2.compacted.exists(_.size == t2.fragments.size + 1), s"expected a tail split: ${t2.compacted}")
      write(frame(schema, rows(Seq(3, 203), 3)), "r.s", "upsert" -> "true")
      val v3 = head
      val before = (TableDiff.fastFragments.get(), TableDiff.comparedFragments.get(), TableDiff.wholeComparisons.get())
      val d = TableDiff.diff(spark, location, "r.s", v2, v3).collect().toSeq
      assert((TableDiff.fastFragments.get() - before._1, TableDiff.comparedFragments.get() - before._2,
        TableDiff.wholeComparisons.get() - before._3) == (2, 0, 0), "both changed fragments (one split off) follow their DIFF")
      assertSameRows(d, Seq(Row("update", 3, "n3-0", "n3-3", 3, 3, 0.0, 1.5), Row("update", 203, "n203-2", "n203-3", 3, 3, 1.0, 1.5)),
        "v2 -> v3")
      val all = (rows(0 until 200, 0) ++ rows(Seq(160, 200, 201, 202), 1) ++ rows(Seq(203, 204), 2) ++ rows(Seq(3, 203), 3))
        .groupBy(_.getInt(0)).values.map(_.last).toSeq
      val expected = oracle(IntKey, rows(0 until 200, 0), all)
      assertSameRows(TableDiff.diff(spark, location, "r.s", v0, v3).collect().toSeq, expected, "v0 -> v3")
      assertSameRows(TableDiff.diff(spark, location, "r.s", v0, v3, fastPath = false).collect().toSeq, expected, "v0 -> v3, whole")
    }
  }

  test("lookups read only the pages that can hold the changed keys (clustered and few scattered keys)") {
    withConf(VersionedOptions.ConfFragmentRows -> "1000000") {
      val schema = new StructType().add("id", LongType).add("s", StringType)
      write(spark.range(0, 100000).selectExpr("id", "concat('s', id) AS s"), "r.p", "primaryKey" -> "id")
      val v0 = engine.resolve("r", Revision.Spec("main"))
      val location = Map(VersionedOptions.Warehouse -> warehouse.getAbsolutePath)
      def lookedUp(rows: Seq[Row]): (Long, Seq[Row]) = {
        write(frame(schema, rows), "r.p", "upsert" -> "true")
        val before = FragmentDiff.snapRowsRead.get()
        val d = TableDiff.diff(spark, location, "r.p", engine.resolve("r", Revision.Spec("main~1")),
          engine.resolve("r", Revision.Spec("main"))).collect().toSeq
        (FragmentDiff.snapRowsRead.get() - before, d)
      }
      val (clustered, d1) = lookedUp((50000L until 50010L).map(i => Row(i, "x")))
      assertSameRows(d1, (50000L until 50010L).map(i => Row("update", i, s"s$i", "x")), "clustered")
      // Parquet pages hold at most ParquetSink.PageRows rows: ten consecutive keys need one or two pages
      val page = versioned.spark.write.ParquetSink.PageRows
      assert(clustered > 0 && clustered <= 2 * page, s"clustered keys: $clustered of 100000 SNAP rows decoded")
      val (scattered, d2) = lookedUp(Seq(Row(10L, "y"), Row(99990L, "y")))
      assertSameRows(d2, Seq(Row("update", 10L, "s10", "y"), Row("update", 99990L, "s99990", "y")), "scattered")
      assert(scattered > 0 && scattered <= 2 * page, s"two scattered keys: $scattered of 100000 SNAP rows decoded")
      assert(engine.tableOption("r", v0.hash, "p").get.fragments.size == 1)
    }
  }

  test("as many scattered keys as the SNAP has pages: the lookup reads the changed keys and skips the pages without one") {
    withConf(VersionedOptions.ConfFragmentRows -> "1000000") {
      val schema = new StructType().add("id", LongType).add("s", StringType)
      val n = 100000L
      write(spark.range(0, n).selectExpr("id", "concat('s', id) AS s"), "r.q", "primaryKey" -> "id")
      val page = versioned.spark.write.ParquetSink.PageRows.toLong
      val pages = n / page
      // k = p changed keys over the whole key range, two in every other page: half the pages hold none
      val keys = (0L until pages by 2).flatMap(j => Seq(j * page + 7, j * page + page / 2))
      assert(keys.size.toLong == pages && keys.max > n - 2 * page)
      write(frame(schema, keys.map(i => Row(i, "z"))), "r.q", "upsert" -> "true")
      val location = Map(VersionedOptions.Warehouse -> warehouse.getAbsolutePath)
      val before = FragmentDiff.snapRowsRead.get()
      val d = TableDiff.diff(spark, location, "r.q", engine.resolve("r", Revision.Spec("main~1")),
        engine.resolve("r", Revision.Spec("main"))).collect().toSeq
      val decoded = FragmentDiff.snapRowsRead.get() - before
      assertSameRows(d, keys.map(i => Row("update", i, s"s$i", "z")), "k = p scattered keys")
      // the key range of the DIFF (the whole table) would decode every page
      assert(decoded > 0 && decoded <= n * 6 / 10, s"$decoded of $n SNAP rows decoded for ${keys.size} keys in $pages pages")
    }
  }

  test("a reader that pushes no filter down is built once for the diffs that follow, again when a setting changes") {
    // a layout of its own, so no earlier test built these readers
    val schema = new StructType().add("id", LongType).add("reused_s", StringType)
    write(spark.range(0, 5000).selectExpr("id", "concat('s', id) AS reused_s"), "r.reuse", "primaryKey" -> "id")
    write(frame(schema, Seq(Row(3L, "x"), Row(4000L, null))), "r.reuse", "upsert" -> "true")
    val location = Map(VersionedOptions.Warehouse -> warehouse.getAbsolutePath)
    val branch = engine.defaultBranch("r")
    val expected = Seq(Row("update", 3L, "s3", "x"), Row("update", 4000L, "s4000", null))
    /** Readers built by one diff of the last commit, whose rows must be `expected`. */
    def built(): Long = {
      val before = FastDiff.readersBuilt.get()
      val d = TableDiff.diff(spark, location, "r.reuse", engine.resolve("r", Revision.Spec(s"$branch~1")),
        engine.resolve("r", Revision.Spec(branch))).collect().toSeq
      assertSameRows(d, expected, "diff of the last commit")
      FastDiff.readersBuilt.get() - before
    }
    val first = built()
    val again = built()
    assert(again < first, s"the second diff built $again readers, the first $first")
    assert(built() == again)
    // another SQL setting, another Hadoop configuration: built anew
    withConf("spark.sql.parquet.columnarReaderBatchSize" -> "1000")(assert(built() > again))
    val hadoop = spark.sparkContext.hadoopConfiguration
    hadoop.set("versioned.test.reader", "1")
    try assert(built() > again) finally hadoop.unset("versioned.test.reader")
  }
}
