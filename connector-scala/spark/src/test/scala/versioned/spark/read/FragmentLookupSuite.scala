package versioned.spark.read

import scala.util.Random
import org.apache.spark.sql.Row
import org.apache.spark.sql.sources.In
import org.apache.spark.sql.types._
import versioned.core.Revision
import versioned.spark.VersionedTestBase
import versioned.spark.session.{TableSnapshot, VersionedOptions}

/**
 * A key lookup split by fragment ([[KeyLookup.byFragments]]): each fragment is planned, pruned and read with only the
 * values its key range may hold. Against an in-memory oracle, on tables of many fragments with DIFF chains (shared
 * DIFFs, the defaults) and random fragment bounds: keys on, at and around the bounds, absent keys, deleted keys;
 * distributed scans and driver lookups alike; single and composite keys. A fragment holding none of the values is not
 * planned, so not opened.
 */
class FragmentLookupSuite extends VersionedTestBase {
  private val schema = new StructType().add("id", LongType).add("v", StringType)
  private def snapshot(table: String): TableSnapshot =
    TableSnapshot.load(engine, "r", table, engine.resolve("r", Revision.DefaultBranch))
  private def sorted(rows: Seq[Row]): Seq[Row] = rows.sortBy(_.toString)

  test("a lookup split by fragment returns exactly the oracle's rows; fragments without values are not planned") {
    val r = new Random(31)
    val oracle = scala.collection.mutable.Map.empty[Long, String]
    // random fragment sizes: a few loads of random lengths make fragments of random bounds
    withConf(VersionedOptions.ConfFragmentRows -> (20 + r.nextInt(40)).toString) {
      val rows = (0 until 700).map(i => (i * 3L, s"n$i"))
      rows.foreach { case (k, v) => oracle(k) = v }
      write(frame(schema, rows.map { case (k, v) => Row(k, v) }), "r.t", "primaryKey" -> "id")
    }
    for (round <- 0 until 3) {
      // a scattered upsert with deletes: small, so written as shared DIFFs (the defaults)
      val changes = Seq.fill(30)(r.nextInt(2200).toLong).distinct.map { k =>
        val gone = oracle.contains(k) && r.nextInt(3) == 0
        if (gone) oracle.remove(k) else oracle(k) = s"u$round-$k"
        Row(k, if (gone) null else s"u$round-$k", gone)
      }
      write(frame(schema.add("gone", BooleanType), changes), "r.t", "upsert" -> "true", "deleteColumn" -> "gone")
      awaitCompaction()
      val snap = snapshot("t")
      val frags = snap.version.effectiveFragments
      assert(frags.size >= 8, s"the table should have many fragments: ${frags.size}")
      val lowers = frags.flatMap(_.lower).map(_.head.asInstanceOf[Number].longValue())
      for (set <- 0 until 4) {
        val near = lowers.flatMap(l => Seq(l - 1, l, l + 1)).filter(_ => r.nextInt(3) == 0)
        // the last set is large: its fragments share several sets of readers (VersionedScan.readerGroups)
        val count = if (set == 3) 400 else r.nextInt(12)
        val keys = (near ++ Seq.fill(count)(r.nextInt(2300).toLong - 20)).distinct
        val expected = sorted(keys.flatMap(k => oracle.get(k).map(v => Row(k, v))))
        val clue = s"round $round, keys ${keys.sorted}, bounds $lowers"
        // a distributed scan with a static lookup
        assert(sorted(read("r.t").filter(s"id IN (${keys.mkString(",")})").collect().toSeq) == expected, clue)
        // a driver lookup (deleteWhere's, MERGE's before-values'), its objects opened by LookupFileReader
        val look = KeyLookup.of(schema("id"), keys)
        val opened = LookupFileReader.opened.get()
        assert(sorted(LocalLookup.exactRows(snap.lookingUp(keys), schema, look)) == expected, clue)
        assert(expected.isEmpty || LookupFileReader.opened.get() > opened, s"the driver lookup used Spark's file reader; $clue")
        // planned: only fragments whose range [lower, next lower) holds a value (the others are never opened)
        val planned = new VersionedScan(snap, schema, Seq(In("id", keys.toArray[Any]))).partitions.map(_.index).toSeq
        val holding = frags.indices.filter { i =>
          val lo = frags(i).lower.map(_.head.asInstanceOf[Number].longValue())
          val hi = frags.lift(i + 1).flatMap(_.lower).map(_.head.asInstanceOf[Number].longValue())
          keys.exists(k => lo.forall(_ <= k) && hi.forall(k < _))
        }
        assert(planned.forall(holding.contains), s"planned fragments $planned, holding a value $holding; $clue")
        if (set == 3) assert(VersionedScan.readerGroups(planned.size, KeyLookup.of(schema("id"), keys).runCount) > 1, clue)
      }
    }
  }

