package versioned.spark
package write

import versioned.spark.session.{VersionedOptions, TableSnapshot}

import org.apache.spark.sql.Row
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types._
import versioned.core.{Fragment, Hashing, ObjectKind, Revision, TableVersion}
import versioned.spark.write.Compactor

/**
 * Chain compaction: a compacted representation is recorded next to the logical fragments, reads of
 * every version stay identical, and no table or image hash changes.
 */
class CompactionSuite extends VersionedTestBase {
  private val schema = new StructType().add("id", IntegerType).add("v", IntegerType).add("s", StringType)
  private def rowsOf(ids: Seq[Int], v: Int): Seq[Row] = ids.map(i => Row(i, v, s"s$i-$v"))

  /** Compaction triggered by chain length only (the DIFF/SNAP row-ratio trigger is switched off). */
  private val NoRatio = VersionedOptions.ConfMaxDiffRatio -> "1000"

  private def table(hash: String, name: String = "t"): TableVersion = engine.tableOption("r", hash, name).get
  private def diffs(f: Fragment, objs: Map[String, versioned.core.ObjectMeta]): Int =
    f.objects.count(id => objs(id).kind == ObjectKind.Diff)

  /** Stored table and image hashes still match their content (compaction must not touch them). */
  private def assertHashesIntact(): Unit = engine.history.log("r", Revision.DefaultBranch).foreach { e =>
    val img = e.image
    val tables = engine.tables("r", img.hash)
    tables.foreach(t => assert(t.hash == Hashing.tableHash(t), s"table ${t.name} of ${img.shortHash}: hash changed"))
    assert(Hashing.imageHash(img.parents, img.author, img.message, img.createdMs, tables.map(t => t.name -> t.hash), img.actor) ==
      img.hash, s"image ${img.shortHash} no longer matches its content")
  }

  /** A history of 8 commits whose changes touch every fragment, returning (image hash, rows) per version. */
  private def history(): Seq[(String, Seq[Row])] = {
    var cur = rowsOf(0 until 200, 0).map(r => r.getInt(0) -> r).toMap
    val out = Vector.newBuilder[(String, Seq[Row])]
    def record(): Unit = out += headHash("r").get -> cur.values.toSeq
    write(frame(schema, cur.values.toSeq), "r.t", "primaryKey" -> "id")
    record()
    for (step <- 1 to 7) {
      step % 3 match {
        case 0 =>
          val next = cur.filterNot { case (id, _) => id % 23 == step } ++ rowsOf((0 until 200 by 17).map(_ + 1000 * step), step).map(r => r.getInt(0) -> r)
          overwrite(frame(schema, next.values.toSeq), "r.t")
          cur = next
        case 1 =>
          val upd = rowsOf((step until 200 by 9) :+ (300 + step), step)
          write(frame(schema, upd), "r.t", "upsert" -> "true")
          cur ++= upd.map(r => r.getInt(0) -> r)
        case 2 =>
          val add = rowsOf((0 until 200 by 20).map(_ * 7 + step * 2 + 5000), step)
          write(frame(schema, add), "r.t")
          cur ++= add.map(r => r.getInt(0) -> r)
      }
      record()
    }
    out.result()
  }

  private def assertVersions(versions: Seq[(String, Seq[Row])], table: String = "r.t"): Unit =
    versions.zipWithIndex.foreach { case ((hash, rows), i) =>
      assertReads(read(table, "image" -> hash), rows, s"version $i by hash")
      assertReads(read(table, "ref" -> s"main~${versions.size - 1 - i}"), rows, s"version $i by ancestry")
      assertReads(read(table, "image" -> hash).filter(col("v") === 1 || col("id") < 20), rows.filter(r =>
        r.getInt(1) == 1 || r.getInt(0) < 20), s"version $i filtered")
    }

  test("automatic compaction at chain length 2: bounded chains, identical versions, unchanged hashes") {
    withConf(VersionedOptions.ConfMaxChain -> "2", NoRatio) {
      val versions = history()
      val compacted = versions.map(v => table(v._1)).filter(_.compacted.nonEmpty)
      assert(compacted.nonEmpty, "some version should have a compacted representation")
      versions.foreach { case (hash, _) =>
        val t = table(hash)
        val objs = engine.objects(t.effectiveFragments.flatMap(_.objects))
        assert(t.effectiveFragments.forall(diffs(_, objs) < 2), s"image ${hash.take(12)} kept a chain of 2 DIFFs")
        t.compacted.foreach(c => assert(c.map(_.lower) == t.fragments.map(_.lower), "compaction must keep fragment bounds"))
      }
      assertVersions(versions)
      assertHashesIntact()
      assert(logSize("r") == versions.size && headHash("r").get == versions.last._1)
    }
  }

