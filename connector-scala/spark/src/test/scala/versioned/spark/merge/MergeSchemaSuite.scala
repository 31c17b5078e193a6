package versioned.spark.merge

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import versioned.core.{ObjectKind, Revision}

/** Column-level schema merge through the public API (docs/MERGE.md, "Schema changes"): one rule per case. */
class MergeSchemaSuite extends MergeTestBase {
  private def base(rows: Int = 6): Unit = {
    seed((1 to rows).map(i => Row(i, s"a$i", i)))
    engine.refs.createBranch("r", "dev", Revision.Spec("main"))
  }

  /** Rewrites `table` on `branch` with a new schema (an overwrite with other columns: a new SNAP). */
  private def reshape(branch: String, s: StructType, rows: Seq[Row], table: String = "r.t", opts: Seq[(String, String)] = Nil): Unit =
    overwrite(frame(s, rows), table, ("branch" -> branch) +: opts: _*)

  private def columns(ref: String, table: String = "r.t"): Seq[String] = read(table, "ref" -> ref).schema.fieldNames.toSeq

  private def kinds(ref: String, table: String = "t"): Seq[String] = {
    val t = engine.tableOption("r", hash(ref), table).get
    val ids = t.fragments.flatMap(_.objects)
    val metas = engine.objects(ids)
    ids.map(metas(_).kind)
  }

  private val withC = schema.add("c", IntegerType)

  test("a column added on one side is added, null for the other side's rows; rows changed on both sides merge") {
    base()
    // dev adds c (filled for some rows) and changes a of row 1; main changes b of row 2, inserts 7, deletes 6
    reshape("dev", withC, Row(1, "dev", 1, 10) +: Row(2, "a2", 2, 20) +: (3 to 6).map(i => Row(i, s"a$i", i, null)))
    upsert(Seq(Row(2, "a2", 200), Row(7, "a7", 7)), deletes = Seq(6))
    engine.refs.createBranch("r", "other", Revision.Spec("dev"))
    val (ours, theirs) = (hash("main"), hash("dev"))
    val o = merge("dev")
    assert(o.status == MergeOutcome.Merged && o.conflictCount == 0, o.conflicts.collect().mkString)
    assert(engine.resolve("r", Revision.Spec("main")).parents == Seq(ours, theirs))
    assert(o.stats.map(s => (s.table, s.action)) == Seq(("t", "merge")))
    val expected = Seq(Row(1, "dev", 1, 10), Row(2, "a2", 200, 20), Row(3, "a3", 3, null), Row(4, "a4", 4, null),
      Row(5, "a5", 5, null), Row(7, "a7", 7, null))
    assert(columns("main") == Seq("id", "a", "b", "c"))
    assertReads(read("r.t"), expected, "merged with dev's column")
    assert(kinds("main").forall(_ == ObjectKind.Snap), "the target's version is rewritten with the new column")
    // the other way round the target already has every merged column: the merged changes are appended as DIFFs
    val before = kinds("other")
    assert(merge(ours, into = "other").status == MergeOutcome.Merged)
    assertReads(read("r.t", "ref" -> "other"), expected, "merged into dev's copy")
    assert(kinds("other").take(before.size) == before && kinds("other").drop(before.size).forall(_ == ObjectKind.Diff),
      s"${kinds("other")} should be $before followed by DIFFs")
    assert(merge("dev").status == MergeOutcome.UpToDate)
  }

