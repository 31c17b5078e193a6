package versioned.spark
package write

import versioned.spark.session.TableIdent

import versioned.core.format.WriteMode

import versioned.spark.session.{Settings, VersionedOptions, TableSnapshot}

import scala.jdk.CollectionConverters._
import scala.util.Random
import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import versioned.core.{Fragment, ObjectKind, Revision, TableVersion}
import versioned.spark.api.{MaintenanceApi, VersionedApi}
import versioned.spark.safety.{Faults, FaultyWarehouseSuite}
import versioned.spark.write.{Compactions, Compactor, WriteRequest}

/** Shared helpers of the compaction policy and background compaction suites (fragments hold 50 rows). */
private[spark] object CompactionTesting {
  val schema: StructType = new StructType().add("id", IntegerType).add("v", IntegerType)
  def rowsOf(ids: Seq[Int], v: Int): Seq[Row] = ids.map(i => Row(i, v))
  /** Every trigger of the policy off: commits keep their DIFFs, chains are built by hand. */
  val Off: Seq[(String, String)] = Seq(VersionedOptions.ConfMaxDiffRatio -> "1000", VersionedOptions.ConfMaxChain -> "1000",
    VersionedOptions.ConfConsolidateAfter -> "1000")
}

/**
 * The compaction policy ([[Compactor.plan]]): which fragments get consolidated or re-snapshotted at which
 * DIFF share, with the default settings and others. Fragments hold 50 rows.
 */
class CompactionPolicySuite extends VersionedTestBase {
  import CompactionTesting._

  private def snapshot(): TableSnapshot = TableSnapshot.load(engine, "r", "t", engine.resolve("r", Revision.DefaultBranch))
  private def defaults: Settings = Settings.of(spark)
  private def table(hash: String): TableVersion = engine.tableOption("r", hash, "t").get

  /**
   * Fragments 0..3 of 50 rows each, then upserts touching the first `shares(i)` keys of fragment i: one DIFF per
   * touched fragment, or with `shared` one shared DIFF listed by each (the default for a small change set).
   */
  private def withShares(shares: Seq[Int], shared: Boolean = false): Unit =
    withConf(Off :+ (versioned.spark.session.Setting.SharedDiffMaxRows.key -> (if (shared) "10000" else "0")): _*) {
      write(frame(schema, rowsOf(0 until 200, 0)), "r.t", "primaryKey" -> "id")
      val changed = shares.zipWithIndex.flatMap { case (n, i) => (i * 50) until (i * 50 + n) }
      if (changed.nonEmpty) write(frame(schema, rowsOf(changed, 1)), "r.t", "upsert" -> "true")
    }

  test("re-snapshot at the DIFF share of maxDiffRatio (default 1.0): 10% and 50% stay DIFFs, 100% is rewritten") {
    withShares(Seq(5, 25, 50, 0))
    val snap = snapshot()
    assert(snap.version.effectiveFragments.size == 4)
    assert(defaults.maxDiffRatio == 1.0)
    assert(Compactor.plan(snap, defaults).resnapshot == Set(2))
    assert(Compactor.plan(snap, defaults.updated(VersionedOptions.ConfMaxDiffRatio, "0.5")).resnapshot == Set(1, 2))
    assert(Compactor.plan(snap, defaults.updated(VersionedOptions.ConfMaxDiffRatio, "0.1")).resnapshot == Set(0, 1, 2))
    assert(Compactor.plan(snap, defaults).runs.isEmpty, "one commit DIFF per fragment: nothing to consolidate")
    assert(Compactor.plan(snap, defaults.updated(VersionedOptions.ConfMaxChain, "1")).resnapshot == Set(0, 1, 2), "chain length trigger")
  }

  test("a shared DIFF counts as an equal share in each fragment listing it (its rows / the fragments listing it)") {
    withShares(Seq(5, 25, 50, 0), shared = true)
    val snap = snapshot()
    val lists = snap.version.effectiveFragments.map(_.objects.count(id => snap.objects(id).shared))
    assert(lists == Seq(1, 1, 1, 0), s"one shared DIFF listed by the three touched fragments: $lists")
    // 80 rows over 3 fragments: about 27 each, a ratio of 0.53 in each of them
    assert(Compactor.plan(snap, defaults).resnapshot.isEmpty)
    assert(Compactor.plan(snap, defaults.updated(VersionedOptions.ConfMaxDiffRatio, "0.5")).resnapshot == Set(0, 1, 2))
    assert(Compactor.plan(snap, defaults.updated(VersionedOptions.ConfMaxDiffRatio, "0.6")).resnapshot.isEmpty)
  }

