package versioned.spark.merge

import scala.util.Random
import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import versioned.core.Revision

/**
 * Randomized three-way merges against an in-memory oracle. Each round builds a repository with a keyed
 * table, a composite-key table and a key-less table, forks `dev` from `main`, applies random commits on
 * both sides (upserts that change some cells, inserts, deletes; for the key-less table copies added and
 * removed), then checks: the merge's result, or its exact set of conflicts, equals the oracle's; with
 * no conflicts, merging the other way gives the same content; `theirs` settles every conflict as the
 * oracle says; cherry-picking a commit and reverting the pick restores the content. Further rounds
 * change a keyed table's columns on one or both sides (a column of the side's own, the same column on
 * both, a dropped column, a widened type) besides its rows, against an oracle of the column-level merge.
 */
class MergeOracleSuite extends MergeTestBase {
  /**
   * The rounds (seeds) run. The standard depth keeps round 2 (merges cleanly both ways) and round 6 (conflicts in
   * both keyed tables, settled by `theirs`) besides round 1; the deep run ([[versioned.core.TestDepth]]) all six.
   */
  private val Rounds = versioned.core.TestDepth(Seq(1, 2, 6), 1 to 6)

  private sealed trait Spec {
    def name: String
    def schema: StructType
  }
  /** A keyed table: key columns first, then values. */
  private final case class Keyed(name: String, schema: StructType, keys: Int) extends Spec
  private final case class Keyless(name: String, schema: StructType) extends Spec

  private val single = Keyed("k1", new StructType().add("id", IntegerType, nullable = false).add("a", StringType)
    .add("b", IntegerType), 1)
  private val composite = Keyed("k2", new StructType().add("x", IntegerType, nullable = false)
    .add("y", StringType, nullable = false).add("v", IntegerType).add("w", StringType), 2)
  private val bag = Keyless("bag", new StructType().add("s", StringType).add("n", IntegerType))

  private type KeyedState = Map[Seq[Any], Seq[Any]]
  private type BagState = Map[Seq[Any], Int]

  private def value(r: Random, dt: DataType): Any =
    if (r.nextInt(8) == 0) null
    else dt match { case IntegerType => r.nextInt(4); case _ => s"s${r.nextInt(4)}" }

  private def keyOf(t: Keyed, r: Random): Seq[Any] =
    if (t.keys == 1) Seq(r.nextInt(40)) else Seq(r.nextInt(8), s"y${r.nextInt(5)}")

  private def values(t: Keyed, r: Random): Seq[Any] = t.schema.fields.drop(t.keys).map(f => value(r, f.dataType)).toSeq

  /** One random commit on a keyed table: some cells changed, some keys inserted, some deleted. */
  private def change(t: Keyed, s: KeyedState, r: Random, branch: String): KeyedState = {
    val existing = s.keys.toIndexedSeq
    val updates = (0 until r.nextInt(4)).flatMap(_ => if (existing.isEmpty) None else {
      val k = existing(r.nextInt(existing.size)); val v = s(k).toArray
      val i = r.nextInt(v.length); v(i) = value(r, t.schema(t.keys + i).dataType); Some(k -> v.toSeq)
    }).toMap
    val inserts = (0 until r.nextInt(3)).map(_ => keyOf(t, r)).filterNot(s.contains).map(k => k -> values(t, r)).toMap
    val deletes = existing.filter(_ => r.nextInt(10) == 0).filterNot(k => updates.contains(k)).toSet
    val ups = updates ++ inserts
    if (ups.isEmpty && deletes.isEmpty) return s
    val withDel = t.schema.add("_del", BooleanType)
    val rows = ups.map { case (k, v) => Row.fromSeq(k ++ v :+ false) } ++
      deletes.map(k => Row.fromSeq(k ++ Seq.fill(t.schema.length - t.keys)(null) :+ true))
    write(frame(withDel, rows.toSeq), s"r.${t.name}", "branch" -> branch, "upsert" -> "true", "deleteColumn" -> "_del")
    (s ++ ups) -- deletes
  }