  test("runs of commit DIFFs are consolidated into one DIFF: no SNAP rewritten, versions and hashes intact") {
    withConf(VersionedOptions.ConfConsolidateAfter -> "3", VersionedOptions.ConfMaxChain -> "1000", NoRatio) {
      val versions = history()
      val snaps = table(versions.head._1).fragments.flatMap(_.objects).toSet
      var consolidatedSeen = 0
      versions.foreach { case (hash, _) =>
        val t = table(hash)
        val objs = engine.objects(t.effectiveFragments.flatMap(_.objects))
        t.effectiveFragments.foreach { f =>
          assert(versioned.core.format.CompactionPolicy.trailingCommitDiffs(f, objs).size < 3, s"image ${hash.take(12)}: a run of 3 commit DIFFs was kept")
          f.objects.filter(id => objs(id).kind == ObjectKind.Snap).foreach(id => assert(snaps.contains(id), "no SNAP is rewritten"))
          val merged = f.objects.filter(id => objs(id).kind == ObjectKind.Diff && objs(id).parents.size > 1)
          consolidatedSeen += merged.size
          merged.foreach(id => assert(objs(id).rowCount <= engine.objects(objs(id).parents).values.map(_.rowCount).sum))
        }
      }
      assert(consolidatedSeen > 0, "some chain should have been consolidated")
      assertVersions(versions)
      assertHashesIntact()
    }
  }

  test("consolidation compares keys, also when the key is not the first column") {
    withConf(VersionedOptions.ConfConsolidateAfter -> "3", VersionedOptions.ConfMaxChain -> "1000", NoRatio) {
      val vk = new StructType().add("v", IntegerType).add("id", IntegerType)
      var cur = (0 until 40).map(i => i -> Row(i % 3, i)).toMap
      write(frame(vk, cur.values.toSeq), "r.t", "primaryKey" -> "id")
      for (step <- 1 to 4) {
        val upd = Seq(step, step + 10, step + 20).map(i => Row(step % 2, i))
        write(frame(vk, upd), "r.t", "upsert" -> "true")
        cur ++= upd.map(r => r.getInt(1) -> r)
      }
      val t = table(headHash("r").get)
      val objs = engine.objects(t.effectiveFragments.flatMap(_.objects))
      assert(t.effectiveFragments.flatMap(_.objects).exists(id => objs(id).parents.size > 1), "some DIFFs were consolidated")
      assertReads(read("r.t"), cur.values.toSeq, "after consolidation")
    }
  }

  test("compacting by hand changes neither hashes nor content, and later commits build on it") {
    withConf(VersionedOptions.ConfMaxChain -> "100", VersionedOptions.ConfConsolidateAfter -> "1000", NoRatio) {
      val versions = history()
      val head = engine.branchHeadOption("r", "main").get
      assert(versions.forall(v => table(v._1).compacted.isEmpty))
      val before = table(head.hash)
      val older = versions(versions.size - 3)._1
      Seq(head.hash, older).foreach { h =>
        val snap = TableSnapshot.load(engine, "r", "t", engine.resolve("r", Revision.Spec(h)))
        Compactor.compact(spark, engine, snap, snap.version.fragments.indices.toSet, Map.empty)
      }
      val after = table(head.hash)
      assert(after.hash == before.hash && after.fragments == before.fragments)
      val c = after.compacted.getOrElse(fail("no compacted representation recorded"))
      val objs = engine.objects(c.flatMap(_.objects))
      assert(c.forall(f => f.objects.size <= 1 && f.objects.forall(objs(_).kind == ObjectKind.Snap)), c)
      assert(table(older).compacted.nonEmpty)
      assert(headHash("r").get == head.hash && logSize("r") == versions.size)
      assertVersions(versions)
      assertHashesIntact()

      // a commit on top builds on the compacted SNAPs
      val extra = rowsOf(Seq(3, 7000), 9)
      write(frame(schema, extra), "r.t", "upsert" -> "true")
      val next = (versions.last._2.map(r => r.getInt(0) -> r).toMap ++ extra.map(r => r.getInt(0) -> r)).values.toSeq
      assertReads(read("r.t"), next, "commit after compaction")
      val snaps = c.flatMap(_.objects).toSet
      assert(table(headHash("r").get).fragments.flatMap(_.objects).exists(snaps), "later commits should reuse compacted SNAPs")
      assertVersions(versions :+ (headHash("r").get -> next))

      // dropping the compacted form falls back to the logical chains
      engine.clearCompacted("r", head.hash, "t")
      assertReads(read("r.t", "image" -> head.hash), versions.last._2, "after clearCompacted")
      assertHashesIntact()
    }
  }