  test("a consolidation on the driver loads each shared DIFF once for all the fragments listing it") {
    val n = defaults.consolidateAfter
    var cur = rowsOf(0 until 200, 0).map(r => r.getInt(0) -> r).toMap
    withConf(Off :+ (versioned.spark.session.Setting.SharedDiffMaxRows.key -> "10000"): _*) {
      write(frame(schema, cur.values.toSeq), "r.t", "primaryKey" -> "id")
      (1 to n).foreach { v => // one key in each of the 4 fragments: one shared DIFF listed by all of them
        val rows = rowsOf(Seq(v, 50 + v, 100 + v, 150 + v), v)
        write(frame(schema, rows), "r.t", "upsert" -> "true")
        cur ++= rows.map(r => r.getInt(0) -> r)
      }
    }
    val head = engine.resolve("r", Revision.DefaultBranch)
    assert(snapshot().version.effectiveFragments.forall(_.objects.count(id => snapshot().objects(id).shared) == n))
    val req = WriteRequest(TableIdent("r", "t"), None, WriteMode.Changes, None, upsert = false, "t", "t", Map.empty)
    Compactions.awaitIdle() // the writes' own (they find nothing to do under Off)
    val before = versioned.spark.read.ObjectFiles.sharedLoaded.get()
    assert(Compactor.maybeCompact(spark, engine, req, head, defaults) == 4, "one consolidated DIFF per fragment")
    assert(versioned.spark.read.ObjectFiles.sharedLoaded.get() - before == n, s"$n shared DIFFs, each loaded once")
    assertReads(read("r.t"), cur.values.toSeq, "head through the consolidated chains")
  }

  test("tier 1: consolidateDiffs commit DIFFs after the SNAP are merged, fewer are kept") {
    val n = defaults.consolidateAfter
    assert(n == 5)
    withConf(Off: _*) {
      write(frame(schema, rowsOf(0 until 200, 0)), "r.t", "primaryKey" -> "id")
      (1 until n).foreach(i => write(frame(schema, rowsOf(Seq(i, 60 + i), i)), "r.t", "upsert" -> "true"))
    }
    assert(Compactor.plan(snapshot(), defaults).isEmpty, s"${n - 1} commit DIFFs stay")
    withConf(Off: _*)(write(frame(schema, rowsOf(Seq(n, 60 + n), n)), "r.t", "upsert" -> "true"))
    val snap = snapshot()
    val p = Compactor.plan(snap, defaults)
    assert(p.resnapshot.isEmpty && p.runs.keySet == Set(0, 1), p)
    assert(p.runs(0) == snap.version.effectiveFragments(0).objects.tail, s"the $n commit DIFFs, oldest first")
  }

  test("tier 2: consolidateDiffs consolidated DIFFs in a row are merged; chains stay short; content is kept") {
    var cur = rowsOf(0 until 200, 0).map(r => r.getInt(0) -> r).toMap
    withConf(VersionedOptions.ConfConsolidateAfter -> "2") {
      write(frame(schema, cur.values.toSeq), "r.t", "primaryKey" -> "id")
      for (i <- 1 to 12) {
        val upd = rowsOf(Seq(i, 100 + i), i)
        write(frame(schema, upd), "r.t", "upsert" -> "true") // waits for the background compaction
        cur ++= upd.map(r => r.getInt(0) -> r)
        val t = snapshot()
        t.version.effectiveFragments.foreach(f => assert(f.objects.size <= 5, s"commit $i: chain ${f.objects}"))
        assertReads(read("r.t"), cur.values.toSeq, s"commit $i")
      }
      val t = snapshot()
      val objs = t.objects
      val ids = t.version.effectiveFragments.head.objects
      // a DIFF that merged consolidated DIFFs (tier 2): its parents are consolidated DIFFs themselves
      val tier2 = ids.filter(id => objs(id).kind == ObjectKind.Diff && objs(id).parents.size > 1)
        .exists(id => engine.objects(objs(id).parents).values.forall(_.parents.size > 1))
      assert(tier2, s"no tier-2 consolidation in ${ids.map(objs).map(o => o.kind -> o.parents.size)}")
      assert(ids.map(objs).count(_.kind == ObjectKind.Snap) == 1, "no SNAP was rewritten")
    }
  }
  /**
   * 10 commits of 2 rows, then `behind` commits planned on logical chains (as while the compaction of that
   * 10th commit is still running in the background), then the compactions of the 10th commit and of the head.
   * Returns the 10th commit's compacted chains, the head's, and the head's logical chains. `hinted`: the head's
   * compaction is told the 10th commit was compacted last (as the background thread tells it).
   */
  private def carry(behind: Int, hinted: Boolean = false): (Seq[Fragment], Seq[Fragment], Seq[Fragment]) = {
    var cur = rowsOf(0 until 200, 0).map(r => r.getInt(0) -> r).toMap
    def upsert(ids: Seq[Int], v: Int): Unit = {
      withConf(Off: _*)(write(frame(schema, rowsOf(ids, v)), "r.t", "upsert" -> "true")); cur ++= rowsOf(ids, v).map(r => r.getInt(0) -> r)
    }
    withConf(Off: _*)(write(frame(schema, cur.values.toSeq), "r.t", "primaryKey" -> "id"))
    (1 to 10).foreach(i => upsert(Seq(i, 60 + i), i))
    val ancestor = engine.resolve("r", Revision.DefaultBranch)
    (1 to behind).foreach(j => upsert(Seq(10 + j, 150 + j), 10 + j))
    val head = engine.resolve("r", Revision.DefaultBranch)
    val req = WriteRequest(TableIdent("r", "t"), None, WriteMode.Changes, None, upsert = false, "t", "t", Map.empty)
    assert(Compactor.maybeCompact(spark, engine, req, ancestor, defaults) > 0, "the 10 commit DIFFs are consolidated")
    val written = Compactor.maybeCompact(spark, engine, req, head, defaults, lastCompacted = Option.when(hinted)(ancestor.hash))
    // fewer commit DIFFs than a consolidation takes follow the carried chains: nothing to write
    if (behind < defaults.consolidateAfter) assert(written == 0, s"carrying from $behind commit(s) back writes no object")
    val hc = table(head.hash).compacted.getOrElse(fail("the carried chains were not recorded"))
    assertReads(read("r.t"), cur.values.toSeq, "head through the carried chains")
    val logical = table(head.hash).fragments
    engine.clearCompacted("r", head.hash, "t")
    assertReads(read("r.t"), cur.values.toSeq, "head through its logical chains")
    (table(ancestor.hash).compacted.get, hc, logical)
  }

