package versioned.spark

import versioned.spark.session.VersionedOptions

import scala.util.Random
import org.apache.spark.sql.{Column, Row}
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types._

/**
 * Property-style check against an in-memory oracle: seeded random histories of appends, upserts and
 * overwrites (deletes, updates, key changes, inserts, no-ops). After every commit the head and a
 * random filtered, projected read must equal the oracle; at the end every earlier version must read
 * back identically through `ref` = main~N and `image` = its hash (plus filters, LIMIT and asOf on some).
 * Fragments are small (50 rows) so changes spread over several fragments and DIFF chains; the
 * scenarios compact at chain length 3, never, and by the default policy.
 */
class RandomizedOracleSuite extends VersionedTestBase {
  /** The length of each random history: 14 commits at the standard depth, 20 in the deep run. */
  private val Commits = versioned.core.TestDepth(14, 20)

  /** A filter both as a Spark column and as a predicate on oracle rows. */
  private case class Probe(name: String, column: Column, pred: Row => Boolean)
  private case class Version(hash: String, rows: Seq[Row])

  /** A keyed table: how to make keys and rows, and which filters to probe. */
  private trait KeyedModel {
    def schema: StructType
    def primaryKey: String
    def keyOf(row: Row): Any
    def freshKey(r: Random): Any
    def row(r: Random, key: Any): Row
    def withKey(row: Row, key: Any): Row
    def probes(r: Random, rows: Seq[Row]): Seq[Probe]
  }

  private def pick[T](r: Random, xs: Seq[T]): T = xs(r.nextInt(xs.size))

  /** The head, sometimes its count, and one random filter with a projection to a random column. */
  private def checkHead(table: String, step: String, expected: Seq[Row], probes: Seq[Probe], r: Random,
                        count: Boolean): Unit = {
    val df = read(table)
    assertReads(df, expected, s"$step: head")
    if (count) assert(df.count() == expected.size, s"$step: count")
    val p = pick(r, probes)
    val i = r.nextInt(df.columns.length)
    assertReads(read(table).filter(p.column).select(df.columns(i)), expected.filter(p.pred).map(x => Row(x.get(i))),
      s"$step: filter ${p.name}, column ${df.columns(i)}")
  }

  /** Every version through ancestry and through its (full or abbreviated) hash, plus one filter each. */
  private def checkHistory(table: String, versions: Seq[Version], probes: Seq[Row] => Seq[Probe], r: Random): Unit = {
    val n = versions.size
    versions.zipWithIndex.foreach { case (v, i) =>
      val back = n - 1 - i
      assertReads(read(table, "ref" -> s"main~$back"), v.rows, s"version $i via main~$back")
      val hash = if (i % 2 == 0) v.hash else v.hash.take(12)
      assertReads(read(table, "image" -> hash), v.rows, s"version $i via image $hash")
      if (i % 6 == 0) {
        val created = engine.resolve("r", versioned.core.Revision.Spec(v.hash)).createdMs
        assertReads(read(table, "asOf" -> created.toString), v.rows, s"version $i via asOf $created")
      }
      if (i % 4 == 2) {
        val limited = multiset(read(table, "image" -> v.hash).limit(7).collect().toSeq)
        val all = multiset(v.rows)
        assert(limited.values.sum == math.min(7, v.rows.size) && limited.forall { case (row, c) => all.getOrElse(row, 0) >= c },
          s"version $i: LIMIT 7 returned rows outside the version: $limited")
      }
      val p = pick(r, probes(v.rows))
      if (i % 2 == 1) assertReads(read(table, "image" -> v.hash).filter(p.column), v.rows.filter(p.pred), s"version $i filter ${p.name}")
    }
  }

