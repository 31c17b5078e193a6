package versioned.spark
package write

import versioned.spark.session.TableIdent

import versioned.core.format.WriteMode

import versioned.spark.session.{Settings, VersionedOptions}

import scala.util.Random
import org.apache.spark.sql.Row
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types._
import versioned.core.{Hashing, ObjectKind, Revision, TableVersion}

/**
 * Tail splits: a fragment over the DIFF ratio whose changes are mostly keyed above its SNAP (a table
 * growing at its end) gets a new fragment for the appended rows instead of a rewrite of its SNAP.
 * Fragments hold 50 rows in these tests (VersionedSparkSuite).
 */
class TailSplitSuite extends VersionedTestBase {
  // The key is deliberately not the first column.
  private val schema = new StructType().add("v", IntegerType).add("s", StringType).add("id", IntegerType)
  private def rowsOf(ids: Seq[Int], v: Int): Seq[Row] = ids.map(i => Row(v, s"s$i-$v", i))
  private val Ratio = Seq(VersionedOptions.ConfMaxDiffRatio -> "0.1", VersionedOptions.ConfMaxChain -> "1000",
    VersionedOptions.ConfConsolidateAfter -> "1000")

  private def table(hash: String, repo: String = "r"): TableVersion = engine.tableOption(repo, hash, "t").get
  private def head: TableVersion = table(headHash("r").get)

  private def assertHashesIntact(repo: String = "r"): Unit = engine.history.log(repo, Revision.DefaultBranch).foreach { e =>
    engine.tables(repo, e.image.hash).foreach(t => assert(t.hash == Hashing.tableHash(t), s"table ${t.name} hash changed"))
  }

  test("appends past the last fragment become a new fragment's SNAP; the old SNAP is kept and the rest merged") {
    withConf(Ratio: _*) {
      val v0 = rowsOf(0 until 200, 0)
      write(frame(schema, v0), "r.t", "primaryKey" -> "id")
      val snaps = head.fragments.map(_.objects)
      assert(snaps.size == 4)
      write(frame(schema, rowsOf(Seq(160, 200, 201, 202), 1)), "r.t", "upsert" -> "true")
      assert(head.compacted.isEmpty, "4 DIFF rows for 50 SNAP rows stay below 10%")
      write(frame(schema, rowsOf(Seq(203, 204), 2)), "r.t", "upsert" -> "true")
      val t = head
      val c = t.compacted.getOrElse(fail("6 DIFF rows for 50 SNAP rows should have been compacted"))
      assert(c.size == 5, c)
      assert(c.take(3) == t.fragments.take(3), "fragments below the ratio are left alone")
      val objs = engine.objects(c.flatMap(_.objects))
      assert(c(3).objects.head == snaps(3).head, "the last fragment keeps its SNAP")
      assert(c(3).objects.size == 2 && objs(c(3).objects(1)).kind == ObjectKind.Diff && objs(c(3).objects(1)).rowCount == 1,
        "the one change at or below the SNAP's largest key stays in a merged DIFF")
      assert(c(4).lower.contains(Seq(200L)) && c(4).objects.size == 1, c(4))
      assert(objs(c(4).objects.head).kind == ObjectKind.Snap && objs(c(4).objects.head).rowCount == 5)
      val expected = (v0 ++ rowsOf(Seq(160, 200, 201, 202), 1) ++ rowsOf(Seq(203, 204), 2)).groupBy(_.getInt(2)).values.map(_.last).toSeq
      assertReads(read("r.t"), expected, "after the split")
      assertReads(read("r.t").filter(col("id") >= 199), expected.filter(_.getInt(2) >= 199), "pruned to the new fragment")
      assertReads(read("r.t", "ref" -> "main~2"), v0, "first version")
      // Later commits build on the split layout: the new fragment takes the next appends.
      write(frame(schema, rowsOf(Seq(205), 3)), "r.t", "upsert" -> "true")
      assert(head.fragments.size == 5 && head.fragments(4).objects.size == 2)
      assertReads(read("r.t"), (expected ++ rowsOf(Seq(205), 3)), "after one more append")
      assertHashesIntact()
    }
  }

