package versioned.spark
package write

import versioned.spark.session.VersionedOptions

import java.io.File
import scala.util.Random
import org.apache.spark.sql.Row
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types._
import versioned.core.{Engine, Hashing, Revision, WarehouseConfig}

/**
 * Small upserts are committed by the driver (`spark.versioned.write.localCommitMaxRows`): the same
 * seeded random change sets (upserts, inserts, deletes through `deleteColumn`, deletes of missing keys,
 * null markers, empty sets) go through that fast path in one warehouse and through the distributed path
 * (threshold 0) in another, loaded identically. After every commit both must hold the same rows (also
 * equal to an oracle), the same table hash (same object ids per fragment), the same object metadata
 * (sizes, statistics, parents) and the same image hash once commit time and parents are aligned. The driver writes
 * one DIFF per fragment here (`sharedDiffMaxRows` = 0) and appends past the last key as DIFFs (`tailFragments` = false), as the distributed path does: a shared DIFF (its own
 * suite, `SharedDiffSuite`) is a different table version holding the same rows.
 */
class LocalCommitSuite extends VersionedTestBase {
  override protected def extraConf: Map[String, String] =
    super.extraConf ++ Map(versioned.spark.session.Setting.SharedDiffMaxRows.key -> "0",
      versioned.spark.session.Setting.TailFragments.key -> "false")
  private val Rounds = 8

  /** A keyed table: key columns anywhere in the schema, random keys and values. */
  private case class Model(name: String, schema: StructType, key: Seq[String], genKey: Random => Seq[Any],
                           genValues: Random => Seq[Any]) {
    private val isKey = schema.fieldNames.map(key.contains)
    def row(k: Seq[Any], values: Seq[Any]): Row = {
      val (ki, vi) = (k.iterator, values.iterator)
      Row.fromSeq(isKey.toSeq.map(b => if (b) ki.next() else vi.next()))
    }
    def keyOf(row: Row): Seq[Any] = schema.fieldNames.toSeq.zipWithIndex.filter(f => key.contains(f._1))
      .sortBy(f => key.indexOf(f._1)).map(f => row.get(f._2))
  }

  /** Oracle map key: NaN compares equal to itself. */
  private def norm(k: Seq[Any]): Seq[Any] = k.map {
    case d: Double => ("double", java.lang.Double.doubleToLongBits(d))
    case o => o
  }

  private val longKey = Model("long key in the middle, a NOT NULL column",
    new StructType().add("a", IntegerType, nullable = false).add("id", LongType).add("s", StringType).add("d", DoubleType),
    Seq("id"), r => Seq(r.nextInt(2000).toLong - 200),
    r => Seq(r.nextInt(100), if (r.nextInt(6) == 0) null else s"s${r.nextInt(50)}", r.nextGaussian()))

  private val stringIntKey = Model("composite (string, int) key",
    new StructType().add("k", StringType).add("v", LongType).add("n", IntegerType),
    Seq("k", "n"), r => Seq(Seq("", "a", "ab", "b", "é", "z", "zz", "日本")(r.nextInt(8)), r.nextInt(60) - 10),
    r => Seq(if (r.nextInt(5) == 0) null else r.nextLong()))

  private val typedKey = Model("composite (timestamp, decimal, double) key",
    new StructType().add("ts", TimestampType).add("note", StringType).add("amt", DecimalType(12, 3))
      .add("f", DoubleType).add("day", DateType),
    Seq("ts", "amt", "f"),
    r => Seq(new java.sql.Timestamp(1600000000000L + r.nextInt(5) * 86400000L + r.nextInt(3) * 1000L),
      java.math.BigDecimal.valueOf(r.nextInt(20000) - 10000L, 3),
      Seq(Double.NaN, Double.PositiveInfinity, Double.NegativeInfinity, 0.0, 1.5, -2.25, 1e300)(r.nextInt(7))),
    r => Seq(s"n${r.nextInt(9)}", if (r.nextBoolean()) null else java.sql.Date.valueOf(s"2024-0${1 + r.nextInt(9)}-1${r.nextInt(9)}")))

  private def dirs: (File, File) = (new File(warehouse, "fast"), new File(warehouse, "dist"))
  private def engineOf(dir: File): Engine = Engine(WarehouseConfig.embedded(dir.getAbsolutePath))
  private def at(dir: File, opts: (String, String)*): Seq[(String, String)] = ("warehouse" -> dir.getAbsolutePath) +: opts