  test("a commit planned on its parent's logical chains gets the parent's compacted chains carried forward") {
    val (pc, cc, _) = carry(behind = 1)
    assert(cc.indices.forall(i => cc(i).objects.startsWith(pc(i).objects) && cc(i).objects.size <= pc(i).objects.size + 1), cc)
    assert(cc(0).objects.size == 3 && cc(3).objects.size == 2, cc) // SNAP + consolidated + the child's DIFF; SNAP + DIFF
  }

  test("a compaction that fell behind several commits carries the nearest compacted ancestor's chains forward") {
    val (ac, hc, logical) = carry(behind = 4)
    assert(hc.indices.forall(i => hc(i).objects.startsWith(ac(i).objects)), hc)
    assert(hc(0).objects.size == 2 + 4 && logical(0).objects.size == 1 + 14, s"$hc / $logical") // SNAP + merged + 4 DIFFs
  }

  test("further behind than the carry depth, the version compacted last is carried forward") {
    val behind = Compactor.CarryDepth + 1
    val (ac, hc, logical) = carry(behind, hinted = true)
    // the first fragment's carried chain (its SNAP and consolidated DIFF) and one DIFF merged from the commit DIFFs
    // since; from its logical chain (the 10 commit DIFFs again, and those since: 50, the chain limit) one DIFF after
    // the SNAP would be merged instead
    assert(hc(0).objects.startsWith(ac(0).objects) && hc(0).objects.size == ac(0).objects.size + 1, s"$hc / $ac")
    assert(logical(0).objects.size > hc(0).objects.size + 10, logical)
  }