  private def runKeyed(m: KeyedModel, seed: Long, table: String): Seq[Version] = {
    val r = new Random(seed)
    var cur = Map.empty[Any, Row]
    val versions = scala.collection.mutable.ArrayBuffer[Version]()
    def fresh(n: Int): Seq[Any] = {
      val out = scala.collection.mutable.LinkedHashSet[Any]()
      while (out.size < n) { val k = m.freshKey(r); if (!cur.contains(k)) out += k }
      out.toSeq
    }
    def keys: Seq[Any] = cur.keys.toSeq.sortBy(_.toString)
    def commit(step: String, next: Map[Any, Row]): Unit = {
      // a write that changes nothing makes no commit: the head stays only when the content is the same
      val moved = !versions.lastOption.exists(_.hash == headHash("r").get)
      assert(moved || next == cur, s"$step: the head did not move although the content changed")
      cur = next
      if (moved) versions += Version(headHash("r").get, cur.values.toSeq)
      checkHead(table, step, cur.values.toSeq, m.probes(r, cur.values.toSeq), r, count = versions.size % 4 == 1)
    }
    val initial = fresh(120).map(k => k -> m.row(r, k)).toMap
    write(frame(m.schema, initial.values.toSeq), table, "primaryKey" -> m.primaryKey, "message" -> "initial")
    commit("initial", initial)
    for (i <- 1 until Commits) r.nextInt(10) match {
      case op if op < 3 =>
        val add = fresh(1 + r.nextInt(25)).map(k => k -> m.row(r, k))
        write(frame(m.schema, add.map(_._2)), table, "message" -> s"c$i append")
        commit(s"commit $i (append ${add.size})", cur ++ add)
      case op if op < 6 =>
        val upd = r.shuffle(keys).take(r.nextInt(20)).map(k => k -> m.row(r, k))
        val ins = fresh(if (upd.isEmpty) 1 else r.nextInt(8)).map(k => k -> m.row(r, k))
        write(frame(m.schema, r.shuffle(upd ++ ins).map(_._2)), table, "upsert" -> "true", "message" -> s"c$i upsert")
        commit(s"commit $i (upsert ${upd.size} updates, ${ins.size} inserts)", cur ++ upd ++ ins)
      case op =>
        val next = if (op == 9 && r.nextBoolean()) cur else {
          val shuffled = r.shuffle(keys)
          val (del, rest) = shuffled.splitAt(r.nextInt(15))
          val (upd, rest2) = rest.splitAt(r.nextInt(15))
          val moved = rest2.take(r.nextInt(6))
          val newKeys = fresh(moved.size + r.nextInt(12))
          val (movedTo, ins) = newKeys.splitAt(moved.size)
          (cur -- del -- moved) ++ upd.map(k => k -> m.row(r, k)) ++
            moved.zip(movedTo).map { case (o, k) => k -> m.withKey(cur(o), k) } ++ ins.map(k => k -> m.row(r, k))
        }
        overwrite(frame(m.schema, r.shuffle(next.values.toSeq)), table, "message" -> s"c$i overwrite")
        commit(s"commit $i (overwrite to ${next.size} rows${if (next eq cur) ", no-op" else ""})", next)
    }
    val all = versions.toVector
    assert(logSize("r") == all.size && all.size > Commits / 2)
    checkHistory(table, all, rows => m.probes(r, rows), r)
    all
  }

  private object IntKey extends KeyedModel {
    val schema: StructType = new StructType().add("id", IntegerType).add("name", StringType).add("v", IntegerType)
      .add("score", DoubleType)
    val primaryKey = "id"
    def keyOf(row: Row): Any = row.getInt(0)
    def freshKey(r: Random): Any = r.nextInt(1000)
    def row(r: Random, key: Any): Row =
      Row(key, if (r.nextInt(8) == 0) null else s"n${r.nextInt(40)}", r.nextInt(20), r.nextInt(100) * 0.25)
    def withKey(row: Row, key: Any): Row = Row(key, row.get(1), row.get(2), row.get(3))
    def probes(r: Random, rows: Seq[Row]): Seq[Probe] = {
      val k = if (rows.nonEmpty && r.nextBoolean()) rows(r.nextInt(rows.size)).getInt(0) else r.nextInt(1000)
      val lo = r.nextInt(900); val x = r.nextInt(20); val s = s"n${r.nextInt(40)}"
      val ks = Seq.fill(5)(r.nextInt(1000)) ++ rows.take(2).map(_.getInt(0))
      Seq(
        Probe(s"id = $k", col("id") === k, _.getInt(0) == k),
        Probe(s"id in [$lo, ${lo + 100}]", col("id").between(lo, lo + 100), row => row.getInt(0) >= lo && row.getInt(0) <= lo + 100),
        Probe(s"v = $x", col("v") === x, _.getInt(2) == x),
        Probe(s"id IN $ks", col("id").isin(ks: _*), row => ks.contains(row.getInt(0))),
        Probe(s"name = $s", col("name") === s, _.getString(1) == s),
        Probe("name IS NULL", col("name").isNull, _.isNullAt(1)),
        Probe(s"score > ${x * 1.25} AND v < $x", col("score") > x * 1.25 && col("v") < x,
          row => row.getDouble(3) > x * 1.25 && row.getInt(2) < x),
        Probe(s"v = $x OR id < $lo", col("v") === x || col("id") < lo, row => row.getInt(2) == x || row.getInt(0) < lo))
    }
  }

