package versioned.spark.merge

import org.apache.spark.sql.Row
import org.apache.spark.sql.types.{LongType, StringType, StructType}
import versioned.core.ErrorClass
import versioned.spark.diff.{FragmentDiff, TableDiff}
import versioned.spark.merge.MergeInputs

/** Merge through the public API: the rules of docs/MERGE.md, one case each, and the merge commit's shape. */
class MergeSuite extends MergeTestBase {
  private def base(): Unit = {
    seed((1 to 6).map(i => Row(i, s"a$i", i)))
    engine.refs.createBranch("r", "dev", Revision("main"))
  }
  private def Revision(s: String) = versioned.core.Revision.Spec(s)

  test("changes on both sides combine, cell by cell, in a merge commit with two parents") {
    base()
    upsert(Seq(Row(1, "dev", 1), Row(7, "a7", 7)), branch = "dev", deletes = Seq(5))
    upsert(Seq(Row(1, "a1", 100), Row(8, "a8", 8)), deletes = Seq(6))
    val (ours, theirs) = (hash("main"), hash("dev"))
    val o = merge("dev")
    assert(o.status == MergeOutcome.Merged && o.conflictCount == 0 && !o.fastForward)
    assert(o.commit == hash("main"))
    assert(engine.resolve("r", Revision("main")).parents == Seq(ours, theirs))
    assertReads(read("r.t"), Seq(Row(1, "dev", 100), Row(2, "a2", 2), Row(3, "a3", 3), Row(4, "a4", 4),
      Row(7, "a7", 7), Row(8, "a8", 8)), "merged")
    assert(at("dev").size == 6, "the source branch is unchanged")
    // merging again changes nothing
    assert(merge("dev").status == MergeOutcome.UpToDate)
  }

  test("a small merge without conflicts runs no Spark job; Spark tasks give the same merge over localCommitMaxRows") {
    seed((1 to 300).map(i => Row(i, s"a$i", i)))
    engine.refs.createBranch("r", "dev", Revision("main"))
    upsert(Seq(Row(1, "dev", 1), Row(301, "new", 301)), branch = "dev", deletes = Seq(7))
    upsert(Seq(Row(1, "a1", 10), Row(2, "main", 2)), deletes = Seq(8))
    engine.refs.createBranch("r", "tasks", Revision("main"))
    var o: MergeOutcome = null
    assert(jobsOf { o = merge("dev") } == 0)
    assert(o.status == MergeOutcome.Merged && o.conflictCount == 0 && o.conflicts.count() == 0)
    assert(o.stats == Seq(TableStat("t", "merge", 2, 1)), o.stats)
    val expected = (1 to 301).filterNot(Set(7, 8)).map {
      case 1 => Row(1, "dev", 10)
      case 2 => Row(2, "main", 2)
      case 301 => Row(301, "new", 301)
      case i => Row(i, s"a$i", i)
    }
    assertReads(read("r.t"), expected, "merged on the driver")
    val d = withConf("spark.versioned.write.localCommitMaxRows" -> "0")(merge("dev", into = "tasks"))
    assert(d.status == MergeOutcome.Merged && d.conflictCount == 0 && d.stats == o.stats, d.stats)
    assertReads(read("r.t", "ref" -> "tasks"), expected, "merged by Spark tasks")
  }

  test("fast-forward: auto moves the branch, never makes a merge commit, only refuses a diverged target") {
    base()
    upsert(Seq(Row(1, "dev", 1)), branch = "dev")
    val o = merge("dev")
    assert(o.status == MergeOutcome.FastForward && o.fastForward && hash("main") == hash("dev"))
    upsert(Seq(Row(2, "dev", 2)), branch = "dev")
    val before = hash("main")
    val n = merge("dev", ff = "never")
    assert(n.status == MergeOutcome.Merged && engine.resolve("r", Revision("main")).parents == Seq(before, hash("dev")))
    assertReads(read("r.t"), at("dev"), "never: same content as the source")
    upsert(Seq(Row(3, "dev", 3)), branch = "dev")
    upsert(Seq(Row(4, "main", 4)))
    val head = hash("main")
    expectError(ErrorClass.MergeConflict, "fast_forward='only'")(merge("dev", ff = "only"))
    assert(hash("main") == head)
  }