  test("a commit on a parent without a compacted form builds on the chains this driver compacted last, carried") {
    var cur = rowsOf(0 until 200, 0).map(r => r.getInt(0) -> r).toMap
    def upsert(ids: Seq[Int], v: Int): versioned.core.Image = {
      withConf(Off: _*)(write(frame(schema, rowsOf(ids, v)), "r.t", "upsert" -> "true")); cur ++= rowsOf(ids, v).map(r => r.getInt(0) -> r)
      engine.resolve("r", Revision.DefaultBranch)
    }
    withConf(Off: _*)(write(frame(schema, cur.values.toSeq), "r.t", "primaryKey" -> "id"))
    (1 to 10).foreach(i => upsert(Seq(i, 60 + i), i))
    val x = engine.resolve("r", Revision.DefaultBranch)
    val p1 = upsert(Seq(20, 70), 11) // planned on x's logical chains: x is compacted only after it (as in a stream)
    val req = WriteRequest(TableIdent("r", "t"), None, WriteMode.Changes, None, upsert = false, "t", "t", Map.empty)
    assert(Compactor.maybeCompact(spark, engine, req, x, defaults) > 0, "the 10 commit DIFFs are consolidated")
    assert(table(p1.hash).compacted.isEmpty && table(p1.hash).fragments(0).objects.size == 1 + 11)
    val p2 = upsert(Seq(21, 71), 12)
    val (xc, logical) = (table(x.hash).compacted.get, table(p2.hash).fragments)
    // x's compacted chains, then p1's DIFF and p2's own (not x's 10 commit DIFFs again)
    assert(logical.indices.forall(i => logical(i).objects.startsWith(xc(i).objects)), s"$logical / $xc")
    assert(logical(0).objects.size == xc(0).objects.size + 2 && logical(0).objects.size < 1 + 12, logical)
    assertReads(read("r.t"), cur.values.toSeq, "the head through its carried chains")
    // the next commit extends p2's chains as they are (they already build on x's compacted ones)
    val p3 = upsert(Seq(22), 13)
    assert(table(p3.hash).fragments(0).objects == logical(0).objects :+ table(p3.hash).fragments(0).objects.last)
    assertReads(read("r.t"), cur.values.toSeq, "the next commit")
    // the change feed reads each commit from its DIFFs: p2's chains extend p1's carried from x's compacted form
    diff.ChangeFeed.compared.set(0); diff.ChangeFeed.fromDiffs.set(0)
    val plan = diff.ChangeFeed.versionRange(engine, TableIdent("r", "t"), p2.hash, Some(p3.hash), startInclusive = true,
      endInclusive = true, p3)
    val rows = diff.ChangeFeed.rows(spark, engine, Map.empty, plan, diff.ChangeFeed.Mode(netChanges = false, computeUpdates = true))
    assert(diff.ChangeFeed.compared.get == 0 && diff.ChangeFeed.fromDiffs.get == 2)
    assert(rows.map(r => (r.getInt(0), r.getInt(1), r.getUTF8String(2).toString)).toSet == Set(
      (21, 0, "update_preimage"), (21, 12, "update_postimage"), (71, 0, "update_preimage"), (71, 12, "update_postimage"),
      (22, 0, "update_preimage"), (22, 13, "update_postimage")))
  }
}

/**
 * Compaction off the commit path with the default settings: commits return before their compaction,
 * which runs in a background thread of the driver; content always equals an oracle while commits and
 * compactions interleave; `compact` runs it now. No timing assertions.
 */
class BackgroundCompactionSuite extends VersionedTestBase {
  import CompactionTesting._

  private def table(hash: String): TableVersion = engine.tableOption("r", hash, "t").get

  test("commits and background compactions interleave: every version equals its oracle, compacted forms appear") {
    assert(Settings.of(spark).backgroundCompaction, "background compaction is the default")
    val rnd = new Random(7)
    var cur = rowsOf(0 until 200, 0).map(r => r.getInt(0) -> r).toMap
    append(frame(schema, cur.values.toSeq), "r.t", "primaryKey" -> "id")
    val versions = Vector.newBuilder[(String, Seq[Row])]
    for (i <- 1 to 24) {
      // 10 to 40 changes (upserts, deletes, new keys): some fragments cross the ratio, some consolidate
      val keys = Seq.fill(10 + rnd.nextInt(30))(rnd.nextInt(260)).distinct
      val deletes = keys.filter(_ => rnd.nextInt(5) == 0).toSet
      val df = spark.createDataFrame(spark.sparkContext.parallelize(keys.map(k => Row(k, i, deletes(k))), 2),
        schema.add("gone", BooleanType))
      append(df, "r.t", "deleteColumn" -> "gone") // does not wait for compaction
      cur = cur -- deletes ++ keys.filterNot(deletes).map(k => k -> Row(k, i))
      versions += headHash("r").get -> cur.values.toSeq
      assertReads(read("r.t"), cur.values.toSeq, s"head after commit $i (compaction possibly running)")
    }
    awaitCompaction()
    val all = versions.result()
    assert(all.exists(v => table(v._1).compacted.isDefined), "background compaction recorded compacted forms")
    all.zipWithIndex.foreach { case ((hash, rows), i) => assertReads(read("r.t", "image" -> hash), rows, s"version $i") }
    assert(logSize("r") == all.size + 1)
  }

  test("background compaction of many fragments (DIFF merges, then SNAP rewrites) leaves task slots to commits") {
    compactsMany(driverMerges = true)
  }

  test("in local mode DIFF merges over localCommitMaxRows run on the driver too (a task would hold a commit's slot)") {
    assert(spark.sparkContext.isLocal)
    withConf(VersionedOptions.ConfLocalCommitMaxRows -> "1")(compactsMany(driverMerges = true))
  }