  test("a driver lookup reads a DIFF its fragments share once, whole, and still returns exactly the oracle's rows") {
    val rows = (0 until 600).map(i => Row(i * 2L, s"n$i"))
    withConf(VersionedOptions.ConfFragmentRows -> "50") {
      write(frame(schema, rows), "r.s", "primaryKey" -> "id")
    }
    val oracle = scala.collection.mutable.Map(rows.map(r => r.getLong(0) -> r.getString(1)): _*)
    // one scattered upsert with deletes: one DIFF shared by the fragments it changes
    val changes = (0 until 60).map(i => i * 20L + 1 + (i % 2)).map { k =>
      val gone = oracle.contains(k) && k % 4 == 0
      if (gone) oracle.remove(k) else oracle(k) = s"u$k"
      Row(k, if (gone) null else s"u$k", gone)
    }
    write(frame(schema.add("gone", BooleanType), changes), "r.s", "upsert" -> "true", "deleteColumn" -> "gone")
    awaitCompaction()
    val snap = snapshot("s")
    val keys = (0 until 1250 by 7).map(_.toLong)
    val look = KeyLookup.of(schema("id"), keys)
    val parts = new VersionedScan(snap.lookingUp(keys), schema, Nil, rowsOnly = true).partitions.toSeq
    val shared = parts.flatMap(_.diffs).filter(_.bounds.isDefined)
    assert(parts.size >= 8 && shared.map(_.uri).distinct.size == 1 && shared.size == parts.size,
      s"every planned fragment should read the one shared DIFF: ${parts.map(_.diffs)}")
    val (opened, loaded) = (LookupFileReader.opened.get(), ObjectFiles.sharedLoaded.get())
    val expected = sorted(keys.flatMap(k => oracle.get(k).map(v => Row(k, v))))
    assert(sorted(LocalLookup.exactRows(snap.lookingUp(keys), schema, look)) == expected)
    assert(ObjectFiles.sharedLoaded.get() - loaded == 1, "the shared DIFF is loaded once")
    // each fragment's SNAP, and the shared DIFF once (not once per fragment)
    assert(LookupFileReader.opened.get() - opened == parts.count(_.snap.isDefined) + 1)
  }

  test("a key at a fragment's lower bound opens only that fragment; the one below it is not planned") {
    withConf(VersionedOptions.ConfFragmentRows -> "50") {
      write(frame(schema, (0 until 400).map(i => Row(i.toLong, s"n$i"))), "r.b", "primaryKey" -> "id")
    }
    val snap = snapshot("b")
    val frags = snap.version.effectiveFragments
    assert(frags.size >= 4, s"several fragments: ${frags.size}")
    val i = frags.size / 2
    val bound = frags(i).lower.get.head.asInstanceOf[Number].longValue()
    val scan = new VersionedScan(snap, schema, Seq(In("id", Array[Any](bound))))
    assert(scan.partitions.map(_.index).toSeq == Seq(i))
    assert(sorted(read("r.b").filter(s"id = $bound").collect().toSeq) == Seq(Row(bound, s"n$bound")))
    // values below every key: the first fragment's range holds them, its SNAP's statistics do not; nothing is planned
    assert(new VersionedScan(snap, schema, Seq(In("id", Array[Any](-5L, -1L)))).partitions.isEmpty)
  }

  test("a composite key: a first-key value on a bound is looked up on both sides of it") {
    val cs = new StructType().add("a", LongType).add("b", StringType).add("v", IntegerType)
    val rows = (0 until 600).map(i => Row((i / 4).toLong, s"b${i % 4}", i))
    withConf(VersionedOptions.ConfFragmentRows -> "37") { // bounds fall inside runs of the same first column
      write(frame(cs, rows), "r.ck", "primaryKey" -> "a,b")
    }
    val snap = snapshot("ck")
    val firsts = snap.version.effectiveFragments.flatMap(_.lower).map(_.head.asInstanceOf[Number].longValue())
    assert(firsts.nonEmpty)
    for (a <- firsts.flatMap(f => Seq(f - 1, f, f + 1)).distinct) {
      val expected = sorted(rows.filter(_.getLong(0) == a))
      assert(sorted(read("r.ck").filter(s"a = $a").collect().toSeq) == expected, s"a = $a, bounds $firsts")
      val look = KeyLookup.of(cs("a"), Seq(a))
      assert(sorted(LocalLookup.exactRows(snap.lookingUp(Seq(a)), cs, look)) == expected, s"driver lookup a = $a")
    }
  }

