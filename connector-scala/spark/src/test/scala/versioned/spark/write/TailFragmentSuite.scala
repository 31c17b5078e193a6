package versioned.spark.write

import java.nio.file.Files
import org.apache.spark.sql.Row
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream
import org.apache.spark.sql.types._
import versioned.core._
import versioned.spark.VersionedTestBase
import versioned.spark.api.VersionedApi
import versioned.spark.session.VersionedOptions
import versioned.spark.stream.StreamingSinkSuite.Rec

/**
 * Appends past the last key (docs/FORMAT.md, the kernel's `TailFragment`): a driver commit of an append whose keys
 * are all above every stored key, of at least half the target fragment size (here 40 rows: 20), after a last fragment
 * whose SNAP is as big, becomes a new last fragment (one SNAP bounded below by its smallest key) instead of a DIFF.
 * Through the batch API and the streaming sink, every version reads as an oracle says (whole, filtered, by time
 * travel), as the same writes on the distributed path read, and compacts to the same rows.
 */
class TailFragmentSuite extends VersionedTestBase {
  override protected def extraConf: Map[String, String] = super.extraConf ++ Map(VersionedOptions.ConfFragmentRows -> "40")
  private val schema = new StructType().add("id", LongType).add("name", StringType)
  private def rowsOf(ids: Seq[Long], tag: String): Seq[Row] = ids.map(i => Row(i, s"$tag$i"))
  private def branchHead(branch: String): Image = engine.resolve("r", Revision.Spec(branch))
  private def table(branch: String): TableVersion = engine.table("r", branchHead(branch), "t")

  /** The oracle: rows by key, later writes winning. */
  private final class Oracle {
    private val m = scala.collection.mutable.TreeMap.empty[Long, String]
    def put(rows: Seq[Row]): Unit = rows.foreach(r => m(r.getLong(0)) = r.getString(1))
    def rows: Seq[Row] = m.toSeq.map { case (k, v) => Row(k, v) }
  }

  private def assertTable(branch: String, expected: Seq[Row], clue: String): Unit = {
    assertSameRows(read("r.t", "ref" -> branch).collect().toSeq, expected, clue)
    for (k <- Seq(expected.head, expected(expected.size / 2), expected.last).map(_.getLong(0)))
      assert(read("r.t", "ref" -> branch).filter(s"id = $k").collect().toSeq == expected.filter(_.getLong(0) == k),
        s"$clue: lookup of $k")
    val lo = expected(expected.size / 3).getLong(0)
    assertSameRows(read("r.t", "ref" -> branch).filter(s"id >= $lo").collect().toSeq, expected.filter(_.getLong(0) >= lo),
      s"$clue: range from $lo")
  }