  test("with driver-side work off (localCommitMaxRows = 0) DIFF merges run as Spark jobs of at most half the slots") {
    withConf(VersionedOptions.ConfLocalCommitMaxRows -> "0")(compactsMany(driverMerges = false))
  }

  /**
   * 8 fragments' DIFFs merged, then the 8 fragments rewritten, by background compaction: DIFFs of few rows are
   * merged on the driver (no job) when `driverMerges`, else by jobs; every compaction job has at most half the
   * task slots.
   */
  private def compactsMany(driverMerges: Boolean): Unit = {
    val tasks = new java.util.concurrent.ConcurrentLinkedQueue[Integer]()
    val listener = new org.apache.spark.scheduler.SparkListener {
      override def onJobStart(job: org.apache.spark.scheduler.SparkListenerJobStart): Unit =
        if (Option(job.properties).flatMap(p => Option(p.getProperty("spark.jobGroup.id"))).exists(_.startsWith("versioned-compaction-")))
          tasks.add(job.stageInfos.map(_.numTasks).sum)
    }
    val slots = math.max(1, spark.sparkContext.defaultParallelism / 2)
    /** Waits until no new compaction job was seen for a second (listener events arrive asynchronously; at most 30 s). */
    def quiet(): Unit = {
      val deadline = System.currentTimeMillis() + 30000
      var (seen, quietSince) = (tasks.size, System.currentTimeMillis())
      while (System.currentTimeMillis() - quietSince < 1000 && System.currentTimeMillis() < deadline) {
        Thread.sleep(50)
        if (tasks.size != seen) { seen = tasks.size; quietSince = System.currentTimeMillis() }
      }
    }
    // 8 fragments of 50 rows, each with 2 commit DIFFs: consolidateDiffs = 2 merges all 8 chains at once
    write(frame(schema, rowsOf(0 until 400, 0), partitions = 1), "r.t", "primaryKey" -> "id")
    awaitCompaction()
    var expected = rowsOf(0 until 400, 0).map(r => r.getInt(0) -> r).toMap
    spark.sparkContext.addSparkListener(listener)
    try withConf(VersionedOptions.ConfConsolidateAfter -> "2") {
      (1 to 2).foreach { v =>
        val rows = rowsOf((0 until 8).map(_ * 50 + v), v)
        append(frame(schema, rows), "r.t", "upsert" -> "true")
        expected ++= rows.map(r => r.getInt(0) -> r)
      }
      awaitCompaction()
      quiet()
      val c = table(headHash("r").get).compacted.getOrElse(fail("no compacted form"))
      assert(c.size == 8 && c.forall(_.objects.size == 2), s"8 chains of SNAP + one merged DIFF: $c")
      if (driverMerges) assert(tasks.isEmpty, s"merges of DIFFs with few rows started jobs: $tasks")
      else assert(tasks.size >= 8 / slots, s"DIFF merge jobs seen: $tasks")
      val merges = tasks.size
      // then every fragment over a tiny DIFF ratio: 8 SNAP rewrites, in groups of at most `slots` fragments
      withConf(VersionedOptions.ConfMaxDiffRatio -> "0.01") {
        val rows = rowsOf((0 until 8).map(_ * 50 + 3), 3)
        append(frame(schema, rows), "r.t", "upsert" -> "true")
        expected ++= rows.map(r => r.getInt(0) -> r)
        awaitCompaction()
      }
      val snaps = table(headHash("r").get).compacted.getOrElse(fail("no compacted form after the rewrite"))
      assert(snaps.size == 8 && snaps.forall(_.objects.size == 1), s"8 rewritten SNAPs: $snaps")
      quiet()
      assert(tasks.size - merges >= 8 / slots, s"compaction jobs seen: $tasks")
    } finally spark.sparkContext.removeSparkListener(listener)
    tasks.forEach(n => assert(n <= slots, s"a compaction job of $n tasks (at most $slots)"))
    assertReads(read("r.t"), expected.values.toSeq, "content after the consolidation")
  }