  test("commits planned before a split compaction was recorded carry the split form forward, not split again") {
    val Off = Seq(VersionedOptions.ConfMaxDiffRatio -> "1000", VersionedOptions.ConfMaxChain -> "1000",
      VersionedOptions.ConfConsolidateAfter -> "1000")
    var cur = rowsOf(0 until 200, 0).map(r => r.getInt(2) -> r).toMap
    def commit(ups: Seq[Int], v: Int, deletes: Seq[Int] = Nil): Unit = withConf(Off: _*) {
      val s = schema.add("del", BooleanType)
      val rows = rowsOf(ups, v).map(r => Row.fromSeq(r.toSeq :+ false)) ++ deletes.map(i => Row(null, null, i, true))
      write(frame(s, rows), "r.t", "upsert" -> "true", "deleteColumn" -> "del")
      cur = cur ++ rowsOf(ups, v).map(r => r.getInt(2) -> r) -- deletes
    }
    withConf(Off: _*)(write(frame(schema, cur.values.toSeq), "r.t", "primaryKey" -> "id"))
    // appends past the last fragment (keys 200..) with one change inside it: over the ratio, split at the compaction
    commit(Seq(160, 200, 201, 202, 203, 204), 1)
    val ancestor = engine.resolve("r", Revision.DefaultBranch)
    // commits planned on the logical chains while that compaction runs: changes on both sides of the split key
    commit(Seq(170, 205), 2, deletes = Seq(201))
    commit(Seq(171, 206), 3, deletes = Seq(150))
    val head = engine.resolve("r", Revision.DefaultBranch)
    val req = versioned.spark.write.WriteRequest(TableIdent("r", "t"), None, versioned.core.format.WriteMode.Changes,
      None, upsert = false, "t", "t", Map.empty)
    withConf(Ratio: _*) {
      val settings = Settings.of(spark)
      assert(versioned.spark.write.Compactor.maybeCompact(spark, engine, req, ancestor, settings) == 2, "the split")
      val split = table(ancestor.hash).compacted.getOrElse(fail("no split form"))
      assert(split.size == 5 && split(4).lower.contains(Seq(200L)), split)
      // the head's compaction takes the split form and divides only the two later commits' DIFFs at key 200
      assert(versioned.spark.write.Compactor.maybeCompact(spark, engine, req, head, settings) == 2, "the division")
      val c = table(head.hash).compacted.getOrElse(fail("the head's carried form was not recorded"))
      assert(c.size == 5 && c.map(_.lower) == split.map(_.lower), c)
      assert(c(3).objects.init == split(3).objects && c(4).objects.init == split(4).objects, s"$c / $split")
      val objs = engine.objects(c.flatMap(_.objects))
      assert(objs(c(3).objects.last).rowCount == 3 && objs(c(4).objects.last).rowCount == 3,
        "keys 150, 170, 171 below the split; 201, 205, 206 above")
    }
    assertReads(read("r.t"), cur.values.toSeq, "the head through the carried split form")
    assertReads(read("r.t").filter(col("id") >= 200), cur.values.filter(_.getInt(2) >= 200).toSeq, "pruned to the tail")
    // the next commit builds on the split form
    val carriedRows = cur.values.toSeq
    withConf(Off: _*)(write(frame(schema, rowsOf(Seq(207), 4)), "r.t", "upsert" -> "true"))
    cur = cur ++ rowsOf(Seq(207), 4).map(r => r.getInt(2) -> r)
    val next = table(headHash("r").get).fragments
    assert(next.size == 5 && next(4).objects.size == 3, next)
    assertReads(read("r.t"), cur.values.toSeq, "after one more commit")
    // the carried version, read through its logical chains
    engine.clearCompacted("r", ancestor.hash, "t")
    assertReads(read("r.t", "image" -> ancestor.hash).filter(col("id") < 0), Nil, "nothing below 0")
    engine.clearCompacted("r", head.hash, "t")
    assertReads(read("r.t", "image" -> head.hash), carriedRows, "the carried version through its logical chains")
    assertHashesIntact()
  }