  /** Asserts both warehouses' heads of `r.t` are the same commit of the same content, `expected`. */
  private def assertSame(step: String, expected: Seq[Row]): Unit = {
    val (fast, dist) = dirs
    val (ef, ed) = (engineOf(fast), engineOf(dist))
    val (hf, hd) = (ef.branchHeadOption("r", "main").get, ed.branchHeadOption("r", "main").get)
    val (tf, td) = (ef.table("r", hf, "t"), ed.table("r", hd, "t"))
    assert(tf.hash == td.hash, s"$step: table hashes differ:\n${tf.fragments}\n${td.fragments}")
    val ids = tf.fragments.flatMap(_.objects) ++ tf.effectiveFragments.flatMap(_.objects)
    assert(ef.objects(ids) == ed.objects(ids), s"$step: object metadata differs")
    val tables = ed.tables("r", hd.hash).map(t => t.name -> t.hash)
    assert(Hashing.imageHash(hf.parents, hd.author, hd.message, hf.createdMs, tables, hf.actor) == hf.hash,
      s"$step: the image hashes differ beyond commit time and parents")
    assertReads(read("r.t", at(fast): _*), expected, s"$step: fast path rows")
    assertReads(read("r.t", at(dist): _*), expected, s"$step: distributed path rows")
  }

  private def run(m: Model, seed: Long): Unit = {
    val r = new Random(seed)
    val (fast, dist) = dirs
    val withDel = m.schema.add("del", BooleanType)
    var cur = Map.empty[Seq[Any], Row]
    def fresh(n: Int, avoid: Set[Seq[Any]]): Seq[Seq[Any]] = {
      val out = scala.collection.mutable.LinkedHashMap[Seq[Any], Seq[Any]]()
      var tries = 0
      while (out.size < n && tries < 1000) {
        val k = m.genKey(r); tries += 1
        if (!cur.contains(norm(k)) && !avoid.contains(norm(k))) out(norm(k)) = k
      }
      out.values.toSeq
    }
    val base = fresh(200, Set.empty).map(k => m.row(k, m.genValues(r)))
    Seq(fast, dist).foreach(d => write(frame(m.schema, base), "r.t", at(d, "primaryKey" -> m.key.mkString(",")): _*))
    cur = base.map(x => norm(m.keyOf(x)) -> x).toMap
    assert(engineOf(fast).table("r", engineOf(fast).branchHeadOption("r", "main").get, "t").fragments.size >= 3)
    assertSame(s"${m.name}: base", cur.values.toSeq)
    for (i <- 1 to Rounds) {
      val deletes = i % 3 != 0
      val existing = r.shuffle(cur.keys.toSeq).map(k => m.keyOf(cur(k)))
      val empty = i == 4
      val upd = if (empty) Nil else existing.take(r.nextInt(25))
      val del = if (!deletes || empty) Nil else existing.slice(upd.size, upd.size + r.nextInt(12))
      val ins = if (empty) Nil else fresh(1 + r.nextInt(20), Set.empty)
      val ghosts = if (!deletes || empty) Nil else fresh(r.nextInt(4), ins.map(norm).toSet)
      val upserts = (upd ++ ins).map(k => m.row(k, m.genValues(r)))
      val marker: () => Any = () => if (r.nextInt(4) == 0) null else false
      val rows = if (!deletes) upserts
        else r.shuffle(upserts.map(x => Row.fromSeq(x.toSeq :+ marker())) ++
          (del ++ ghosts).map(k => Row.fromSeq(m.row(k, m.genValues(r)).toSeq :+ true)))
      val df = frame(if (deletes) withDel else m.schema, rows)
      val opts = Seq("upsert" -> "true", "message" -> s"round $i") ++ (if (deletes) Seq("deleteColumn" -> "del") else Nil)
      write(df, "r.t", at(fast, opts: _*): _*)
      withConf(VersionedOptions.ConfLocalCommitMaxRows -> "0")(write(df, "r.t", at(dist, opts: _*): _*))
      cur = cur -- del.map(norm) ++ upserts.map(x => norm(m.keyOf(x)) -> x)
      assertSame(s"${m.name}: round $i (${upd.size} updates, ${ins.size} inserts, ${del.size} deletes, " +
        s"${ghosts.size} deletes of missing keys)", cur.values.toSeq)
    }
    // the base, then every round but the empty round 4, which changes nothing and so makes no commit on either path
    Seq(fast, dist).foreach(d => assert(engineOf(d).history.log("r", Revision.DefaultBranch).size == Rounds))
  }