  test("background compaction waits for a write in progress before each job, at most compaction.yieldMs") {
    write(frame(schema, rowsOf(0 until 200, 0), partitions = 1), "r.t", "primaryKey" -> "id")
    def commit(v: Int): Unit = append(frame(schema, rowsOf((0 until 4).map(_ * 50 + v), v)), "r.t", "upsert" -> "true")
    withConf(VersionedOptions.ConfConsolidateAfter -> "2") {
      commit(1)
      awaitCompaction()
      // a write in progress in this driver (another writer's lease) while the next commit triggers a compaction
      val writer = engine.leases.open("r", "write")
      try withConf(VersionedOptions.ConfCompactionYieldMs -> "600000") {
        commit(2)
        val head = headHash("r").get
        Thread.sleep(1500)
        assert(table(head).compacted.isEmpty, "compaction ran while a write was in progress")
        assert(!Compactions.awaitIdle(1L), "the compaction is waiting")
      } finally engine.leases.close(writer)
      awaitCompaction()
      val c = table(headHash("r").get).compacted.getOrElse(fail("no compaction once the write ended"))
      assert(c.forall(_.objects.size == 2), s"SNAP + one merged DIFF per fragment: $c")
      // yieldMs = 0: compaction does not wait for a write that stays open
      val other = engine.leases.open("r", "write")
      try withConf(VersionedOptions.ConfCompactionYieldMs -> "0") {
        commit(3); commit(4)
        awaitCompaction()
        assert(table(headHash("r").get).compacted.isDefined, "compacted while the other write was open")
      } finally engine.leases.close(other)
    }
    assertReads(read("r.t"), (rowsOf(0 until 200, 0).map(r => r.getInt(0) -> r).toMap ++
      (1 to 4).flatMap(v => rowsOf((0 until 4).map(_ * 50 + v), v)).map(r => r.getInt(0) -> r)).values.toSeq, "content")
    expectError(versioned.core.ErrorClass.InvalidOption, VersionedOptions.ConfCompactionYieldMs)(
      withConf(VersionedOptions.ConfCompactionYieldMs -> "-1")(append(frame(schema, rowsOf(Seq(1), 2)), "r.t")))
    val head = headHash("r")
    Seq("0", "1.5", "half").foreach(v => expectError(versioned.core.ErrorClass.InvalidOption, VersionedOptions.ConfCompactionDutyCycle)(
      withConf(VersionedOptions.ConfCompactionDutyCycle -> v)(append(frame(schema, rowsOf(Seq(1), 2)), "r.t"))))
    assert(headHash("r") == head, "the refused writes committed nothing")
  }

  test("compact waits for the background compaction and runs the policy on the head now") {
    withConf(Off: _*) {
      // one input partition: the first write's fragments are cut at the target size (50 + 50), so the upsert
      // of every row gives each fragment a 100% DIFF share (three partitions would make 33/33/34-row fragments)
      write(frame(schema, rowsOf(0 until 100, 0), partitions = 1), "r.t", "primaryKey" -> "id")
      write(frame(schema, rowsOf(0 until 100, 1)), "r.t", "upsert" -> "true")
    }
    val head = headHash("r").get
    assert(table(head).compacted.isEmpty)
    val done = VersionedApi.compact(spark, null, "r", null, null).collect()
    assert(done.map(r => (r.getString(0), r.getString(1))).toSeq == Seq("t" -> head), done.mkString)
    val c = table(head).compacted.getOrElse(fail("compact recorded nothing"))
    val objs = engine.objects(c.flatMap(_.objects))
    assert(c.forall(_.objects.forall(objs(_).kind == ObjectKind.Snap)), "every fragment had a 100% DIFF share")
    assertReads(read("r.t"), rowsOf(0 until 100, 1), "after compact")
    assert(VersionedApi.compact(spark, null, "r", "main", "t").count() == 0, "nothing left to compact")
    assert(MaintenanceApi.awaitCompactions(0L))
  }

  test("the inline setting compacts before the write returns") {
    withConf(VersionedOptions.ConfBackgroundCompaction -> "false") {
      append(frame(schema, rowsOf(0 until 100, 0)), "r.t", "primaryKey" -> "id")
      append(frame(schema, rowsOf(0 until 100, 1)), "r.t", "upsert" -> "true")
      assert(table(headHash("r").get).compacted.isDefined, "compacted inline")
    }
    expectError(versioned.core.ErrorClass.InvalidOption, VersionedOptions.ConfBackgroundCompaction)(
      withConf(VersionedOptions.ConfBackgroundCompaction -> "sometimes")(append(frame(schema, rowsOf(Seq(1), 2)), "r.t")))
  }
}

/**
 * A file system failing during background compaction: the commit stands, nothing of the failed
 * compaction is visible, history stays intact, and the next commit's compaction succeeds.
 */
class BackgroundCompactionFaultSuite extends FaultyWarehouseSuite {
  import CompactionTesting._

  private def image(hash: String) = eng.resolve("r", Revision.Spec(hash))
  private def withConf[T](kv: (String, String)*)(f: => T): T = {
    kv.foreach { case (k, v) => spark.conf.set(k, v) }
    try f finally kv.foreach { case (k, _) => spark.conf.unset(k) }
  }
  private def assertReads(df: => org.apache.spark.sql.DataFrame, expected: Seq[Row], clue: String): Unit = {
    val got = df.collect().toSeq
    assert(got.size == expected.size && got.toSet == expected.toSet, s"$clue: ${got.size} rows, expected ${expected.size}")
  }