  test("a fragment whose changes land inside its SNAP is rewritten, not split") {
    withConf(Ratio: _*) {
      val v0 = rowsOf(0 until 200, 0)
      write(frame(schema, v0), "r.t", "primaryKey" -> "id")
      val upd = rowsOf(Seq(151, 152, 153, 154, 155, 200), 1)
      write(frame(schema, upd), "r.t", "upsert" -> "true")
      val c = head.compacted.getOrElse(fail("6 DIFF rows for 50 SNAP rows should have been compacted"))
      assert(c.size == 4 && c(3).objects.size == 1 && c(3).objects != head.fragments(3).objects)
      assertReads(read("r.t"), (v0.filterNot(r => upd.exists(_.getInt(2) == r.getInt(2))) ++ upd), "after the rewrite")
    }
  }

  test("a fragment under half the target size is rewritten, not split, so small tables stay in few fragments") {
    withConf(Ratio: _*) {
      val v0 = rowsOf(0 until 20, 0)
      write(frame(schema, v0), "r.t", "primaryKey" -> "id")
      assert(head.fragments.map(_.objects.size) == Seq(1))
      val added = rowsOf(20 until 22, 1)
      write(frame(schema, added), "r.t", "upsert" -> "true")
      val c = head.compacted.getOrElse(fail("2 appended rows for 20 SNAP rows should have been compacted"))
      assert(c.size == 1 && c.head.objects.size == 1, c)
      assert(engine.objects(c.head.objects)(c.head.objects.head).rowCount == 22)
      assertReads(read("r.t"), v0 ++ added, "after the rewrite")
    }
  }

  /** Random appends, updates and deletes against an in-memory oracle; every version is re-read at the end. */
  private def randomHistory(repo: String, seed: Long, keyType: DataType): Unit = {
    val rnd = new Random(seed)
    val sch = new StructType().add("v", IntegerType).add("k", keyType)
    def key(i: Int): Any = if (keyType == StringType) f"k$i%06d" else i
    def row(i: Int, v: Int) = Row(v, key(i))
    var cur = (0 until 150).map(i => i -> row(i, 0)).toMap
    var next = 150
    write(frame(sch, cur.values.toSeq), s"$repo.t", "primaryKey" -> "k")
    val versions = Vector.newBuilder[(String, Seq[Row])]
    versions += headHash(repo).get -> cur.values.toSeq
    for (step <- 1 to 14) {
      val appends = (next until next + rnd.nextInt(6)).toSeq
      next += appends.size + rnd.nextInt(3)
      val existing = cur.keys.toSeq
      val updates = Seq.fill(rnd.nextInt(3))(existing(rnd.nextInt(existing.size))).distinct
      val deletes = Seq.fill(rnd.nextInt(2))(existing(rnd.nextInt(existing.size))).distinct.filterNot(updates.contains)
      val feed = (appends ++ updates).map(i => Row(step, key(i), false)) ++ deletes.map(i => Row(null, key(i), true))
      write(frame(sch.add("del", BooleanType), feed), s"$repo.t", "upsert" -> "true", "deleteColumn" -> "del")
      cur = cur ++ (appends ++ updates).map(i => i -> row(i, step)) -- deletes
      versions += headHash(repo).get -> cur.values.toSeq
    }
    val all = versions.result()
    assert(all.map(v => table(v._1, repo)).exists(t => t.compacted.exists(_.size > t.fragments.size)), "some commit split a tail")
    all.zipWithIndex.foreach { case ((hash, rows), i) =>
      assertReads(read(s"$repo.t", "image" -> hash), rows, s"seed $seed, version $i")
    }
    assertHashesIntact(repo)
  }

  test("randomized appends, updates and deletes: every version reads like the oracle (integer and string keys)") {
    withConf(VersionedOptions.ConfMaxDiffRatio -> "0.1", VersionedOptions.ConfMaxChain -> "6",
      VersionedOptions.ConfConsolidateAfter -> "3") {
      Seq(IntegerType, StringType).zipWithIndex.foreach { case (kt, n) =>
        (1 to 2).foreach { s =>
          randomHistory(s"q${n}x$s", s * 31L + n, kt)
        }
      }
    }
  }
}