  test("a small upsert looks its keys up in chunks of 1, 16, 256, ... keys, covering each key once") {
    assert(LocalCommit.lookupChunks(0).isEmpty)
    assert(LocalCommit.lookupChunks(1).toSeq == Seq((0, 1)))
    assert(LocalCommit.lookupChunks(300).toSeq == Seq((0, 1), (1, 17), (17, 273), (273, 300)))
    for (n <- Seq(2, 17, 18, 273, 274, 10000)) {
      val chunks = LocalCommit.lookupChunks(n).toSeq
      assert(chunks.head._1 == 0 && chunks.last._2 == n && chunks.zip(chunks.tail).forall(p => p._1._2 == p._2._1), n)
    }
  }

  test("fast and distributed paths commit identically: long key, default compaction") {
    run(longKey, 1L)
  }

  test("fast and distributed paths commit identically: composite (string, int) key, no compaction") {
    withConf(VersionedOptions.ConfMaxChain -> "1000", VersionedOptions.ConfMaxDiffRatio -> "1000")(run(stringIntKey, 2L))
  }

  test("fast and distributed paths commit identically: timestamp, decimal and double (NaN, infinities) key") {
    withConf(VersionedOptions.ConfMaxChain -> "3", VersionedOptions.ConfMaxDiffRatio -> "1000")(run(typedKey, 3L))
  }

  test("a large insert and upsert (objects hashed on a second driver thread) commit as the distributed path does") {
    val (fast, dist) = dirs
    val r = new Random(6L)
    val base = (0 until 200).map(i => longKey.row(Seq(i.toLong), longKey.genValues(r)))
    Seq(fast, dist).foreach(d => write(frame(longKey.schema, base), "r.t", at(d, "primaryKey" -> "id"): _*))
    // new keys above every fragment (a stream's ascending ids): committed by the driver, in one object of more
    // rows than ObjectWriter.OverlapMinRows, with nulls, unicode strings and special doubles among the values
    val n = ObjectWriter.OverlapMinRows + 3000
    val doubles = Seq(Double.NaN, -0.0, 0.0, Double.NegativeInfinity, 1e300)
    def values(i: Int): Seq[Any] = Seq(i % 97, if (i % 11 == 0) null else s"s$i-日本",
      if (i % 13 == 0) doubles(i % doubles.size) else r.nextGaussian())
    val inserted = (0 until n).map(i => longKey.row(Seq(1000L + i), values(i)))
    val updated = (0 until n).map(i => longKey.row(Seq(1000L + i * 1L), values(i + 7)))
    var cur = base.map(x => longKey.keyOf(x) -> x).toMap
    Seq(("insert", inserted, Seq.empty[(String, String)]), ("upsert", updated, Seq("upsert" -> "true"))).foreach {
      case (what, rows, opts) =>
        write(frame(longKey.schema, rows), "r.t", at(fast, opts: _*): _*)
        withConf(VersionedOptions.ConfLocalCommitMaxRows -> "0")(write(frame(longKey.schema, rows), "r.t", at(dist, opts: _*): _*))
        cur = cur ++ rows.map(x => longKey.keyOf(x) -> x)
        assertSame(s"$what of $n rows", cur.values.toSeq)
    }
  }