  test("the same cell changed differently is a conflict: fail commits nothing, ours and theirs settle it") {
    base()
    upsert(Seq(Row(1, "dev", 1), Row(2, "dev2", 2)), branch = "dev")
    upsert(Seq(Row(1, "main", 1), Row(3, "main3", 3)))
    val head = hash("main")
    val logBefore = logSize("r")
    val f = merge("dev")
    assert(f.status == MergeOutcome.Conflicts && f.commit == null && f.conflictCount == 1)
    assert(f.conflicts.collect().toSeq.map(r => r.toSeq) == Seq(Seq("t", """{"id":1}""", "a", "a1", "main", "dev", "update")))
    assert(hash("main") == head && logSize("r") == logBefore)
    expectError(ErrorClass.MergeConflict, "1 conflict")(f.check())
    val dry = merge("dev", strategy = "theirs", dryRun = true)
    assert(dry.status == MergeOutcome.Merged && dry.commit == null && hash("main") == head)
    assert(dry.stats.map(s => (s.table, s.upserts, s.deletes)) == Seq(("t", 2L, 0L)))
    val t = merge("dev", strategy = "theirs")
    assert(t.status == MergeOutcome.Merged)
    assertReads(read("r.t"), Seq(Row(1, "dev", 1), Row(2, "dev2", 2), Row(3, "main3", 3), Row(4, "a4", 4),
      Row(5, "a5", 5), Row(6, "a6", 6)), "theirs")
  }

  test("ours keeps the target's cells; resolutions settle chosen keys and are checked") {
    base()
    upsert(Seq(Row(1, "dev", 10), Row(2, "dev", 20)), branch = "dev")
    upsert(Seq(Row(1, "main", 11), Row(2, "main", 21)))
    val ours = merge("dev", strategy = "ours", dryRun = true)
    assert(ours.conflictCount == 4 && ours.stats.map(_.changes) == Seq(0L))
    val wrongSchema = frame(schema.add("x", IntegerType), Seq(Row(1, "z", 1, 1)))
    expectError(ErrorClass.SchemaMismatch, "x")(merge("dev", resolutions = Map("t" -> wrongSchema)))
    val notInConflict = frame(schema, Seq(Row(3, "z", 3)))
    expectError(ErrorClass.InvalidOption, "id=3")(merge("dev", resolutions = Map("t" -> notInConflict)))
    expectError(ErrorClass.InvalidOption, "strategy")(merge("dev", strategy = "ours",
      resolutions = Map("t" -> frame(schema, Seq(Row(1, "z", 1))))))
    val head = hash("main")
    // the same rules on the driver (a small merge) and by Spark tasks (over localCommitMaxRows)
    for (limit <- Seq(None, Some("0"))) withConf(limit.map("spark.versioned.write.localCommitMaxRows" -> _).toSeq: _*) {
      expectError(ErrorClass.InvalidOption, "id=3")(merge("dev", resolutions = Map("t" -> notInConflict)))
      expectError(ErrorClass.DuplicateKey)(merge("dev", resolutions = Map("t" ->
        frame(schema, Seq(Row(1, "x", 1), Row(1, "y", 2))))))
      val nullable = StructType(schema.fields.map(_.copy(nullable = true)))
      expectError(ErrorClass.NullPrimaryKey)(merge("dev", resolutions = Map("t" -> frame(nullable, Seq(Row(null, "x", 1))))))
      val partial = merge("dev", resolutions = Map("t" -> frame(schema, Seq(Row(1, "fixed", 12)))))
      assert(partial.status == MergeOutcome.Conflicts && partial.conflictCount == 2, limit)
      assert(partial.commit == null && hash("main") == head)
      val wider = new StructType().add("id", LongType).add("a", StringType).add("b", LongType)
      assert(merge("dev", resolutions = Map("t" -> frame(wider, Seq(Row(1L, "fixed", 12L)))), dryRun = true)
        .conflictCount == 2, "resolutions of other types are cast to the table's")
    }
    val del = frame(schema.add("_delete", BooleanType), Seq(Row(1, "fixed", 12, false), Row(2, null, null, true)))
    val done = merge("dev", resolutions = Map("t" -> del))
    assert(done.status == MergeOutcome.Merged)
    assertReads(read("r.t"), Seq(Row(1, "fixed", 12), Row(3, "a3", 3), Row(4, "a4", 4), Row(5, "a5", 5),
      Row(6, "a6", 6)), "resolved")
  }