  private def changeBag(s: BagState, r: Random, branch: String): BagState = {
    val added = (0 until r.nextInt(3)).map(_ => Seq[Any](s"b${r.nextInt(4)}", r.nextInt(2)))
    var next = added.foldLeft(s)((m, x) => m.updated(x, m.getOrElse(x, 0) + 1))
    s.keys.toSeq.filter(_ => r.nextInt(4) == 0).foreach(x => next = next.updated(x, next(x) - 1))
    next = next.filter(_._2 > 0)
    overwrite(frame(bag.schema, next.toSeq.flatMap { case (x, n) => Seq.fill(n)(Row.fromSeq(x)) }), "r.bag", "branch" -> branch)
    next
  }

  /** The oracle's three-way merge of a keyed table: (result, conflicts as (key JSON, column, kind)). */
  private def merge3(t: Keyed, b: KeyedState, o: KeyedState, th: KeyedState,
                     theirsWins: Boolean): (KeyedState, Set[(String, String, String)]) = {
    val cols = t.schema.fieldNames.drop(t.keys)
    var conflicts = Set.empty[(String, String, String)]
    val merged = (b.keySet ++ o.keySet ++ th.keySet).toSeq.flatMap { k =>
      val (bv, ov, tv) = (b.get(k), o.get(k), th.get(k))
      def conflict(c: String, kind: String): Unit = conflicts += ((keyJson(t, k), c, kind))
      if (ov == tv || tv == bv) ov.map(k -> _)
      else if (ov == bv) tv.map(k -> _)
      else (bv, ov, tv) match {
        case (None, Some(x), Some(y)) =>
          cols.indices.filter(i => x(i) != y(i)).foreach(i => conflict(cols(i), "insert"))
          Some(k -> (if (theirsWins) y else x))
        case (Some(_), None, _) | (Some(_), _, None) => conflict(null, "delete"); (if (theirsWins) tv else ov).map(k -> _)
        case (Some(z), Some(x), Some(y)) => Some(k -> cols.indices.map { i =>
          if (x(i) == y(i) || y(i) == z(i)) x(i) else if (x(i) == z(i)) y(i)
          else { conflict(cols(i), "update"); if (theirsWins) y(i) else x(i) }
        })
        case _ => fail(s"impossible $bv $ov $tv")
      }
    }.toMap
    (merged, conflicts)
  }

  private def mergeBag(b: BagState, o: BagState, th: BagState): BagState =
    (b.keySet ++ o.keySet ++ th.keySet).map { x =>
      val (cb, co, ct) = (b.getOrElse(x, 0), o.getOrElse(x, 0), th.getOrElse(x, 0))
      x -> (cb + math.max(0, co - cb) + math.max(0, ct - cb) - math.max(math.max(0, cb - co), math.max(0, cb - ct)))
    }.filter(_._2 > 0).toMap

  private def keyJson(t: Keyed, k: Seq[Any]): String = t.schema.fieldNames.take(t.keys).zip(k).map {
    case (c, v: String) => s""""$c":"$v""""
    case (c, v) => s""""$c":$v"""
  }.mkString("{", ",", "}")

  private def rowsOf(t: Keyed, s: KeyedState): Seq[Row] = s.toSeq.map { case (k, v) => Row.fromSeq(k ++ v) }
  private def rowsOf(s: BagState): Seq[Row] = s.toSeq.flatMap { case (x, n) => Seq.fill(n)(Row.fromSeq(x)) }

  private final case class State(k1: KeyedState, k2: KeyedState, bag: BagState)

  private def check(ref: String, s: State, clue: String): Unit = {
    assertReads(read("r.k1", "ref" -> ref), rowsOf(single, s.k1), s"$clue: k1 at $ref")
    assertReads(read("r.k2", "ref" -> ref), rowsOf(composite, s.k2), s"$clue: k2 at $ref")
    assertReads(read("r.bag", "ref" -> ref), rowsOf(s.bag), s"$clue: bag at $ref")
  }

  for (round <- Rounds) test(s"random merge round $round equals the oracle") { randomRound(round) }

  // Small merges are computed on the driver (the defaults); over `localCommitMaxRows` Spark tasks join the sides
  // and apply the same rules: both paths must give the oracle's result and conflicts.
  for (round <- versioned.core.TestDepth(1 to 2, 1 to 3)) test(s"random merge round $round computed by Spark tasks (over localCommitMaxRows) equals the oracle") {
    withConf("spark.versioned.write.localCommitMaxRows" -> "0")(randomRound(100 + round))
  }