  test("a fragment whose rows were all deleted compacts to an empty chain and accepts new rows") {
    // its DIFFs delete as many rows as its SNAP holds: the ratio (1.0) rewrites it, to nothing
    withConf(VersionedOptions.ConfMaxDiffRatio -> "1.0") {
      write(frame(schema, rowsOf(0 until 150, 0)), "r.t", "primaryKey" -> "id")
      val frags = table(headHash("r").get).fragments
      assert(frags.size == 3)
      val lo = frags(1).lower.get.head.asInstanceOf[Number].intValue()
      val hi = frags(2).lower.get.head.asInstanceOf[Number].intValue()
      val v1 = rowsOf((0 until 150).filterNot(i => i >= lo && i < lo + 10), 0)
      overwrite(frame(schema, v1), "r.t")
      val v2 = v1.filterNot(r => r.getInt(0) >= lo && r.getInt(0) < hi)
      overwrite(frame(schema, v2), "r.t")
      val t = table(headHash("r").get)
      assert(t.compacted.nonEmpty, "the middle fragment's DIFFs delete all its rows: it should have been compacted")
      assert(t.compacted.get(1).objects.isEmpty, s"an emptied fragment should compact to nothing: ${t.compacted.get(1)}")
      assertReads(read("r.t"), v2, "emptied fragment")
      val v3 = v2 ++ rowsOf(Seq(lo, lo + 5), 3)
      write(frame(schema, rowsOf(Seq(lo, lo + 5), 3)), "r.t")
      assertReads(read("r.t"), v3, "rows added to an emptied fragment")
      assertReads(read("r.t").filter(col("id") === lo), rowsOf(Seq(lo), 3), "point lookup in the emptied fragment")
      Seq(rowsOf(0 until 150, 0), v1, v2, v3).zipWithIndex.foreach { case (rows, i) =>
        assertReads(read("r.t", "ref" -> s"main~${3 - i}"), rows, s"version $i")
      }
      assertHashesIntact()
    }
  }

  test("key-less tables compact with their duplicates") {
    withConf(VersionedOptions.ConfMaxChain -> "2", NoRatio) {
      val s = new StructType().add("a", StringType).add("b", IntegerType)
      var cur = (0 until 160).map(i => Row(s"k${i % 9}", i % 4))
      val versions = Vector.newBuilder[(String, Seq[Row])]
      write(frame(s, cur), "r.nk")
      versions += headHash("r").get -> cur
      for (step <- 1 to 5) {
        if (step % 2 == 1) {
          val add = cur.take(step * 3) ++ Seq(Row("k1", 1), Row("zz", step))
          write(frame(s, add), "r.nk")
          cur = cur ++ add
        } else {
          cur = cur.zipWithIndex.filterNot(_._2 % (step + 5) == 0).map(_._1) ++ Seq(Row("k2", 2), Row("k2", 2))
          overwrite(frame(s, cur), "r.nk")
        }
        versions += headHash("r").get -> cur
      }
      val all = versions.result()
      assert(all.exists(v => table(v._1, "nk").compacted.nonEmpty))
      all.zipWithIndex.foreach { case ((hash, rows), i) =>
        assertReads(read("r.nk", "image" -> hash), rows, s"key-less version $i")
        assertReads(read("r.nk", "image" -> hash).filter(col("a") === "k1"), rows.filter(_.getString(0) == "k1"),
          s"key-less version $i filtered")
      }
      assertHashesIntact()
    }
  }

  test("the DIFF/SNAP row ratio triggers compaction of exactly the fragments that crossed it") {
    withConf(VersionedOptions.ConfMaxChain -> "1000", VersionedOptions.ConfMaxDiffRatio -> "0.1") {
      val v0 = rowsOf(0 until 200, 0)
      write(frame(schema, v0), "r.t", "primaryKey" -> "id")
      assert(table(headHash("r").get).fragments.size == 4)
      write(frame(schema, rowsOf(Seq(1, 2), 1)), "r.t", "upsert" -> "true")
      assert(table(headHash("r").get).compacted.isEmpty, "2 DIFF rows for 50 SNAP rows stay below 10%")
      write(frame(schema, rowsOf(Seq(3, 4, 5, 6), 2)), "r.t", "upsert" -> "true")
      val t = table(headHash("r").get)
      val c = t.compacted.getOrElse(fail("6 DIFF rows for 50 SNAP rows should have been compacted"))
      assert(c.head.objects.size == 1 && c.head.objects != t.fragments.head.objects)
      assert(c.tail == t.fragments.tail, "fragments below the ratio are left alone")
      val expected = (v0.map(r => r.getInt(0) -> r).toMap ++ rowsOf(Seq(1, 2), 1).map(r => r.getInt(0) -> r) ++
        rowsOf(Seq(3, 4, 5, 6), 2).map(r => r.getInt(0) -> r)).values.toSeq
      assertReads(read("r.t"), expected, "after ratio compaction")
      assertReads(read("r.t", "ref" -> "main~2"), v0, "first version")
      assertHashesIntact()
    }
  }
}