  test("computed changes (deleteWhere) are written by the driver exactly like by the distributed path") {
    val (fast, dist) = dirs
    val keyless = new StructType().add("s", StringType).add("n", IntegerType)
    val r = new Random(5L)
    val keyed = (0 until 300).map(i => longKey.row(Seq(i.toLong * 3), longKey.genValues(r)))
    // One fragment (45 rows): the range bounds of a key-less load are sampled after a shuffle, so two loads of
    // the same rows may split them differently; the commits compared here must start from the same layout.
    val dup = (0 until 45).map(i => Row(if (i % 7 == 0) null else s"v${i % 13}", i % 5))
    Seq(fast, dist).foreach { d =>
      write(frame(longKey.schema, keyed), "r.t", at(d, "primaryKey" -> "id"): _*)
      write(frame(keyless, dup), "r.k", at(d): _*)
    }
    var (curT, curK) = (keyed, dup)
    def delete(table: String, cond: String): Unit = Seq(fast, dist).foreach { d =>
      val opts = new java.util.HashMap[String, String](); opts.put("warehouse", d.getAbsolutePath)
      val run = () => versioned.spark.api.TableApi.deleteWhere(spark, opts, table, cond, null, s"delete $cond", null)
      if (d == fast) run() else withConf(VersionedOptions.ConfLocalCommitMaxRows -> "0")(run())
    }
    // key sets (KeyDelete: looked up and committed on the driver) and conditions that are not (a job)
    val some = (0 until 40).map(i => i * 21L) ++ Seq(-3L, 1L, 4000L) // most exist, some do not
    Seq(("a < 20", (x: Row) => x.getInt(0) < 20, "n = 3", (x: Row) => x.get(1) == 3),
      (s"id IN (${some.mkString(", ")})", (x: Row) => some.contains(x.getLong(1)), "n = 0", (x: Row) => x.get(1) == 0),
      ("id = 300 OR (id = 303 AND a >= 0) OR id <=> 306 OR 309 = id", (x: Row) => Set(300L, 303L, 306L, 309L)(x.getLong(1)),
        "s = 'v1'", (x: Row) => x.get(0) == "v1"),
      ("id IN (12, 15, 18, 24, 27, 30, 33, 36, 39, 45, 48) AND (s IS NULL OR a > 50)", (x: Row) =>
        Set(12L, 15L, 18L, 24L, 27L, 30L, 33L, 36L, 39L, 45L, 48L)(x.getLong(1)) && (x.isNullAt(2) || x.getInt(0) > 50),
        "n = 2", (x: Row) => x.get(1) == 2),
      // a key set resolved without the analyzer (names in another case, an integer beyond the key's values), then
      // conditions the analyzer resolves (a string and a decimal compared to the key; an integer an INT cannot hold)
      ("`ID` IN (51, 54, 9000000000) OR Id <=> 57", (x: Row) => Set(51L, 54L, 57L)(x.getLong(1)),
        "N IN (4, 40000000000)", (x: Row) => x.get(1) == 4),
      ("id = '60' OR id IN (63, 66.0)", (x: Row) => Set(60L, 63L, 66L)(x.getLong(1)), "n = 1.0", (x: Row) => x.get(1) == 1),
      ("id % 2 = 0 AND s IS NULL", (x: Row) => x.getLong(1) % 2 == 0 && x.isNullAt(2), "s IS NULL OR s = 'v4'",
        (x: Row) => x.isNullAt(0) || x.getString(0) == "v4")).foreach { case (ct, ft, ck, fk) =>
      delete("r.t", ct); delete("r.k", ck)
      curT = curT.filterNot(ft); curK = curK.filterNot(fk)
      assertSame(s"deleteWhere $ct", curT)
      val (ef, ed) = (engineOf(fast), engineOf(dist))
      val (kf, kd) = (ef.table("r", ef.branchHeadOption("r", "main").get, "k"), ed.table("r", ed.branchHeadOption("r", "main").get, "k"))
      assert(kf.hash == kd.hash, s"key-less table after $ck: table hashes differ")
      assertReads(read("r.k", at(fast): _*), curK, s"key-less table after $ck")
    }
  }

  test("delete conditions resolved without the analyzer: key sets of literals of the columns' types only") {
    val output = org.apache.spark.sql.catalyst.types.DataTypeUtils.toAttributes(longKey.schema)
    def resolved(cond: String, caseSensitive: Boolean = false) = versioned.spark.api.KeyDelete.simplyResolved(
      spark.sessionState.sqlParser.parseExpression(cond), output,
      if (caseSensitive) org.apache.spark.sql.catalyst.analysis.caseSensitiveResolution
      else org.apache.spark.sql.catalyst.analysis.caseInsensitiveResolution)
    Seq("id IN (1, 2, 3000000000)", "ID = 5 OR 7 = id", "id <=> 9 AND (a = 1 OR a IN (2, 3)) AND s = 'x'", "d = 1.5D")
      .foreach(c => assert(resolved(c).exists(_.resolved), c))
    assert(resolved("id IN (1, 2)").get.references.map(_.name).toSet == Set("id"))
    // anything else is left to the analyzer: other operators, literals of other types, integers an INT cannot hold,
    // nulls, unknown or differently cased names under case-sensitive resolution, expressions of columns
    Seq("id < 5", "id = '5'", "id IN (1, 2.5)", "a IN (1, 3000000000)", "id = NULL", "id IN (1, NULL)", "x = 1",
      "id + 1 = 2", "NOT id = 1", "id = a", "d = 1.5", "s = 1").foreach(c => assert(resolved(c).isEmpty, c))
    assert(resolved("ID = 5", caseSensitive = true).isEmpty)
  }

  test("a filter on the key reads the fast path's DIFFs like the distributed path's") {
    run(longKey, 4L)
    val (fast, dist) = dirs
    Seq(col("id") < 100, col("id") === 7L, col("id").between(500, 900)).foreach { p =>
      assertReads(read("r.t", at(fast): _*).filter(p), read("r.t", at(dist): _*).filter(p).collect().toSeq, s"filter $p")
    }
  }
}