  test("a driver lookup decodes each object's footer once in a JVM, still verifies its tail at every open") {
    withConf(VersionedOptions.ConfFragmentRows -> "50") {
      write(frame(schema, (0 until 400).map(i => Row(i * 2L, s"n$i"))), "r.p", "primaryKey" -> "id")
    }
    val snap = snapshot("p")
    def lookup(keys: Seq[Long]): Seq[Row] = sorted(LocalLookup.exactRows(snap.lookingUp(keys), schema, KeyLookup.of(schema("id"), keys)))
    def expected(keys: Seq[Long]): Seq[Row] = sorted(keys.filter(k => k % 2 == 0 && k < 800).map(k => Row(k, s"n${k / 2}")))
    val first = (0L until 800L by 37).toSeq
    val d0 = ParsedTails.decoded.get()
    assert(lookup(first) == expected(first))
    val decoded = ParsedTails.decoded.get() - d0
    assert(decoded >= 4, s"the lookup opened several SNAPs: $decoded")
    // other keys of the same objects: their footers and page indexes as decoded, the rows exactly the lookup's
    for (keys <- Seq((1L until 800L by 23).toSeq, (0L until 800L by 11).toSeq, first)) {
      assert(lookup(keys) == expected(keys), keys)
    }
    assert(ParsedTails.decoded.get() - d0 == decoded, "no footer decoded again")
    // an object whose tail changed after it was decoded is refused at its next open (its tail is verified each time)
    val objects = new VersionedScan(snap.lookingUp(first), schema, Nil, rowsOnly = true).partitions.toSeq.flatMap(_.snap)
    val path = new java.io.File(new org.apache.hadoop.fs.Path(objects.head.uri).toUri.getPath)
    val bytes = java.nio.file.Files.readAllBytes(path.toPath)
    bytes(bytes.length - 12) = (bytes(bytes.length - 12) ^ 0x5a).toByte // inside the footer, the length the same
    java.nio.file.Files.write(path.toPath, bytes)
    val e = intercept[versioned.core.ObjectCorruptException](lookup(first))
    assert(e.getMessage.contains(objects.head.id), e.getMessage)
  }

  test("a lookup's key set drops exactly the row groups, pages and rows without one of its keys (long and int keys)") {
    import org.apache.parquet.filter2.predicate.Statistics
    val r = new Random(7)
    for (_ <- 0 until 2000) {
      val keys = Seq.fill(1 + r.nextInt(30))(r.nextInt(200).toLong - 100).toArray.sorted.distinct
      val Seq(lo, hi) = Seq.fill(2)(r.nextInt(240).toLong - 120).sorted
      val longs = new LookupFileReader.KeySet[java.lang.Long](keys)
      val ints = new LookupFileReader.KeySet[Integer](keys)
      val within = keys.exists(k => k >= lo && k <= hi)
      assert(longs.canDrop(new Statistics(java.lang.Long.valueOf(lo), java.lang.Long.valueOf(hi))) == !within, (keys.toSeq, lo, hi))
      assert(ints.canDrop(new Statistics(Integer.valueOf(lo.toInt), Integer.valueOf(hi.toInt))) == !within, (keys.toSeq, lo, hi))
      assert(longs.keep(java.lang.Long.valueOf(lo)) == keys.contains(lo) && ints.keep(Integer.valueOf(hi.toInt)) == keys.contains(hi))
      assert(!longs.keep(null) && !ints.keep(null) && !longs.inverseCanDrop(new Statistics(java.lang.Long.valueOf(lo), java.lang.Long.valueOf(hi))))
    }
    // an int key through a driver lookup: exactly the oracle's rows, with a DIFF over the SNAPs
    val intSchema = new StructType().add("id", IntegerType).add("v", StringType)
    withConf(VersionedOptions.ConfFragmentRows -> "40") {
      write(frame(intSchema, (0 until 300).map(i => Row(i * 3, s"n$i"))), "r.i", "primaryKey" -> "id")
    }
    write(frame(intSchema, (0 until 300 by 7).map(i => Row(i * 3, s"u$i"))), "r.i", "upsert" -> "true")
    val snap = snapshot("i")
    val oracle = (0 until 300).map(i => (i * 3) -> (if (i % 7 == 0) s"u$i" else s"n$i")).toMap
    val opened = LookupFileReader.opened.get()
    for (_ <- 0 until 20) {
      val keys = Seq.fill(1 + r.nextInt(40))(r.nextInt(950).toLong)
      val got = sorted(LocalLookup.exactRows(snap.lookingUp(keys), intSchema, KeyLookup.of(intSchema("id"), keys)))
      assert(got == sorted(keys.distinct.flatMap(k => oracle.get(k.toInt).map(v => Row(k.toInt, v)))), keys)
    }
    assert(LookupFileReader.opened.get() > opened, "the lookups read their objects through LookupFileReader")
  }
}