  private val IntegerType = org.apache.spark.sql.types.IntegerType
  private val BooleanType = org.apache.spark.sql.types.BooleanType

  test("update against delete, and the same key inserted with different values, are conflicts") {
    base()
    upsert(Seq(Row(1, "dev", 1), Row(9, "dev", 9), Row(10, "same", 10)), branch = "dev", deletes = Seq(2))
    upsert(Seq(Row(2, "main", 2), Row(9, "main", 9), Row(10, "same", 10)), deletes = Seq(1))
    val f = merge("dev")
    assert(conflictRows(f) == Set(("t", """{"id":1}""", null, "delete"), ("t", """{"id":2}""", null, "delete"),
      ("t", """{"id":9}""", "a", "insert")))
    merge("dev", strategy = "theirs")
    assertReads(read("r.t"), Seq(Row(1, "dev", 1), Row(3, "a3", 3), Row(4, "a4", 4), Row(5, "a5", 5),
      Row(6, "a6", 6), Row(9, "dev", 9), Row(10, "same", 10)), "theirs")
  }

  test("the merge follows the change: it reads the DIFFs each side appended to the base, nothing else") {
    seed((1 to 500).map(i => Row(i, s"a$i", i)))
    engine.refs.createBranch("r", "dev", Revision("main"))
    upsert(Seq(Row(1, "dev", 1), Row(501, "new", 501)), branch = "dev", deletes = Seq(7))
    upsert(Seq(Row(2, "main", 2)), deletes = Seq(8))
    def counters = (MergeInputs.followedFragments.get(), TableDiff.fastFragments.get(), TableDiff.comparedFragments.get(),
      TableDiff.wholeComparisons.get(), FragmentDiff.snapRowsRead.get())
    val before = counters
    assert(merge("dev").status == MergeOutcome.Merged)
    val after = counters
    val Seq(followed, diffed, compared, whole, snapRows) = after.productIterator.toSeq.zip(before.productIterator.toSeq)
      .map { case (a: Long, b: Long) => a - b; case _ => 0L }
    assert(followed >= 1 && diffed == 0 && compared == 0 && whole == 0,
      s"followed $followed, diffed $diffed, compared whole $compared, whole tables $whole")
    // no key was changed on both sides, so nothing of the base was looked up
    assert(snapRows == 0, s"$snapRows base rows read")
    val expected = (1 to 500).filterNot(Set(7, 8)).map {
      case 1 => Row(1, "dev", 1)
      case 2 => Row(2, "main", 2)
      case i => Row(i, s"a$i", i)
    } :+ Row(501, "new", 501)
    assertReads(read("r.t"), expected, "merged")
  }