  private def randomRound(round: Int): Unit = {
    val r = new Random(7919L * round)
    val k1 = (0 until 25).map(_ => keyOf(single, r)).distinct.map(k => k -> values(single, r)).toMap
    val k2 = (0 until 25).map(_ => keyOf(composite, r)).distinct.map(k => k -> values(composite, r)).toMap
    val b0 = (0 until 10).map(_ => Seq[Any](s"b${r.nextInt(4)}", r.nextInt(2))).groupBy(identity).map { case (x, g) => x -> g.size }
    write(frame(single.schema, rowsOf(single, k1)), "r.k1", "primaryKey" -> "id")
    write(frame(composite.schema, rowsOf(composite, k2)), "r.k2", "primaryKey" -> "x,y")
    write(frame(bag.schema, rowsOf(b0)), "r.bag")
    val base = State(k1, k2, b0)
    engine.refs.createBranch("r", "dev", Revision.Spec("main"))
    def evolve(s: State, branch: String): State = (0 until 1 + r.nextInt(2)).foldLeft(s) { (cur, _) =>
      val pick = r.nextInt(4)
      State(if (pick != 1) change(single, cur.k1, r, branch) else cur.k1,
        if (pick != 2) change(composite, cur.k2, r, branch) else cur.k2,
        if (pick == 0 || pick == 3) changeBag(cur.bag, r, branch) else cur.bag)
    }
    val dev = evolve(base, "dev")
    val main = evolve(base, "main")
    val (m1, c1) = merge3(single, base.k1, main.k1, dev.k1, theirsWins = false)
    val (m2, c2) = merge3(composite, base.k2, main.k2, dev.k2, theirsWins = false)
    val expected = State(m1, m2, mergeBag(base.bag, main.bag, dev.bag))
    val conflicts = c1.map(c => ("k1", c._1, c._2, c._3)) ++ c2.map(c => ("k2", c._1, c._2, c._3))
    engine.refs.createBranch("r", "other", Revision.Spec("dev"))
    engine.refs.createBranch("r", "pick", Revision.Spec("main"))
    val head = hash("main")
    val o = merge("dev")
    info(s"round $round: ${o.status}, ${conflicts.size} conflict(s), stats ${o.stats.mkString(" ")}")
    if (conflicts.nonEmpty) {
      assert(o.status == MergeOutcome.Conflicts && hash("main") == head, s"round $round: ${o.status}")
      assert(conflictRows(o) == conflicts, s"round $round conflicts")
      val t = merge("dev", strategy = "theirs")
      assert(t.status == MergeOutcome.Merged)
      check("main", expected.copy(k1 = merge3(single, base.k1, main.k1, dev.k1, theirsWins = true)._1,
        k2 = merge3(composite, base.k2, main.k2, dev.k2, theirsWins = true)._1), s"round $round theirs")
    } else {
      assert(o.status != MergeOutcome.Conflicts && o.conflictCount == 0, s"round $round: ${o.status}")
      check("main", expected, s"round $round")
      assert(merge(head, into = "other").status != MergeOutcome.Conflicts)
      check("other", expected, s"round $round, merged the other way")
    }
    // cherry-pick dev's last commit onto a branch at main's old head, then revert the pick
    val before = State(main.k1, main.k2, main.bag)
    val picked = versioned.spark.api.VersionedApi.cherryPick(spark, null, "r", hash("dev"), "pick", 0, "theirs", false,
      null, null, null)
    assert(Set(MergeOutcome.Merged, MergeOutcome.UpToDate).contains(picked.status))
    if (picked.status == MergeOutcome.Merged) {
      val back = versioned.spark.api.VersionedApi.revert(spark, null, "r", picked.commit, "pick", 0, null, false,
        null, null, null)
      assert(back.status == MergeOutcome.Merged, s"round $round revert: ${back.status} ${back.conflictCount}")
    }
    check("pick", before, s"round $round cherry-pick then revert")
  }

  // ---- schema changes on one or both sides ----
  private val SchemaRounds = versioned.core.TestDepth(1 to 2, 1 to 4)