  private object CompositeKey extends KeyedModel {
    private val letters = "abcdefghijkl".map(_.toString)
    val schema: StructType = new StructType().add("k", StringType).add("n", IntegerType).add("v", IntegerType)
      .add("s", StringType)
    val primaryKey = "k, n"
    def keyOf(row: Row): Any = (row.getString(0), row.getInt(1))
    def freshKey(r: Random): Any = (pick(r, letters), r.nextInt(100))
    def row(r: Random, key: Any): Row = {
      val (k, n) = key.asInstanceOf[(String, Int)]
      Row(k, n, r.nextInt(10), if (r.nextInt(10) == 0) null else s"s${r.nextInt(30)}")
    }
    def withKey(row: Row, key: Any): Row = { val (k, n) = key.asInstanceOf[(String, Int)]; Row(k, n, row.get(2), row.get(3)) }
    def probes(r: Random, rows: Seq[Row]): Seq[Probe] = {
      val (k, n) = if (rows.nonEmpty && r.nextBoolean()) keyOf(rows(r.nextInt(rows.size))).asInstanceOf[(String, Int)]
        else freshKey(r).asInstanceOf[(String, Int)]
      val l2 = pick(r, letters); val x = r.nextInt(10); val s = s"s${r.nextInt(30)}"
      Seq(
        Probe(s"k = $k AND n = $n", col("k") === k && col("n") === n, row => row.getString(0) == k && row.getInt(1) == n),
        Probe(s"k = $k", col("k") === k, _.getString(0) == k),
        Probe(s"n < $n", col("n") < n, _.getInt(1) < n),
        Probe(s"k IN ($k, $l2)", col("k").isin(k, l2), row => Set(k, l2).contains(row.getString(0))),
        Probe(s"v = $x", col("v") === x, _.getInt(2) == x),
        Probe(s"s = $s", col("s") === s, _.getString(3) == s),
        Probe(s"k > $k AND v >= $x", col("k") > k && col("v") >= x, row => row.getString(0) > k && row.getInt(2) >= x))
    }
  }

  test("int primary key: random appends, upserts and overwrites, compacting at chain length 3") {
    withConf(VersionedOptions.ConfMaxChain -> "3", VersionedOptions.ConfMaxDiffRatio -> "1000") {
      val versions = runKeyed(IntKey, seed = 11L, "r.t")
      val compacted = versions.count(v => engine.tableOption("r", v.hash, "t").exists(_.compacted.nonEmpty))
      assert(compacted > 0, "chains of length 3 should have been compacted at least once")
      assert(engine.tableOption("r", versions.last.hash, "t").get.fragments.size >= 3, "expected several fragments")
    }
  }

  test("composite (string, int) primary key: random appends, upserts and overwrites, never compacted") {
    // no commit-time compaction: chains grow to up to 24 DIFFs that every read merges
    val versions = withConf(VersionedOptions.ConfMaxChain -> "1000", VersionedOptions.ConfMaxDiffRatio -> "1000",
        VersionedOptions.ConfConsolidateAfter -> "1000") {
      runKeyed(CompositeKey, seed = 22L, "r.c")
    }
    assert(versions.forall(v => engine.tableOption("r", v.hash, "c").get.compacted.isEmpty))
    assert(engine.tableOption("r", versions.head.hash, "c").get.fragments.size >= 3)
  }