  test("a merge of scattered changes reads each side's DIFF, shared by many fragments, once") {
    withConf(versioned.spark.session.VersionedOptions.ConfFragmentRows -> "40") {
      seed((1 to 400).map(i => Row(i, s"a$i", i)))
    }
    engine.refs.createBranch("r", "dev", Revision("main"))
    // each side: one commit of keys in every fragment, written as one DIFF the fragments share
    // keys only one side changes (no conflict)
    val dev = (1 to 400 by 13).toSet -- Set(209, 300)
    val main = (5 to 400 by 17).toSet
    upsert(dev.toSeq.sorted.map(i => Row(i, "dev", i)) :+ Row(401, "new", 401), branch = "dev", deletes = Seq(200))
    upsert(main.toSeq.sorted.map(i => Row(i, "main", i)), deletes = Seq(300))
    awaitCompaction()
    val (followed, loaded) = (MergeInputs.followedFragments.get(), versioned.spark.read.ObjectFiles.sharedLoaded.get())
    assert(merge("dev").status == MergeOutcome.Merged)
    val fragments = MergeInputs.followedFragments.get() - followed
    assert(fragments >= 5, s"$fragments fragments followed")
    // ours' DIFF and theirs', each loaded whole once for every fragment reading it
    assert(versioned.spark.read.ObjectFiles.sharedLoaded.get() - loaded == 2)
    val expected = (1 to 400).filterNot(Set(200, 300)).map { i =>
      if (dev(i)) Row(i, "dev", i) else if (main(i)) Row(i, "main", i) else Row(i, s"a$i", i)
    } :+ Row(401, "new", 401)
    assertReads(read("r.t"), expected, "merged")
  }

  test("key-less tables merge as multisets, never conflicting") {
    val s = new org.apache.spark.sql.types.StructType().add("v", org.apache.spark.sql.types.StringType)
    write(frame(s, Seq("x", "x", "y", "z").map(Row(_))), "r.k")
    engine.refs.createBranch("r", "dev", Revision("main"))
    // dev: one more x, one y removed; main: y removed, w added
    overwrite(frame(s, Seq("x", "x", "x", "z").map(Row(_))), "r.k", "branch" -> "dev")
    write(frame(s, Seq(Row("w"))), "r.k")
    spark.sql("SELECT 1") // keep the session busy-free
    versioned.spark.api.VersionedApi.deleteWhere(spark, null, "r.k", "v = 'y'", "main", null, null)
    val o = merge("dev")
    assert(o.status == MergeOutcome.Merged && o.conflictCount == 0)
    assertReads(read("r.k"), Seq("x", "x", "x", "z", "w").map(Row(_)), "multiset merge (y removed once)")
  }

  test("tables added or dropped on one side follow that side; one column changed differently is a table conflict") {
    seed((1 to 6).map(i => Row(i, s"a$i", i)))
    seed(Seq(Row(1, "n", 1)), "r.u")
    engine.refs.createBranch("r", "dev", Revision("main"))
    write(frame(schema, Seq(Row(1, "new", 1))), "r.added", "branch" -> "dev", "primaryKey" -> "id")
    spark.sql("SELECT 1")
    engine.commit("r", "dev", Some(hash("dev")), Map("u" -> versioned.core.TableUpdate.Drop), "t", "drop u")
    val o = merge("dev", ff = "never")
    assert(o.status == MergeOutcome.Merged)
    assert(engine.tables("r", hash("main")).map(_.name).sorted == Seq("added", "t"))
    // both sides add column c, with different types (MergeSchemaSuite has the column-level rules)
    engine.refs.createBranch("r", "s2", Revision("main"))
    overwrite(frame(schema.add("c", IntegerType), Seq(Row(1, "x", 1, 1))), "r.t", "branch" -> "s2")
    overwrite(frame(schema.add("c", org.apache.spark.sql.types.StringType), Seq(Row(1, "x", 1, "1"))), "r.t")
    val f = merge("s2")
    assert(f.status == MergeOutcome.Conflicts && conflictRows(f) == Set(("t", null, null, "schema")))
  }