  /** A keyed table (key `id`) with its columns: key -> column -> value (ints stay ints in a widened column). */
  private final case class Shaped(schema: StructType, rows: Map[Int, Map[String, Any]]) {
    def rowsOut: Seq[Row] = rows.toSeq.map { case (k, m) => rowOf(schema, k, m) }
  }

  private def rowOf(s: StructType, k: Int, m: Map[String, Any]): Row = Row.fromSeq(s.fields.toSeq.map { f =>
    if (f.name == "id") k else (f.dataType, m.getOrElse(f.name, null)) match {
      case (LongType, i: Int) => i.toLong
      case (_, v) => v
    }
  })

  /** One side's schema change (an overwrite with other columns): none, its own column, column c, a dropped, b widened. */
  private def reshapeSide(st: Shaped, r: Random, branch: String): Shaped = {
    val next = r.nextInt(5) match {
      case 0 => None
      case 1 => Some(st.schema.add(s"c_$branch", IntegerType))
      case 2 => Some(st.schema.add("c", IntegerType))
      case 3 => Some(StructType(st.schema.filterNot(_.name == "a")))
      case _ => Some(StructType(st.schema.map(f => if (f.name == "b") f.copy(dataType = LongType) else f)))
    }
    next.fold(st) { s =>
      val added = s.fieldNames.filterNot(st.schema.fieldNames.contains)
      val rows = st.rows.map { case (k, m) => k -> (m.filter { case (c, _) => s.fieldNames.contains(c) } ++
        added.map(c => c -> (if (r.nextInt(3) == 0) r.nextInt(4) else null))) }
      overwrite(frame(s, rows.toSeq.map { case (k, m) => rowOf(s, k, m) }), "r.s", "branch" -> branch)
      Shaped(s, rows)
    }
  }

  /** One random commit of row changes over the side's current columns. */
  private def changeShaped(st: Shaped, r: Random, branch: String): Shaped = {
    val cols = st.schema.fields.toSeq.drop(1)
    def v(f: StructField): Any = value(r, if (f.dataType == StringType) StringType else IntegerType)
    val existing = st.rows.keys.toIndexedSeq.sorted
    val updates = (0 until r.nextInt(4)).flatMap(_ => if (existing.isEmpty) None else {
      val k = existing(r.nextInt(existing.size)); val f = cols(r.nextInt(cols.size))
      Some(k -> st.rows(k).updated(f.name, v(f)))
    }).toMap
    val inserts = (0 until r.nextInt(3)).map(_ => r.nextInt(40)).filterNot(st.rows.contains)
      .map(k => k -> cols.map(f => f.name -> v(f)).toMap).toMap
    val deletes = existing.filter(_ => r.nextInt(10) == 0).filterNot(updates.contains).toSet
    val ups = updates ++ inserts
    if (ups.isEmpty && deletes.isEmpty) return st
    val rows = ups.map { case (k, m) => Row.fromSeq(rowOf(st.schema, k, m).toSeq :+ false) } ++
      deletes.map(k => Row.fromSeq(k +: Seq.fill(cols.size)(null) :+ true))
    write(frame(st.schema.add("_del", BooleanType), rows.toSeq), "r.s", "branch" -> branch, "upsert" -> "true",
      "deleteColumn" -> "_del")
    Shaped(st.schema, (st.rows ++ ups) -- deletes)
  }