  test("columns added on both sides, a column dropped on one side, a type widened on the other") {
    base(4)
    // main (ours): drops a, adds x, changes b of row 3; dev (theirs): widens b to bigint, adds y, changes a of 2, inserts 5
    reshape("main", new StructType().add("id", IntegerType, nullable = false).add("b", IntegerType).add("x", StringType),
      Seq(Row(1, 1, "x1"), Row(2, 2, null), Row(3, 30, null), Row(4, 4, null)))
    val devSchema = new StructType().add("id", IntegerType, nullable = false).add("a", StringType).add("b", LongType)
      .add("y", StringType)
    reshape("dev", devSchema, Seq(Row(1, "a1", 1L, null), Row(2, "dev", 2L, "y2"), Row(3, "a3", 3L, null),
      Row(4, "a4", 4L, null), Row(5, "a5", 5L, "y5")))
    val o = merge("dev")
    assert(o.status == MergeOutcome.Merged && o.conflictCount == 0, o.conflicts.collect().mkString)
    val merged = read("r.t")
    assert(merged.schema.map(f => f.name -> f.dataType) == Seq("id" -> IntegerType, "b" -> LongType, "x" -> StringType,
      "y" -> StringType), "ours' columns in ours' order, then the columns theirs added")
    assertReads(merged, Seq(Row(1, 1L, "x1", null), Row(2, 2L, null, "y2"), Row(3, 30L, null, null),
      Row(4, 4L, null, null), Row(5, 5L, null, "y5")), "merged")
  }

  test("the same key inserted on both sides: a column only one side has never conflicts, shared ones do") {
    base(2)
    reshape("main", withC, Seq(Row(1, "a1", 1, null), Row(2, "a2", 2, null), Row(7, "same", 7, 70), Row(8, "m", 8, 80)))
    upsert(Seq(Row(7, "same", 7), Row(8, "d", 8), Row(1, "dev", 1)), branch = "dev")
    val head = hash("main")
    val f = merge("dev")
    assert(f.status == MergeOutcome.Conflicts && hash("main") == head)
    assert(conflictRows(f) == Set(("t", """{"id":8}""", "a", "insert")))
    val dry = merge("dev", strategy = "theirs", dryRun = true)
    assert(dry.status == MergeOutcome.Merged && dry.commit == null && hash("main") == head)
    // a resolution row has the merged columns
    val fixed = merge("dev", resolutions = Map("t" -> frame(withC, Seq(Row(8, "fixed", 8, 81)))))
    assert(fixed.status == MergeOutcome.Merged)
    assertReads(read("r.t"), Seq(Row(1, "dev", 1, null), Row(2, "a2", 2, null), Row(7, "same", 7, 70),
      Row(8, "fixed", 8, 81)), "resolved")
  }

  test("different changes of one column, a non-widening type change and a changed key are schema conflicts") {
    val tables = Seq("t1", "t2", "t3", "t4", "t5")
    tables.foreach(t => seed((1 to 3).map(i => Row(i, s"a$i", i)), s"r.$t"))
    engine.refs.createBranch("r", "dev", Revision.Spec("main"))
    def rows(f: Int => Any) = (1 to 3).map(i => Row(i, s"a$i", f(i)))
    def rows4(f: Int => Any) = (1 to 3).map(i => Row(i, s"a$i", i, f(i)))
    // t1: c added on both sides with different types
    reshape("main", withC, rows4(identity), "r.t1")
    reshape("dev", schema.add("c", StringType), rows4(_.toString), "r.t1")
    // t2: b retyped differently
    reshape("main", schema.copy(schema.fields.updated(2, StructField("b", LongType))), rows(_.toLong), "r.t2")
    reshape("dev", schema.copy(schema.fields.updated(2, StructField("b", DoubleType))), rows(_.toDouble), "r.t2")
    // t3: b dropped on one side, retyped on the other
    reshape("main", new StructType(schema.fields.take(2)), (1 to 3).map(i => Row(i, s"a$i")), "r.t3")
    reshape("dev", schema.copy(schema.fields.updated(2, StructField("b", LongType))), rows(_.toLong), "r.t3")
    // t4: b narrowed to a string on one side (not a widening), rows changed on the other
    reshape("dev", schema.copy(schema.fields.updated(2, StructField("b", StringType))), rows(_.toString), "r.t4")
    upsert(Seq(Row(1, "main", 1)), table = "r.t4")
    // t5: the primary key changed on one side
    reshape("dev", schema, rows(identity), "r.t5", Seq("primaryKey" -> "id,a"))
    upsert(Seq(Row(1, "main", 1)), table = "r.t5")
    val head = hash("main")
    val f = merge("dev")
    assert(f.status == MergeOutcome.Conflicts && f.commit == null && hash("main") == head)
    assert(conflictRows(f) == tables.map(t => (t, null, null, "schema")).toSet)
    assert(f.conflicts.collect().forall(r => r.getString(4) != null && r.getString(5) != null), "ours and theirs shown")
    val dry = merge("dev", strategy = "theirs", dryRun = true)
    assert(dry.status == MergeOutcome.Merged && hash("main") == head)
    // each table is reported as what the strategy does to it: theirs takes dev's version, with its diff's counts
    // (diff_summary's: none for a column whose types do not compare)
    assert(dry.stats.map(_.action).toSet == Set("take"), dry.stats)
    assert(dry.stats.find(_.table == "t5").exists(s => s.upserts == 1 && s.deletes == 1), dry.stats)
    engine.refs.createBranch("r", "alt", Revision.Spec("main"))
    val mainRows = tables.map(t => t -> at("main", s"r.$t")).toMap
    val kept = merge("dev", strategy = "ours")
    assert(kept.status == MergeOutcome.Merged)
    assert(kept.stats.map(s => (s.action, s.changes)).toSet == Set(("keep", 0L)), kept.stats)
    tables.foreach(t => assertReads(read(s"r.$t"), mainRows(t), s"ours keeps main's $t"))
    assert(merge("dev", into = "alt", strategy = "theirs").status == MergeOutcome.Merged)
    tables.foreach(t => assertReads(read(s"r.$t", "ref" -> "alt"), at("dev", s"r.$t"), s"theirs takes dev's $t"))
    assert(engine.tableOption("r", hash("alt"), "t5").get.primaryKey == Seq("id", "a"))
  }