  test("a table taken whole from one side reports its real change counts, as the diff summary counts them") {
    seed((1 to 6).map(i => Row(i, s"a$i", i)))
    seed((1 to 3).map(i => Row(i, s"w$i", i)), "r.w")
    engine.refs.createBranch("r", "dev", Revision("main"))
    upsert(Seq(Row(1, "dev", 1), Row(7, "a7", 7)), branch = "dev", deletes = Seq(5))
    engine.commit("r", "dev", Some(hash("dev")), Map("w" -> versioned.core.TableUpdate.Drop), "t", "drop w")
    val expected = Seq(TableStat("t", "take", 2, 1), TableStat("w", "drop", 0, 3))
    val dry = merge("dev", ff = "never", dryRun = true)
    assert(dry.stats == expected, dry.stats)
    val o = merge("dev", ff = "never")
    assert(o.status == MergeOutcome.Merged && o.stats == expected, o.stats)
    val summary = versioned.spark.api.VersionedApi.diffSummary(spark, null, "r", o.base.get, o.commit).collect()
      .map(r => r.getString(0) -> (r.getLong(1) + r.getLong(2), r.getLong(3))).toMap
    assert(o.stats.map(s => s.table -> (s.upserts, s.deletes)).toMap == summary, summary)
    // the revert of the merge takes the first parent's versions back: 5 and 1 return, 7 goes, w comes back
    val r = versioned.spark.api.VersionedApi.revert(spark, null, "r", o.commit, "main", 1, null, false, null, null, null)
    assert(r.status == MergeOutcome.Merged && r.stats == Seq(TableStat("t", "take", 2, 1), TableStat("w", "take", 3, 0)),
      r.stats)
  }

  test("a merge taking many tables whole counts them on the driver (no Spark job), as the diff summary does") {
    // each table changed on the source only (a pointer move per table): an update and an insert, a delete; an
    // upsert of the values it had and a delete of a key it lacks change nothing (no new version), one is left as it was
    val tables = Seq("t0", "t1", "t2", "t3", "t4")
    tables.foreach(t => seed((1 to 4).map(i => Row(i, s"$t-$i", i)), s"r.$t"))
    engine.refs.createBranch("r", "dev", Revision("main"))
    upsert(Seq(Row(1, "dev", 1), Row(9, "new", 9)), "r.t0", branch = "dev")
    upsert(Nil, "r.t1", branch = "dev", deletes = Seq(2))
    upsert(Seq(Row(3, "t2-3", 3)), "r.t2", branch = "dev")
    upsert(Nil, "r.t3", branch = "dev", deletes = Seq(42))
    engine.refs.createBranch("r", "tasks", Revision("main"))
    val expected = Seq(TableStat("t0", "take", 2, 0), TableStat("t1", "take", 0, 1))
    var o: MergeOutcome = null
    assert(jobsOf { o = merge("dev", ff = "never") } == 0)
    assert(o.status == MergeOutcome.Merged && o.stats == expected, o.stats)
    val summary = versioned.spark.api.VersionedApi.diffSummary(spark, null, "r", o.base.get, o.commit).collect()
      .map(r => r.getString(0) -> (r.getLong(1) + r.getLong(2), r.getLong(3))).toMap
    assert(o.stats.filter(_.changes > 0).map(s => s.table -> (s.upserts, s.deletes)).toMap == summary, summary)
    tables.foreach(t => assert(at("main", s"r.$t").toSet == at("dev", s"r.$t").toSet, t))
    // over localCommitMaxRows each table's diff is counted by a Spark job: the same counts
    val d = withConf("spark.versioned.write.localCommitMaxRows" -> "0")(merge("dev", into = "tasks", ff = "never"))
    assert(d.status == MergeOutcome.Merged && d.stats == expected, d.stats)
  }

  test("a table whose key is not its first column merges (the changes follow the table's column order)") {
    val s = new org.apache.spark.sql.types.StructType().add("v", org.apache.spark.sql.types.StringType)
      .add("id", IntegerType, nullable = false)
    write(frame(s, (1 to 4).map(i => Row(s"v$i", i))), "r.o", "primaryKey" -> "id")
    engine.refs.createBranch("r", "dev", Revision("main"))
    write(frame(s, Seq(Row("dev", 1))), "r.o", "branch" -> "dev", "upsert" -> "true")
    write(frame(s, Seq(Row("main", 2))), "r.o", "upsert" -> "true")
    assert(merge("dev").status == MergeOutcome.Merged)
    assertReads(read("r.o"), Seq(Row("dev", 1), Row("main", 2), Row("v3", 3), Row("v4", 4)), "merged")
  }