  test("a fault at any file operation of a background compaction leaves history intact; the next one succeeds") {
    // one commit rewriting every row (a 100% DIFF share: every fragment is re-snapshotted, by Spark jobs)
    faultsAtEveryStep(v => rowsOf(0 until 120, v), Nil, snapshots = true)
  }

  test("a fault at any file operation of a DIFF merge on the driver leaves history intact; the next one succeeds") {
    // two commits of a few rows per fragment, merged into one DIFF per fragment on the driver (few rows)
    faultsAtEveryStep(v => rowsOf(0 until 120 by 10, v), Seq(VersionedOptions.ConfConsolidateAfter -> "2"),
      snapshots = false)
  }

  test("a fault at any file operation of carrying a split form forward (dividing DIFFs) leaves history intact") {
    val s = spark
    def df(rows: Seq[Row]) = s.createDataFrame(s.sparkContext.parallelize(rows, 1), schema)
    val ratio = Seq(VersionedOptions.ConfMaxDiffRatio -> "0.1", VersionedOptions.ConfMaxChain -> "1000",
      VersionedOptions.ConfConsolidateAfter -> "1000")
    /** Repository `repo`: a split compaction of an ancestor, then the head's compaction with fault `n`. */
    var failed = 0
    def attempt(repo: String, n: Long): Long = {
      val req = WriteRequest(TableIdent(repo, "t"), Some("main"), WriteMode.Changes, None, upsert = false, "t", "t",
        Map(VersionedOptions.Warehouse -> s.conf.get(VersionedOptions.ConfWarehouse),
          VersionedOptions.MetastoreUrl -> s.conf.get(VersionedOptions.ConfMetastoreUrl)))
      var cur = rowsOf(0 until 200, 0).map(r => r.getInt(0) -> r).toMap
      def commit(ids: Seq[Int], v: Int): Unit = {
        withConf(Off: _*)(write(df(rowsOf(ids, v)), s"$repo.t", "upsert" -> "true"))
        cur ++= rowsOf(ids, v).map(r => r.getInt(0) -> r)
      }
      withConf(Off: _*)(write(df(cur.values.toSeq), s"$repo.t", "primaryKey" -> "id"))
      commit(Seq(160, 200, 201, 202, 203, 204), 1)
      val ancestor = eng.branchHeadOption(repo, "main").get
      commit(Seq(170, 205), 2)
      commit(Seq(171, 206), 3)
      val head = eng.branchHeadOption(repo, "main").get
      withConf(ratio: _*) {
        Compactor.maybeCompact(s, eng, req, ancestor, Settings.of(s))
        Faults.arm(n)
        try Compactor.maybeCompact(s, eng, req, head, Settings.of(s)) catch { case _: Throwable => () }
      }
      val ops = Faults.operations
      Faults.disarm()
      failed += Faults.failures.get()
      assertReads(read(s"$repo.t"), cur.values.toSeq, s"$repo: head after a fault at operation $n")
      assertReads(read(s"$repo.t", "image" -> ancestor.hash),
        (rowsOf(0 until 200, 0) ++ rowsOf(Seq(160, 200, 201, 202, 203, 204), 1)).map(r => r.getInt(0) -> r).toMap.values.toSeq,
        s"$repo: the split ancestor after a fault at operation $n")
      assert(MaintenanceApi.verify(spark, eng, repo, Seq("main")).filter("status != 'ok'").count() == 0)
      ops
    }
    val ops = attempt("c0", 0)
    assert(ops > 3, s"the division made only $ops file operations")
    ((1L to 4L) ++ (1 to 3).map(i => ops * i / 4) :+ ops).distinct.zipWithIndex.foreach { case (n, i) => attempt(s"c${i + 1}", n) }
    assert(failed > 0, "no injected fault hit a division")
  }