  test("key-less table with duplicate rows: random appends and overwrites, default compaction policy") {
    val r = new Random(33L)
    val schema = new StructType().add("a", StringType).add("b", IntegerType)
    val letters = Seq("p", "q", "r", "s", "t")
    def row(): Row = Row(if (r.nextInt(15) == 0) null else pick(r, letters), r.nextInt(8))
    def probes(rows: Seq[Row]): Seq[Probe] = {
      val a = pick(r, letters); val b = r.nextInt(8); val a2 = pick(r, letters)
      Seq(
        Probe(s"a = $a", col("a") === a, _.getString(0) == a),
        Probe(s"b = $b", col("b") === b, _.getInt(1) == b),
        Probe(s"b > $b", col("b") > b, _.getInt(1) > b),
        Probe(s"a IN ($a, $a2)", col("a").isin(a, a2), row => Set(a, a2).contains(row.getString(0))),
        Probe(s"a = $a AND b = $b", col("a") === a && col("b") === b, row => row.getString(0) == a && row.getInt(1) == b),
        Probe("a IS NULL", col("a").isNull, _.isNullAt(0)))
    }
    var cur: Seq[Row] = Seq.fill(150)(row())
    val versions = scala.collection.mutable.ArrayBuffer[Version]()
    def commit(step: String, next: Seq[Row]): Unit = {
      val moved = !versions.lastOption.exists(_.hash == headHash("r").get)
      assert(moved || multiset(next) == multiset(cur), s"$step: the head did not move although the content changed")
      cur = next
      if (moved) versions += Version(headHash("r").get, cur)
      checkHead("r.nk", step, cur, probes(cur), r, count = versions.size % 4 == 1)
    }
    write(frame(schema, cur), "r.nk", "message" -> "initial")
    commit("initial", cur)
    for (i <- 1 until Commits) r.nextInt(10) match {
      case op if op < 4 =>
        // new rows and copies of existing rows: duplicates are kept
        val add = Seq.fill(1 + r.nextInt(15))(row()) ++ r.shuffle(cur).take(r.nextInt(5))
        write(frame(schema, add), "r.nk", "message" -> s"c$i append")
        commit(s"commit $i (append ${add.size})", cur ++ add)
      case op =>
        val next = if (op == 9 && r.nextBoolean()) r.shuffle(cur) else {
          val (dropped, kept) = r.shuffle(cur).splitAt(r.nextInt(20))
          val (changed, same) = kept.splitAt(r.nextInt(10))
          // a "key change": the row's identity is its value, so an edited row is a delete plus an insert
          same ++ changed.map(x => Row(x.get(0), (x.getInt(1) + 1 + r.nextInt(3)) % 8)) ++
            Seq.fill(r.nextInt(12))(row()) ++ dropped.take(r.nextInt(3))
        }
        overwrite(frame(schema, next), "r.nk", "message" -> s"c$i overwrite")
        commit(s"commit $i (overwrite to ${next.size} rows)", next)
    }
    val all = versions.toVector
    assert(multiset(all.last.rows).exists(_._2 > 1), "the history should keep duplicate rows")
    assert(all.exists(v => engine.tableOption("r", v.hash, "nk").get.compacted.nonEmpty), "expected some compaction")
    assert(engine.tableOption("r", all.head.hash, "nk").get.fragments.size >= 3)
    checkHistory("r.nk", all, probes, r)
  }

  test("overwrites that change the schema or the primary key keep every version readable") {
    val s1 = new StructType().add("id", IntegerType).add("v", StringType)
    val s2 = s1.add("w", DoubleType)
    val v0 = (1 to 120).map(i => Row(i, s"v$i"))
    val v1 = v0 ++ (121 to 130).map(i => Row(i, s"v$i"))
    val v2 = v1.filter(_.getInt(0) % 3 != 0).map(r => Row(r.get(0), r.get(1), r.getInt(0) * 0.5))
    val v3 = v2.map(r => if (r.getInt(0) % 10 == 1) Row(r.get(0), "up" + r.get(0), -1.0) else r) :+ Row(500, "v500", 1.0)
    val v4 = v3.filter(_.getInt(0) < 100).map(r => Row(r.getInt(0) + 1000, r.get(1), r.get(2)))
    val v5 = v4 :+ Row(7, "seven", 7.0)
    write(frame(s1, v0), "r.sc", "primaryKey" -> "id")
    write(frame(s1, v1.drop(120)), "r.sc")
    overwrite(frame(s2, v2), "r.sc")
    write(frame(s2, v3.filter(r => r.getInt(0) % 10 == 1 || r.getInt(0) == 500)), "r.sc", "upsert" -> "true")
    overwrite(frame(s2, v4), "r.sc", "primaryKey" -> "v")
    write(frame(s2, Seq(Row(7, "seven", 7.0))), "r.sc")
    val head = engine.tableOption("r", headHash("r").get, "sc").get
    assert(head.primaryKey == Seq("v"))
    val versions = Seq(v0, v1, v2, v3, v4, v5)
    val hashes = engine.history.log("r", versioned.core.Revision.DefaultBranch).map(_.image.hash).reverse
    versions.zipWithIndex.foreach { case (rows, i) =>
      val byRef = read("r.sc", "ref" -> s"main~${5 - i}")
      assert(byRef.columns.toSeq == (if (i < 2) Seq("id", "v") else Seq("id", "v", "w")), s"version $i schema")
      assertReads(byRef, rows, s"version $i via ancestry")
      assertReads(read("r.sc", "image" -> hashes(i)), rows, s"version $i via hash")
      assertReads(read("r.sc", "image" -> hashes(i)).filter(col("v") === "v5"), rows.filter(_.getString(1) == "v5"),
        s"version $i filtered")
    }
    expectError(versioned.core.ErrorClass.KeyExists, "seven")(write(frame(s2, Seq(Row(8, "seven", 8.0))), "r.sc"))
  }
}