  /**
   * The oracle's column-level merge: a column added on one side is added, dropped on one side dropped,
   * widened on one side widened (every change here is compatible); ours' columns first, then theirs'
   * additions. Rows are compared over the merged columns (null where a version lacks one); a cell of a
   * column one side lacks takes the other side and never conflicts.
   */
  private def mergeShaped(b: Shaped, o: Shaped, t: Shaped, theirsWins: Boolean): (Shaped, Set[(String, String, String)]) = {
    def has(s: Shaped, c: String) = s.schema.fieldNames.contains(c)
    val names = (o.schema.fieldNames ++ t.schema.fieldNames.filterNot(o.schema.fieldNames.contains)).toSeq
      .filter(c => has(o, c) == has(t, c) || !has(b, c))
    val schema = StructType(names.map(c => (o.schema ++ t.schema).filter(_.name == c)
      .maxBy(f => if (f.dataType == LongType) 1 else 0)))
    val vs = names.drop(1)
    val (oLacks, tLacks) = (vs.filterNot(has(o, _)).toSet, vs.filterNot(has(t, _)).toSet)
    def proj(s: Shaped, k: Int): Option[Seq[Any]] = s.rows.get(k).map(m => vs.map(m.getOrElse(_, null)))
    var conflicts = Set.empty[(String, String, String)]
    val merged = (b.rows.keySet ++ o.rows.keySet ++ t.rows.keySet).toSeq.flatMap { k =>
      val (bv, ov, tv) = (proj(b, k), proj(o, k), proj(t, k))
      def conflict(c: String, kind: String): Unit = conflicts += (((s"""{"id":$k}"""), c, kind))
      def cells(x: Seq[Any], y: Seq[Any], z: Option[Seq[Any]]): Seq[Any] = vs.indices.map { i =>
        if (oLacks(vs(i))) y(i) else if (tLacks(vs(i))) x(i)
        else if (x(i) == y(i) || z.exists(_(i) == y(i))) x(i) else if (z.exists(_(i) == x(i))) y(i)
        else { conflict(vs(i), if (z.isEmpty) "insert" else "update"); if (theirsWins) y(i) else x(i) }
      }
      val row = if (ov == tv || tv == bv) ov
        else if (ov == bv) tv
        else (bv, ov, tv) match {
          case (z, Some(x), Some(y)) => Some(cells(x, y, z))
          case _ => conflict(null, "delete"); if (theirsWins) tv else ov
        }
      row.map(v => k -> vs.zip(v).toMap)
    }.toMap
    (Shaped(schema, merged), conflicts)
  }

  for (round <- SchemaRounds) test(s"random merge with schema changes, round $round, equals the oracle") {
    val r = new Random(104729L * round)
    val s0 = new StructType().add("id", IntegerType, nullable = false).add("a", StringType).add("b", IntegerType)
    val b0 = Shaped(s0, (0 until 20).map(_ => r.nextInt(40)).distinct
      .map(k => k -> Map[String, Any]("a" -> value(r, StringType), "b" -> value(r, IntegerType))).toMap)
    write(frame(s0, b0.rowsOut), "r.s", "primaryKey" -> "id")
    engine.refs.createBranch("r", "dev", Revision.Spec("main"))
    def evolve(branch: String): Shaped =
      changeShaped(reshapeSide(if (r.nextBoolean()) changeShaped(b0, r, branch) else b0, r, branch), r, branch)
    val dev = evolve("dev")
    val main = evolve("main")
    engine.refs.createBranch("r", "other", Revision.Spec("dev"))
    val head = hash("main")
    val (expected, conflicts) = mergeShaped(b0, main, dev, theirsWins = false)
    def check(ref: String, want: Shaped, clue: String): Unit = {
      val df = read("r.s", "ref" -> ref)
      assert(df.schema.fieldNames.toSet == want.schema.fieldNames.toSet, s"$clue: columns ${df.schema.simpleString}")
      assertReads(df.select(want.schema.fieldNames.toSeq.map(versioned.spark.format.Columns.col): _*), want.rowsOut, clue)
    }
    val o = merge("dev")
    info(s"round $round: main ${main.schema.simpleString}, dev ${dev.schema.simpleString}: ${o.status}, " +
      s"${conflicts.size} conflict(s)")
    if (conflicts.nonEmpty) {
      assert(o.status == MergeOutcome.Conflicts && hash("main") == head, s"round $round: ${o.status}")
      assert(conflictRows(o) == conflicts.map(c => ("s", c._1, c._2, c._3)), s"round $round conflicts")
      assert(merge("dev", strategy = "theirs").status == MergeOutcome.Merged)
      check("main", mergeShaped(b0, main, dev, theirsWins = true)._1, s"round $round theirs")
    } else {
      assert(o.status != MergeOutcome.Conflicts && o.conflictCount == 0, s"round $round: ${o.status}")
      check("main", expected, s"round $round")
      assert(read("r.s").schema.fieldNames.toSeq == expected.schema.fieldNames.toSeq, s"round $round: column order")
      assert(merge(head, into = "other").status != MergeOutcome.Conflicts)
      check("other", expected, s"round $round, merged the other way")
    }
  }
}