  /**
   * Rounds of: commits of `changes(v)` with compaction off (two when not `snapshots`), then the background
   * compaction of the head under `policy` with the n-th file operation failing, for n spread over the operations
   * it makes. Each time the head reads as committed; every acknowledged image stays readable; the next commit's
   * compaction succeeds.
   */
  private def faultsAtEveryStep(changes: Int => Seq[Row], policy: Seq[(String, String)], snapshots: Boolean): Unit = {
    val s = spark
    def df(rows: Seq[Row]) = s.createDataFrame(s.sparkContext.parallelize(rows, 2), schema)
    withConf(Off: _*)(write(df(rowsOf(0 until 120, 0)), "r.t", "primaryKey" -> "id"))
    val req = WriteRequest(TableIdent("r", "t"), Some("main"), WriteMode.Changes, None, upsert = false, "t", "t",
      Map(VersionedOptions.Warehouse -> s.conf.get(VersionedOptions.ConfWarehouse),
        VersionedOptions.MetastoreUrl -> s.conf.get(VersionedOptions.ConfMetastoreUrl)))
    var expected = rowsOf(0 until 120, 0).map(r => r.getInt(0) -> r).toMap
    val acknowledged = Vector.newBuilder[(String, Set[Row])]
    var failed = 0
    def commit(v: Int): Unit = {
      withConf(Off: _*)(write(df(changes(v)), "r.t", "upsert" -> "true"))
      expected ++= changes(v).map(r => r.getInt(0) -> r)
      acknowledged += eng.branchHeadOption("r", "main").get.hash -> expected.values.toSet
    }
    def round(v: Int, n: Long): Long = {
      (if (snapshots) Seq(v) else Seq(2 * v, 2 * v + 1)).foreach(commit)
      val head = eng.branchHeadOption("r", "main").get
      Faults.created.clear()
      Faults.arm(n)
      withConf(policy: _*) {
        Compactions.afterCommit(s, eng, req, head, Settings.of(s)) // the defaults: background
        awaitCompaction()
      }
      val ops = Faults.operations
      Faults.disarm()
      failed += Faults.failures.get()
      val byTasks = Faults.created.asScala.collect { case (p, t) if t.startsWith("Executor task launch worker") => p }
      // without a fault: DIFF merges of few rows write from the driver, re-snapshots from Spark tasks
      if (n == 0) assert(byTasks.isEmpty != snapshots, s"Spark tasks of the compaction created ${byTasks.mkString(", ")}")
      // a compaction the fault failed recorded nothing; one that got past it (a fault in cleanup) is complete
      assertReads(read("r.t"), expected.values.toSeq, s"head after a fault at operation $n")
      ops
    }
    val ops = round(1, 0)
    assert(ops > 3, s"the compaction made only $ops file operations")
    val compacted = eng.table("r", image(eng.branchHeadOption("r", "main").get.hash), "t").compacted
    assert(compacted.exists(_.forall(_.objects.size == (if (snapshots) 1 else 2))), s"the compaction without faults: $compacted")
    val points = ((1L to 4L) ++ (1 to 5).map(i => ops * i / 6) :+ ops).distinct
    points.zipWithIndex.foreach { case (n, i) => round(2 + i, n) }
    assert(failed > 0, "no injected fault hit a compaction")
    acknowledged.result().foreach { case (hash, rows) =>
      assertReads(read("r.t", "image" -> hash), rows.toSeq, s"acknowledged image ${hash.take(12)}")
    }
    // the next commits compact normally (default settings, in the background)
    val next = if (snapshots) Seq(99) else Seq(98, 99)
    val (nextImages, settings) = withConf(policy: _*) {
      val hashes = next.map { v => write(df(changes(v)), "r.t", "upsert" -> "true"); eng.branchHeadOption("r", "main").get.hash }
      awaitCompaction()
      (hashes, Settings.of(s))
    }
    expected ++= next.flatMap(changes).map(r => r.getInt(0) -> r)
    def chains(v: TableVersion): String = {
      val os = eng.objects((v.fragments ++ v.compacted.toSeq.flatten).flatMap(_.objects).distinct)
      def c(fs: Seq[Fragment]) = fs.map(_.objects.map(id => s"${os(id).kind}${os(id).parents.size}").mkString("-")).mkString(" | ")
      s"stored ${c(v.fragments)}; compacted ${v.compacted.map(c)}"
    }
    val nextTables = nextImages.map(h => eng.tableOption("r", h, "t").get)
    // which of the next commits a compaction records depends on whether the second commit planned before or
    // after the first one's background compaction ended; one of them must be compacted, and the head must need
    // nothing more under the policy
    assert(nextTables.exists(_.compacted.isDefined),
      s"the next commits' background compactions succeeded: ${nextTables.map(chains).mkString("; ")}")
    val head = TableSnapshot.load(eng, "r", "t", image(nextImages.last))
    assert(Compactor.plan(head, settings).isEmpty, s"the head needs no further compaction: ${chains(head.version)}")
    assertReads(read("r.t"), expected.values.toSeq, "after the next commit")
    assert(MaintenanceApi.verify(spark, eng, "r", Seq("main")).filter("status != 'ok'").count() == 0)
  }
}