  test("key-less tables: columns merge by the same rules, rows as multisets") {
    val s = new StructType().add("s", StringType).add("n", IntegerType)
    write(frame(s, Seq(Row("x", 1), Row("x", 1), Row("y", 2), Row("z", 3))), "r.k")
    engine.refs.createBranch("r", "dev", Revision.Spec("main"))
    // dev adds w (set on one copy of x), and a row; main removes y and adds m
    reshape("dev", s.add("w", StringType), Seq(Row("x", 1, null), Row("x", 1, "w"), Row("y", 2, null), Row("z", 3, null),
      Row("q", 4, "wq")), "r.k")
    overwrite(frame(s, Seq(Row("x", 1), Row("x", 1), Row("z", 3), Row("m", 5))), "r.k")
    val o = merge("dev")
    assert(o.status == MergeOutcome.Merged && o.conflictCount == 0)
    assert(columns("main", "r.k") == Seq("s", "n", "w"))
    assertReads(read("r.k"), Seq(Row("x", 1, null), Row("x", 1, "w"), Row("z", 3, null), Row("q", 4, "wq"),
      Row("m", 5, null)), "multiset merge over the merged columns")
    // different types of one added column conflict, as for keyed tables
    engine.refs.createBranch("r", "dev2", Revision.Spec("main"))
    reshape("dev2", s.add("v", IntegerType), Seq(Row("x", 1, 1)), "r.k")
    reshape("main", s.add("v", StringType), Seq(Row("x", 1, "1")), "r.k")
    assert(conflictRows(merge("dev2")) == Set(("k", null, null, "schema")))
  }

  test("a table created on both sides with different columns merges like one added from an empty base") {
    base(1)
    reshape("main", withC, Seq(Row(1, "a1", 1, 10), Row(2, "m", 2, 20)), "r.n", Seq("primaryKey" -> "id"))
    reshape("dev", schema.add("d", StringType), Seq(Row(1, "a1", 1, "d1"), Row(3, "d", 3, null)), "r.n",
      Seq("primaryKey" -> "id"))
    val o = merge("dev")
    assert(o.status == MergeOutcome.Merged && o.conflictCount == 0, o.conflicts.collect().mkString)
    assert(columns("main", "r.n") == Seq("id", "a", "b", "c", "d"))
    assertReads(read("r.n"), Seq(Row(1, "a1", 1, 10, "d1"), Row(2, "m", 2, 20, null), Row(3, "d", 3, null, null)),
      "both inserts of key 1 agree on the shared columns")
  }
}