  test("inserts and upserts past the last key become new fragments through the batch API; others stay DIFFs") {
    val oracle = new Oracle
    val base = rowsOf(0L until 120L, "n")
    write(frame(schema, base), "r.t", "primaryKey" -> "id")
    oracle.put(base)
    val main = engine.defaultBranch("r")
    engine.refs.createBranch("r", "dist", Revision.Spec(main))
    val loaded = table(main)
    assert(loaded.fragments.size >= 3 && loaded.fragments.forall(_.objects.size == 1))
    // (rows, options, whether the rows go to a new last fragment)
    val steps = Seq(
      (rowsOf(200L until 230L, "i"), Seq.empty[(String, String)], true), // an insert above every key
      (rowsOf(230L until 260L, "u"), Seq("upsert" -> "true"), true), // an upsert of new keys above every key
      (rowsOf(300L until 310L, "s"), Seq.empty, false), // too few rows: a DIFF on the last fragment
      (rowsOf(305L until 330L, "o"), Seq("upsert" -> "true"), false), // overlaps the DIFF's keys
      (rowsOf(330L until 360L, "a"), Seq.empty, true), // above the DIFF's largest key
      (rowsOf(250L until 275L, "x"), Seq("upsert" -> "true"), false)) // updates inside the table
    for (((rows, opts, tail), n) <- steps.zipWithIndex) {
      val before = table(main)
      write(frame(schema, rows), "r.t", opts: _*)
      withConf(VersionedOptions.ConfLocalCommitMaxRows -> "0")(write(frame(schema, rows), "r.t", (opts :+ ("branch" -> "dist")): _*))
      oracle.put(rows)
      val after = table(main)
      val base = before.effectiveFragments
      if (tail) {
        assert(after.fragments.init == base, s"step $n: the fragments before it are unchanged")
        val last = after.fragments.last
        assert(last.lower.contains(Seq(rows.head.getLong(0))) && last.objects.size == 1, s"step $n: $last")
        val meta = engine.objects(last.objects)(last.objects.head)
        assert(meta.kind == ObjectKind.Snap && meta.rowCount == rows.size && meta.parents.isEmpty)
      } else assert(after.fragments.map(_.lower) == base.map(_.lower) && after.fragments.map(_.objects.size).sum ==
        base.map(_.objects.size).sum + 1, s"step $n: one DIFF on a fragment: ${after.fragments}")
      assertTable(main, oracle.rows, s"step $n")
      assertSameRows(read("r.t", "ref" -> "dist").collect().toSeq, oracle.rows, s"step $n, distributed path")
    }
    assert(table(main).fragments.size == loaded.fragments.size + 3)
    // every earlier version still reads as it was
    assertSameRows(read("r.t", "ref" -> s"$main~6").collect().toSeq, base, "the loaded version")
    // compaction of every fragment (the ratio at its lowest) keeps the rows
    withConf("spark.versioned.compaction.maxDiffRatio" -> "0.0001")(VersionedApi.compact(spark, null, "r", null, "t").collect())
    awaitCompaction()
    assert(table(main).compacted.isDefined)
    assertTable(main, oracle.rows, "after compaction")
  }

  test("a stream of ascending ids through the sink: a fragment per large batch, nothing to compact, the rows of the oracle") {
    val session = spark; import session.implicits._
    val in = MemoryStream[Rec](spark, 2)
    val ckpt = Files.createTempDirectory("versioned-stream-ckpt").toFile
    val q = in.toDF().writeStream.format("versioned").option("checkpointLocation", ckpt.getAbsolutePath)
      .option("primaryKey", "id").start("r.t")
    val oracle = new Oracle
    val sizes = Seq(30, 25, 40, 5, 25, 21)
    try sizes.scanLeft(0)(_ + _).zip(sizes).foreach { case (from, n) =>
      val batch = (from until from + n).map(i => Rec(i.toLong, s"r$i"))
      in.addData(batch: _*)
      q.processAllAvailable()
      oracle.put(batch.map(r => Row(r.id, r.name)))
    } finally q.stop()
    awaitCompaction()
    val main = engine.defaultBranch("r")
    val t = table(main)
    // the first batch makes the table; each batch of at least 20 rows after a SNAP of at least 20 a new fragment; the
    // 5-row batch a DIFF on the fragment before it, the 25-row batch after it a fragment above that DIFF's keys
    assert(t.fragments.map(_.lower.map(_.head)) == Seq(None, Some(30L), Some(55L), Some(100L), Some(125L)), t.fragments)
    assert(t.fragments.map(_.objects.size) == Seq(1, 1, 2, 1, 1))
    assert(t.compacted.isEmpty, "nothing to compact")
    assertTable(main, oracle.rows, "after the stream")
    assertSameRows(read("r.t", "ref" -> s"$main~3").collect().toSeq, oracle.rows.take(95), "three batches back")
    // changes across the fragments, then compaction, keep the rows
    val changes = rowsOf(Seq(3L, 31L, 56L, 99L, 100L, 140L, 500L), "c")
    write(frame(schema, changes), "r.t", "upsert" -> "true")
    oracle.put(changes)
    withConf("spark.versioned.compaction.maxDiffRatio" -> "0.0001")(VersionedApi.compact(spark, null, "r", null, "t").collect())
    awaitCompaction()
    assertTable(main, oracle.rows, "after changes and compaction")
  }
}