  test("cherry-pick applies one commit's change; revert undoes it; both make one-parent commits") {
    base()
    upsert(Seq(Row(1, "dev1", 1)), branch = "dev")
    upsert(Seq(Row(2, "dev2", 2)), branch = "dev", deletes = Seq(3))
    val picked = hash("dev")
    upsert(Seq(Row(4, "main", 4)))
    val before = at("main")
    val c = versioned.spark.api.VersionedApi.cherryPick(spark, null, "r", picked, "main", 0, null, false, null, null, null)
    assert(c.status == MergeOutcome.Merged)
    val img = engine.resolve("r", Revision("main"))
    assert(img.parents.size == 1 && img.message.startsWith(s"cherry-pick ${picked.take(12)}"))
    assertReads(read("r.t"), before.filterNot(r => Set(2, 3).contains(r.getInt(0))) :+ Row(2, "dev2", 2), "picked")
    val r = versioned.spark.api.VersionedApi.revert(spark, null, "r", c.commit, "main", 0, null, false, null, null, null)
    assert(r.status == MergeOutcome.Merged && engine.resolve("r", Revision("main")).message.startsWith("revert"))
    assertReads(read("r.t"), before, "revert restores the content")
  }

  test("bad input is a typed error and commits nothing") {
    base()
    upsert(Seq(Row(1, "dev", 1)), branch = "dev")
    upsert(Seq(Row(2, "main", 2)))
    engine.refs.createTag("r", "v1", Revision("main"))
    engine.refs.createLock("r", "etl", "run", Revision("main"))
    val refs = engine.refs.all("r")
    val commits = logSize("r")
    expectError(ErrorClass.RefNotFound)(merge("nope"))
    expectError(ErrorClass.RefNotFound, "nope")(merge("dev", into = "nope"))
    expectError(ErrorClass.ImmutableRef, "tag")(merge("dev", into = "v1"))
    expectError(ErrorClass.ImmutableRef, "lock")(merge("dev", into = "etl:run"))
    expectError(ErrorClass.InvalidOption, "itself")(merge("main"))
    expectError(ErrorClass.InvalidOption, "strategy")(merge("dev", strategy = "mine"))
    expectError(ErrorClass.InvalidOption, "fast_forward")(merge("dev", ff = "sometimes"))
    val head = hash("main")
    assert(engine.refs.all("r") == refs && hash("main") == head)
    assert(logSize("r") == commits)
  }

  test("histories without a common ancestor merge only when allowed") {
    base()
    // a root image with no tables (as an import from elsewhere would make), on its own branch
    val root = "ab" * 32
    engine.metastore.tx { c =>
      versioned.core.Sql.update(c, "INSERT INTO vc_images (repo, hash, parents, created_ms, author, message, seq, " +
        "changed_tables) VALUES (?,?,?,?,?,?,?,?)", "r", root, "[]", 1L, "t", "root", 1000L, "[]")
      versioned.core.Sql.update(c, "INSERT INTO vc_refs (repo, name, kind, image_hash, created_ms) VALUES (?,?,?,?,?)",
        "r", "heads/orphan", "branch", root, 1L)
    }
    val head = hash("main")
    expectError(ErrorClass.NoCommonAncestor, "allow_unrelated")(merge("orphan"))
    assert(hash("main") == head)
    val o = merge("orphan", unrelated = true)
    assert(o.status == MergeOutcome.Merged && o.base.isEmpty)
    assert(engine.resolve("r", Revision("main")).parents == Seq(head, root))
    assert(at("main").size == 6)
  }
}
