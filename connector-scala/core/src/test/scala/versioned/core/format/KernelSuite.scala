package versioned.core.format

import scala.util.Random
import org.scalatest.funsuite.AnyFunSuite
import versioned.core.{ChangeKind, DataValidationException, ErrorClass}

/**
 * The format kernel's rules against plain oracles, on random inputs (seeded): the key order, conflation,
 * routing, key validation and the change rule.
 */
class KernelSuite extends AnyFunSuite {
  /** A test engine's rows: arrays of boxed values (null allowed). */
  private object ArrayAccess extends KeyAccess[Array[Any]] {
    override def isNullAt(r: Array[Any], i: Int): Boolean = r(i) == null
    override def getByte(r: Array[Any], i: Int): Byte = r(i).asInstanceOf[Byte]
    override def getShort(r: Array[Any], i: Int): Short = r(i).asInstanceOf[Short]
    override def getInt(r: Array[Any], i: Int): Int = r(i).asInstanceOf[Int]
    override def getLong(r: Array[Any], i: Int): Long = r(i).asInstanceOf[Long]
    override def getFloat(r: Array[Any], i: Int): Float = r(i).asInstanceOf[Float]
    override def getDouble(r: Array[Any], i: Int): Double = r(i).asInstanceOf[Double]
    override def getBoolean(r: Array[Any], i: Int): Boolean = r(i).asInstanceOf[Boolean]
    override def compareUtf8(a: Array[Any], b: Array[Any], i: Int): Int =
      KeyOrder.compareUtf8(a(i).toString.getBytes("UTF-8"), b(i).toString.getBytes("UTF-8"))
    override def compareDecimal(a: Array[Any], b: Array[Any], i: Int, t: KeyType.Decimal): Int =
      a(i).asInstanceOf[BigDecimal].compare(b(i).asInstanceOf[BigDecimal])
  }

  private val specialDoubles = Seq(0.0, -0.0, Double.NaN, Double.PositiveInfinity, Double.NegativeInfinity, 1.5, -1.5,
    Double.MinPositiveValue, Double.MaxValue)

  test("doubles: -0.0 equals 0.0, NaN equals NaN and is the largest; a total order") {
    assert(KeyOrder.compareDoubles(-0.0, 0.0) == 0)
    assert(KeyOrder.compareDoubles(Double.NaN, Double.NaN) == 0)
    assert(KeyOrder.compareDoubles(Double.NaN, Double.PositiveInfinity) > 0)
    assert(KeyOrder.compareFloats(-0.0f, 0.0f) == 0 && KeyOrder.compareFloats(Float.NaN, Float.MaxValue) > 0)
    val r = new Random(7)
    val xs = specialDoubles ++ Seq.fill(200)(if (r.nextBoolean()) r.nextGaussian() else r.nextInt(5).toDouble)
    for (a <- xs; b <- xs) {
      assert(math.signum(KeyOrder.compareDoubles(a, b)) == -math.signum(KeyOrder.compareDoubles(b, a)), s"$a $b")
    }
    val sorted = xs.sortWith((a, b) => KeyOrder.compareDoubles(a, b) < 0)
    sorted.sliding(2).foreach { case Seq(a, b) => assert(KeyOrder.compareDoubles(a, b) <= 0); case _ => }
    // the order of numbers other than zeros and NaN is the numeric one
    for (a <- xs; b <- xs if !a.isNaN && !b.isNaN && a != b) assert(KeyOrder.compareDoubles(a, b) == (if (a < b) -1 else 1))
  }

  test("strings order by unsigned UTF-8 bytes, not by UTF-16 units") {
    val s = Seq("", "a", "ab", "b", "\u00e9", "\uffff", "\ud83d\ude00", "Z")
    for (a <- s; b <- s) {
      val bytes = java.util.Arrays.compareUnsigned(a.getBytes("UTF-8"), b.getBytes("UTF-8"))
      assert(math.signum(KeyOrder.compareCanonical(KeyType.Utf8, a, b)) == math.signum(bytes), s"$a $b")
    }
    // U+FFFF sorts below a supplementary character in UTF-8 (above it in UTF-16)
    assert(KeyOrder.compareCanonical(KeyType.Utf8, "\uffff", "\ud83d\ude00") < 0)
  }

  test("rows and canonical values order alike, nulls first, column by column") {
    val r = new Random(11)
    val types = IndexedSeq(KeyType.Int32, KeyType.Float64, KeyType.Utf8, KeyType.Decimal(10, 2))
    def v(i: Int): Any = if (r.nextInt(8) == 0) null else i match {
      case 0 => r.nextInt(3); case 1 => specialDoubles(r.nextInt(specialDoubles.size))
      case 2 => Seq("a", "b", "\u00e9")(r.nextInt(3)); case _ => BigDecimal(r.nextInt(3)) / 2
    }
    val rows = IndexedSeq.fill(300)(Array.tabulate[Any](4)(v))
    val order = new KeyOrder(types, ArrayAccess)
    def canonical(a: Array[Any]): Seq[Any] = a.toSeq.map {
      case i: Int => i.toLong; case other => other
    }
    for (_ <- 0 until 2000) {
      val a = rows(r.nextInt(rows.size)); val b = rows(r.nextInt(rows.size))
      assert(math.signum(order.compare(a, b)) == math.signum(KeyOrder.compareCanonicalKeys(types, canonical(a), canonical(b))))
      assert(order.same(a, b) == (order.compare(b, a) == 0))
    }
    assert(order.compare(Array[Any](null, 1.0, "a", BigDecimal(0)), Array[Any](Int.MinValue, 1.0, "a", BigDecimal(0))) < 0)
    assert(KeyOrder.sortedDistinct(KeyType.Float64, Seq(0.0, -0.0, 1.0, null, Double.NaN, Double.NaN)).size == 3)
  }

  /** Sources of (key, source, ordinal, delete) rows, each sorted by key, oldest first. */
  private def randomSources(r: Random): Array[Array[Array[Any]]] =
    Array.tabulate(1 + r.nextInt(5)) { s =>
      (0 until r.nextInt(30)).map(_ => r.nextInt(40).toLong).distinct.sorted
        .zipWithIndex.map { case (k, i) => Array[Any](k, s, i, r.nextBoolean()) }.toArray
    }

  test("conflation: each key once, from the newest source holding it (arrays, primitive keys and streams)") {
    val r = new Random(3)
    val order = new KeyOrder(IndexedSeq(KeyType.Int64), ArrayAccess)
    val asString = new KeyOrder(IndexedSeq(KeyType.Utf8), ArrayAccess)
    for (_ <- 0 until 300) {
      val sources = randomSources(r)
      val oracle = sources.flatten.groupBy(_(0)).values.map(_.maxBy(_(1).asInstanceOf[Int])).toSeq
        .sortBy(_(0).asInstanceOf[Long]).map(_.toSeq)
      assert(Conflation.rows(sources, order).map(_.toSeq).toSeq == oracle) // primitive long keys
      val streamed = Conflation.streams(sources.map(_.iterator), order)
      val out = Iterator.continually(streamed.next()).takeWhile(identity).map { _ =>
        assert(streamed.row(1) == streamed.source); streamed.row.toSeq }.toSeq
      assert(out == oracle)
      // a non-integral key takes the row comparison: strings of the same order (zero-padded)
      val strings = sources.map(_.map(a => a.updated(0, f"${a(0).asInstanceOf[Long]}%03d")))
      assert(Conflation.rows(strings, asString).map(_(0).toString.toLong).toSeq == oracle.map(_(0)))
    }
  }

  test("routing: the last fragment whose lower bound is <= the key, else the first") {
    val r = new Random(5)
    val order = new KeyOrder(IndexedSeq(KeyType.Int64), ArrayAccess)
    for (_ <- 0 until 200) {
      val lowers = (0 until r.nextInt(6)).map(_ => r.nextInt(100).toLong).distinct.sorted
      val frags: Seq[Option[Seq[Any]]] = None +: lowers.map(l => Some(Seq[Any](l)))
      val router = FragmentRouter.of(frags, order)(vs => Array[Any](vs.head))
      for (k <- -5L to 105L) {
        val expected = frags.zipWithIndex.collect { case (Some(Seq(l: Long)), i) if l <= k => i }.lastOption.getOrElse(0)
        assert(router(Array[Any](k)) == expected, s"key $k, bounds $lowers")
      }
    }
  }

  test("lookupRanges: a lookup split by fragment gives each fragment exactly the first-key values its range may hold") {
    val r = new Random(13)
    // one-column keys: exactly the values the router sends to the fragment (keys on, at and around the bounds)
    val order1 = new KeyOrder(IndexedSeq(KeyType.Int64), ArrayAccess)
    for (_ <- 0 until 300) {
      val lowers = (0 until r.nextInt(8)).map(_ => r.nextInt(60).toLong).distinct.sorted
      val frags: IndexedSeq[Option[Seq[Any]]] = None +: lowers.map(l => Some(Seq[Any](l)))
      val router = FragmentRouter.of(frags, order1)(vs => Array[Any](vs.head))
      val near = lowers.flatMap(l => Seq(l - 1, l, l + 1))
      val values = KeyOrder.sortedDistinct(KeyType.Int64, Seq.fill(r.nextInt(30))(r.nextInt(70).toLong - 5) ++
        near.filter(_ => r.nextBoolean()))
      val ranges = FragmentRouter.lookupRanges(KeyType.Int64, 1, values, frags.map(_.map(_.head)))
      assert(ranges.size == frags.size)
      frags.indices.foreach { i =>
        val expected = values.filter(v => router(Array[Any](v)) == i)
        assert(ranges(i).map(values) == expected, s"fragment $i, bounds $lowers, values $values")
      }
    }
    // two-column keys: every value some key of the fragment may start with (a bound's first column may be on both
    // sides of it), and none outside [its first column, the next bound's first column]
    val types = IndexedSeq(KeyType.Int64, KeyType.Utf8)
    val order2 = new KeyOrder(types, ArrayAccess)
    val seconds = Seq[Any](null, "a", "b", "c", "d")
    for (_ <- 0 until 300) {
      val bounds = Seq.fill(r.nextInt(6))(Seq[Any](r.nextInt(12).toLong, seconds(1 + r.nextInt(4))))
        .distinct.sortWith((a, b) => KeyOrder.compareCanonicalKeys(types, a, b) < 0)
      val frags: IndexedSeq[Option[Seq[Any]]] = (None +: bounds.map(Some(_))).toIndexedSeq
      val router = FragmentRouter.of(frags, order2)(_.toArray)
      val values = KeyOrder.sortedDistinct(KeyType.Int64, Seq.fill(r.nextInt(14))(r.nextInt(14).toLong - 1))
      val ranges = FragmentRouter.lookupRanges(KeyType.Int64, 2, values, frags.map(_.map(_.head)))
      frags.indices.foreach { i =>
        val held = ranges(i).map(values).toSet
        val reachable = values.filter(v => seconds.exists(x => router(Array[Any](v, x)) == i)).toSet
        assert(reachable.subsetOf(held), s"fragment $i misses ${reachable -- held}, bounds $bounds")
        val lo = frags(i).map(_.head.asInstanceOf[Long]); val hi = frags.lift(i + 1).flatten.map(_.head.asInstanceOf[Long])
        assert(held.map(_.asInstanceOf[Long]).forall(v => lo.forall(_ <= v) && hi.forall(v <= _)), s"fragment $i holds too much: $held, bounds $bounds")
      }
    }
    assert(FragmentRouter.lookupRanges(KeyType.Int64, 1, IndexedSeq.empty, IndexedSeq(None, Some(5L))).forall(_.isEmpty))
  }

  test("the read rule: a fragment reads the rows of an object within its bounds; statistics tell when all are") {
    val r = new Random(11)
    val types = IndexedSeq(KeyType.Int64, KeyType.Utf8)
    val order = new KeyOrder(types, ArrayAccess)
    def key = Array[Any](r.nextInt(20).toLong, if (r.nextInt(8) == 0) null else ('a' + r.nextInt(4)).toChar.toString)
    for (_ <- 0 until 300) {
      val rows = (0 until r.nextInt(12)).map(_ => key)
      val (lower, upper) = (Option.when(r.nextBoolean())(key.toSeq), Option.when(r.nextBoolean())(key.toSeq))
      val bounds = new KeyBounds(order, lower.map(_.toArray), upper.map(_.toArray))
      def cmp(a: Seq[Any], b: Seq[Any]) = KeyOrder.compareCanonicalKeys(types, a, b)
      val within = rows.filter(k => lower.forall(l => cmp(k.toSeq, l) >= 0) && upper.forall(u => cmp(k.toSeq, u) < 0))
      assert(bounds.restrict(rows.iterator).map(_.toSeq).toSeq == within.map(_.toSeq))
      // per-column statistics over non-null values, as an object records them
      def col(c: Int) = rows.map(_(c)).filter(_ != null)
      def pick(c: Int, f: Seq[Any] => Any) = Option.when(col(c).nonEmpty)(f(col(c)))
      val sorted = (c: Int) => col(c).sortWith((a, b) => KeyOrder.compareCanonical(types(c), a, b) < 0)
      val covered = KeyBounds.covers(types, lower, upper, rows.size.toLong, c => pick(c, _ => sorted(c).head),
        c => pick(c, _ => sorted(c).last), c => rows.exists(_(c) == null))
      // conservative: never claims an object within when a row is outside; every row outside means not within
      if (covered) assert(within.size == rows.size, s"$rows in [$lower, $upper)")
      if (rows.nonEmpty && within.isEmpty) assert(!covered)
    }
    // a missing statistic is never "within"; an empty object always is
    assert(!KeyBounds.covers(types, None, None, 3L, _ => None, _ => Some(1L), _ => false))
    assert(KeyBounds.covers(types, Some(Seq(5L, "a")), None, 0L, _ => None, _ => None, _ => false))
  }

  test("the read rule's row-group skip: a run is skipped only when no key of it can be within the bounds") {
    val r = new Random(12)
    val types = IndexedSeq(KeyType.Int64, KeyType.Utf8)
    def cmp(a: Seq[Any], b: Seq[Any]) = KeyOrder.compareCanonicalKeys(types, a, b)
    def key = Seq[Any](r.nextInt(30).toLong, ('a' + r.nextInt(4)).toChar.toString)
    var skipped = 0
    for (_ <- 0 until 500) {
      val run = (0 until 1 + r.nextInt(6)).map(_ => key)
      val (lower, upper) = (Option.when(r.nextBoolean())(key), Option.when(r.nextBoolean())(key))
      val firsts = run.map(_.head.asInstanceOf[Long])
      val mayHold = KeyBounds.runMayHold(KeyType.Int64, lower, upper, firsts.min, firsts.max)
      val holds = run.exists(k => lower.forall(cmp(k, _) >= 0) && upper.forall(cmp(k, _) < 0))
      if (holds) assert(mayHold, s"$run in [$lower, $upper)")
      if (!mayHold) skipped += 1
    }
    assert(skipped > 50, "runs clearly outside the bounds are skipped")
    assert(!KeyBounds.runMayHold(KeyType.Utf8, Some(Seq("m")), None, "a", "l"))
    assert(KeyBounds.runMayHold(KeyType.Utf8, Some(Seq("m")), Some(Seq("p")), "l", "m"))
  }

  test("key rules: a null key, then the first run of equal keys, are typed errors") {
    val order = new KeyOrder(IndexedSeq(KeyType.Int64, KeyType.Utf8), ArrayAccess)
    def check(rows: Array[Any]*): Unit = KeyRules.checkSorted(rows.toIndexedSeq, order, Seq("id", "name"), Some("MERGE"))(_.toSeq)
    check(Array[Any](1L, "a"), Array[Any](1L, "b"), Array[Any](2L, "a"))
    val nul = intercept[DataValidationException](check(Array[Any](1L, "a"), Array[Any](2L, null)))
    assert(nul.errorClass == ErrorClass.NullPrimaryKey && nul.getMessage.contains("MERGE would write a row"))
    val dup = intercept[DataValidationException](check(Array[Any](1L, "a"), Array[Any](2L, "b"), Array[Any](2L, "b"), Array[Any](2L, "b")))
    assert(dup.errorClass == ErrorClass.DuplicateKey && dup.getMessage.contains("3 rows the key (id=2, name=b)"), dup.getMessage)

    val asc = new KeyRules.Ascending[Array[Any]](order, _.clone())
    assert(asc.add(Array[Any](1L, "a")) && asc.add(Array[Any](1L, "b")) && asc.last.map(_.toSeq).contains(Seq(1L, "b")))
    assert(!asc.add(Array[Any](1L, "b")) && asc.last.isEmpty && !asc.add(Array[Any](9L, "z")))
    assert(!new KeyRules.Ascending[Array[Any]](order, identity).add(Array[Any](null, "a")))
  }

  test("change rule: delete, insert, update, or nothing; a delete hides its key") {
    val cases = for (before <- Seq(false, true); after <- Seq(false, true); same <- Seq(false, true))
      yield (before, after, same) -> ChangeRule.change(before, after, same)
    assert(cases.toMap == Map(
      (false, false, false) -> None, (false, false, true) -> None,
      (false, true, false) -> Some(ChangeKind.Insert), (false, true, true) -> Some(ChangeKind.Insert),
      (true, false, false) -> Some(ChangeKind.Delete), (true, false, true) -> Some(ChangeKind.Delete),
      (true, true, false) -> Some(ChangeKind.Update), (true, true, true) -> None))
    assert(ChangeRule.hides(ChangeKind.Delete) && Seq(ChangeKind.Insert, ChangeKind.Update, ChangeKind.Upsert).forall(ChangeRule.keeps))
  }

  test("three-way rule: a delete against a change conflicts; a cell conflicts only when both sides moved it apart") {
    for (od <- Seq(false, true); td <- Seq(false, true)) assert(ThreeWayRule.rowConflict(od, td) == (od != td))
    // bothInserted, base=ours, base=theirs, ours=theirs
    assert(!ThreeWayRule.cellConflict(false, true, false, false))  // only theirs changed it
    assert(!ThreeWayRule.cellConflict(false, false, true, false))  // only ours changed it
    assert(!ThreeWayRule.cellConflict(false, false, false, true))  // both changed it alike
    assert(ThreeWayRule.cellConflict(false, false, false, false))  // both changed it apart
    assert(ThreeWayRule.cellConflict(true, false, false, false))   // both inserted different values
    assert(!ThreeWayRule.cellConflict(true, false, false, true))   // both inserted the same value
    // a cell ours left at the base takes theirs; a conflict takes the strategy's side
    assert(ThreeWayRule.takesTheirs(conflict = false, baseIsOurs = true, strategyTheirs = false))
    assert(!ThreeWayRule.takesTheirs(conflict = false, baseIsOurs = false, strategyTheirs = true))
    assert(ThreeWayRule.takesTheirs(conflict = true, baseIsOurs = false, strategyTheirs = true))
    assert(!ThreeWayRule.takesTheirs(conflict = true, baseIsOurs = true, strategyTheirs = false))
  }

  test("compaction policy: the ratio, the chain limit and tiered consolidation, from object records alone") {
    import versioned.core.{Fragment, ObjectKind, ObjectMeta}
    def meta(id: String, kind: String, rows: Long, parents: Seq[String] = Nil) =
      ObjectMeta(id, kind, parents, rows, 0L, "parquet", Map.empty, Map.empty, Map.empty)
    val objs = Map(
      "s0" -> meta("s0", ObjectKind.Snap, 1000), "d0" -> meta("d0", ObjectKind.Diff, 10),
      "s1" -> meta("s1", ObjectKind.Snap, 1000), "d1" -> meta("d1", ObjectKind.Diff, 900), "d2" -> meta("d2", ObjectKind.Diff, 200),
      "s2" -> meta("s2", ObjectKind.Snap, 1000), "e1" -> meta("e1", ObjectKind.Diff, 1), "e2" -> meta("e2", ObjectKind.Diff, 1),
      "e3" -> meta("e3", ObjectKind.Diff, 1))
    val frags = Seq(Fragment(None, Seq("s0", "d0")), Fragment(Some(Seq(100L)), Seq("s1", "d1", "d2")),
      Fragment(Some(Seq(200L)), Seq("s2", "e1", "e2", "e3")))
    val limits = CompactionPolicy.Limits(maxDiffRatio = 1.0, maxChain = 10, consolidateAfter = 3, fragmentRows = 1000)
    val plan = CompactionPolicy.plan(frags, objs, None, limits)
    assert(plan.resnapshot == Set(1) && plan.runs == Map(2 -> Seq("e1", "e2", "e3")) && plan.splits.isEmpty)
    // a chain at the limit under the ratio: its DIFFs merged into one (fragment 2), not a new SNAP; fragment 1 is over
    // the ratio, and fragment 0's single DIFF cannot be merged into fewer: with a limit of 1 it gets a SNAP
    val atLimit = CompactionPolicy.plan(frags, objs, None, limits.copy(maxChain = 2))
    assert(atLimit.resnapshot == Set(1) && atLimit.runs == Map(2 -> Seq("e1", "e2", "e3")))
    assert(CompactionPolicy.plan(frags, objs, None, limits.copy(maxChain = 1)).resnapshot == Set(0, 1, 2))
    // the whole chain after the SNAP, consolidated DIFFs and commit DIFFs alike
    val tiers = objs ++ Seq("c1" -> meta("c1", ObjectKind.Diff, 2, Seq("a", "b")), "c2" -> meta("c2", ObjectKind.Diff, 2, Seq("c", "d")))
    val mixed = Seq(Fragment(None, Seq("s2", "c1", "c2", "e1", "e2")))
    assert(CompactionPolicy.plan(mixed, tiers, None, limits.copy(maxChain = 4)).runs == Map(0 -> Seq("c1", "c2", "e1", "e2")))
    assert(CompactionPolicy.plan(mixed, tiers, None, limits.copy(maxChain = 5)).runs.isEmpty)
    // a large consolidated DIFF first in the chain (at least the rows of all after it) is kept, and so is each next one
    // that is as large as the rest, at most the limit - 2 of them; a shared or a commit DIFF is merged whatever its size
    val large = tiers ++ Seq("c0" -> meta("c0", ObjectKind.Diff, 100, Seq("a", "b")),
      "h0" -> meta("h0", ObjectKind.Diff, 100, Seq("a", "b")).copy(shared = true), "k0" -> meta("k0", ObjectKind.Diff, 100))
    def chain(first: String) = Seq(Fragment(None, Seq("s2", first, "c1", "e1", "e2")))
    assert(CompactionPolicy.plan(chain("c0"), large, None, limits.copy(maxChain = 4)).runs == Map(0 -> Seq("e1", "e2")))
    assert(CompactionPolicy.plan(chain("c0"), large, None, limits.copy(maxChain = 3)).runs == Map(0 -> Seq("c1", "e1", "e2")))
    assert(CompactionPolicy.plan(chain("c0"), large, None, limits.copy(maxChain = 2)).runs ==
      Map(0 -> Seq("c0", "c1", "e1", "e2")))
    for (first <- Seq("h0", "k0"))
      assert(CompactionPolicy.plan(chain(first), large, None, limits.copy(maxChain = 4)).runs == Map(0 -> Seq(first, "c1", "e1", "e2")))
    // c1 (2 rows) is smaller than what follows it (e1, e2 and e3: 3 rows): merged with them
    val longer = Seq(Fragment(None, Seq("s2", "c0", "c1", "e1", "e2", "e3")))
    assert(CompactionPolicy.plan(longer, large, None, limits.copy(maxChain = 5)).runs == Map(0 -> Seq("c1", "e1", "e2", "e3")))
    assert(CompactionPolicy.plan(frags, objs, None, limits.copy(consolidateAfter = 4)).runs.isEmpty)
    // a shared DIFF of 1,500 rows listed by three fragments of 1,000 SNAP rows counts 500 rows in each: under the
    // ratio; the same rows in one object that is not shared would put every fragment over it
    val shared = objs ++ Seq("x" -> meta("x", ObjectKind.Diff, 1500).copy(shared = true), "y" -> meta("y", ObjectKind.Diff, 1500))
    def withLast(id: String) = Seq(Fragment(None, Seq("s0", id)), Fragment(Some(Seq(100L)), Seq("s1", id)),
      Fragment(Some(Seq(200L)), Seq("s2", id)))
    assert(CompactionPolicy.sharedWeights(withLast("x"), shared) == Map("x" -> 3000L))
    // shares follow the fragments' sizes: 3,000 rows over SNAPs of 1,000, 1,000 and 2,000 rows: 750, 750, 1,500
    val uneven = shared ++ Seq("s2" -> meta("s2", ObjectKind.Snap, 2000), "z" -> meta("z", ObjectKind.Diff, 3000).copy(shared = true))
    assert(withLast("z").map(f => CompactionPolicy.diffRatio(f, uneven, 0L, CompactionPolicy.sharedWeights(withLast("z"), uneven))) ==
      Seq(0.75, 0.75, 0.75))
    assert(CompactionPolicy.plan(withLast("x"), shared, None, limits).resnapshot.isEmpty)
    assert(CompactionPolicy.plan(withLast("y"), shared, None, limits).resnapshot == Set(0, 1, 2))
  }

  test("commit path: one-pass SNAP for new tables and new shapes, one-pass overwrite for the same shape, else staged") {
    import CommitPath._
    def req(mode: WriteMode = WriteMode.Append, upsert: Boolean = false, key: Boolean = true, delete: Boolean = false,
            expected: Boolean = false, tx: Boolean = false) = Request(mode, upsert, key, delete, expected, tx)
    val none = Target(exists = false, sameShape = false, keyed = false)
    val same = Target(exists = true, sameShape = true, keyed = true)
    val other = Target(exists = true, sameShape = false, keyed = true)
    assert(write(req(), none) == OnePassSnapshot)
    assert(write(req(key = false), none) == Staged)
    assert(write(req(), same) == Staged && write(req(), other) == Staged) // an append to a table reads it
    assert(write(req(WriteMode.Overwrite), other) == OnePassSnapshot)
    assert(write(req(WriteMode.Overwrite, key = false), same) == OnePassOverwrite)
    assert(write(req(WriteMode.Overwrite), same.copy(keyed = false)) == Staged)
    for (r <- Seq(req(delete = true), req(expected = true), req(tx = true), req(WriteMode.Changes))) {
      assert(!dependsOnTable(r) && write(r, none) == Staged)
      if (r.mode != WriteMode.Changes) assert(write(r.copy(mode = WriteMode.Overwrite), other) == Staged)
    }
    val local = Produced(localRows = true, overwriteDiffs = false, snapshotObjects = false)
    assert(step(req(upsert = true), same, local) == LocalAppend)
    assert(step(req(), same, local) == Distributed) // an insert whose keys the driver cannot check
    assert(step(req(), same, local.copy(keysCheckable = true)) == LocalAppend)
    assert(step(req(upsert = true), same.copy(keyed = false), local) == Distributed)
    assert(step(req(upsert = true), other, local) == Distributed)
    assert(step(req(WriteMode.Changes), same, local) == LocalChanges)
    assert(step(req(WriteMode.Changes), same, local.copy(localRows = false)) == ComputedChanges)
    assert(step(req(WriteMode.Overwrite), same, Produced(false, overwriteDiffs = true, false)) == TaskDiffs)
    assert(step(req(WriteMode.Overwrite), other, Produced(false, overwriteDiffs = true, false)) == Distributed)
    assert(step(req(), none, Produced(false, false, snapshotObjects = true)) == TaskSnapshot)
    assert(step(req(), same, Produced(false, false, false)) == Distributed)
    // rows on the driver that fit one fragment of a new SNAP (a transaction's first write of a table): the driver
    val fits = local.copy(oneFragment = true)
    assert(step(req(tx = true), none, fits) == LocalSnapshot && step(req(WriteMode.Overwrite, tx = true), other, fits) == LocalSnapshot)
    assert(step(req(tx = true), none, local) == Distributed) // more rows than a fragment holds
    assert(step(req(key = false, tx = true), none, fits) == Distributed) // key-less rows are numbered by a job
    assert(step(req(delete = true, tx = true), none, fits) == Distributed)
    assert(step(req(tx = true), other, fits) == Distributed && step(req(upsert = true, tx = true), same, fits) == LocalAppend)
    // a driver change set: one shared DIFF when it touches several fragments, is small and records no before-images
    assert(sharedDiff(rows = 1000, touched = 3, beforeImages = false, maxRows = 10000))
    assert(!sharedDiff(1000, touched = 1, beforeImages = false, 10000) && !sharedDiff(1000, 3, beforeImages = true, 10000))
    assert(!sharedDiff(10001, 3, beforeImages = false, 10000) && !sharedDiff(1, 3, beforeImages = false, maxRows = 0))
    // tasks' DIFFs span fragments up to maxRows rows; not with before-images, nor with sharing off
    assert(taskDiffSpan(beforeImages = false, 10000) == 10000 && taskDiffSpan(beforeImages = true, 10000) == 0)
    assert(taskDiffSpan(beforeImages = false, 0) == 0)
  }

  test("appends past the last key: a new last fragment only above every stored key, when the append and the last SNAP are big enough") {
    import versioned.core.{Fragment, ObjectKind, ObjectMeta}
    def meta(id: String, kind: String, rows: Long, max: Any) =
      ObjectMeta(id, kind, Nil, rows, 0L, "parquet", Map("id" -> 0L), Map("id" -> max), Map("id" -> 0L))
    val objs = Map("s0" -> meta("s0", ObjectKind.Snap, 1000, 99L), "s1" -> meta("s1", ObjectKind.Snap, 600, 180L),
      "d1" -> meta("d1", ObjectKind.Diff, 10, 250L), "e" -> meta("e", ObjectKind.Diff, 0, null),
      "small" -> meta("small", ObjectKind.Snap, 400, 180L), "nomax" -> meta("nomax", ObjectKind.Diff, 5, null))
    val frags = Seq(Fragment(None, Seq("s0")), Fragment(Some(Seq(100L)), Seq("s1", "d1", "e")))
    def applies(rows: Long, smallest: Any, fs: Seq[Fragment] = frags, target: Long = 1000) =
      TailFragment.applies(KeyType.Int64, "id", rows, smallest, fs, objs, target)
    assert(TailFragment.minRows(1000) == 500 && TailFragment.minRows(1) == 1)
    // above the largest key of every object of the last chain (the DIFF's 250; an empty object has no keys)
    assert(applies(500, 251L) && applies(5000, Long.MaxValue))
    assert(!applies(500, 250L) && !applies(500, 200L) && !applies(500, -5L)) // at or below a stored key
    assert(!applies(499, 251L)) // fewer rows than half the target
    assert(!applies(500, 251L, target = 1300)) // the last SNAP (600 rows) under half the target
    assert(!applies(500, null))
    assert(!applies(500, 251L, Seq(Fragment(None, Seq("s0")), Fragment(Some(Seq(100L)), Seq("small")))))
    assert(!applies(500, 251L, Seq(Fragment(None, Seq("s0")), Fragment(Some(Seq(100L)), Seq("s1", "nomax"))))) // no statistic
    assert(!applies(500, 251L, Seq(Fragment(None, Seq("d1"))))) // a chain that does not start with a SNAP
    assert(!applies(500, 251L, Nil))
    // the last fragment's lower bound counts even when its objects hold smaller keys
    assert(!applies(500, 251L, Seq(Fragment(None, Seq("s0")), Fragment(Some(Seq(300L)), Seq("s1")))))
    assert(applies(500, 301L, Seq(Fragment(None, Seq("s0")), Fragment(Some(Seq(300L)), Seq("s1")))))
    // one fragment, no lower bound; strings compare in the key order (UTF-8 bytes)
    val strs = Map("t" -> ObjectMeta("t", ObjectKind.Snap, Nil, 800, 0L, "parquet", Map("k" -> "a"), Map("k" -> "zz"), Map("k" -> 0L)))
    assert(TailFragment.applies(KeyType.Utf8, "k", 600, "\u00e9", Seq(Fragment(None, Seq("t"))), strs, 1000))
    assert(!TailFragment.applies(KeyType.Utf8, "k", 600, "zz", Seq(Fragment(None, Seq("t"))), strs, 1000))
    // the new fragment follows the others, bounded by the smallest appended key
    assert(TailFragment.appended(frags, Seq(251L, "x"), "s9") == frags :+ Fragment(Some(Seq(251L, "x")), Seq("s9")))
    // the result routes every key at or above the new bound to it, the others as before
    val router = FragmentRouter.of(TailFragment.appended(frags, Seq(251L), "s9").map(_.lower),
      new KeyOrder(IndexedSeq(KeyType.Int64), ArrayAccess))(vs => Array[Any](vs.head))
    assert(router(Array[Any](250L)) == 1 && router(Array[Any](251L)) == 2 && router(Array[Any](99L)) == 0)
  }

  test("carry forward: chains extending the ancestor's logical ones get its compacted chains, others stay") {
    import versioned.core.{Fragment, TableVersion}
    def version(fs: Seq[Fragment], compacted: Option[Seq[Fragment]] = None) =
      TableVersion("t", "{}", Seq("id"), hiddenKey = false, fs, compacted)
    val b = Seq(None, Some(Seq[Any](50)), Some(Seq[Any](100)))
    val ancestor = version(Seq(Fragment(b(0), Seq("s0", "d1", "d2")), Fragment(b(1), Seq("s1")), Fragment(b(2), Seq("s2", "d3"))),
      Some(Seq(Fragment(b(0), Seq("s0", "c12")), Fragment(b(1), Seq("s1")), Fragment(b(2), Seq("s2", "d3")))))
    // fragment 0 extends the logical chain: the compacted one plus the DIFFs since; 1 and 2 were not compacted
    val v = version(Seq(Fragment(b(0), Seq("s0", "d1", "d2", "d4")), Fragment(b(1), Seq("s1", "d4")), Fragment(b(2), Seq("s2", "d3"))))
    val c = CarryForward.carry(v, ancestor, divisible = false).get
    assert(c.divisions.isEmpty && c.fragments.map(_.objects) == Seq(Seq("s0", "c12", "d4"), Seq("s1", "d4"), Seq("s2", "d3")))
    // a chain that does not extend the ancestor's logical one (a re-snapshot since) keeps its own
    val resnap = v.copy(fragments = v.fragments.updated(0, Fragment(b(0), Seq("s9"))))
    assert(CarryForward.carry(resnap, ancestor, divisible = false).isEmpty, "nothing left to carry")
    // another shape (bounds, schema or key) or no compacted form: nothing is carried
    assert(CarryForward.carry(v.copy(schemaJson = "{\"x\":1}"), ancestor, divisible = false).isEmpty)
    assert(CarryForward.carry(v.copy(primaryKey = Seq("k")), ancestor, divisible = false).isEmpty)
    assert(CarryForward.carry(v, ancestor.copy(compacted = None), divisible = false).isEmpty)
    assert(CarryForward.carry(v.copy(fragments = v.fragments.take(2)), ancestor, divisible = false).isEmpty)
    // planned on the ancestor's compacted chains, or before they were recorded (on its logical chains or an older form)
    assert(!CarryForward.buildsOn(v, ancestor), "planned on the logical chains")
    val onCompacted = v.copy(fragments = v.fragments.updated(0, Fragment(b(0), Seq("s0", "c12", "d4"))))
    assert(CarryForward.buildsOn(onCompacted, ancestor) && CarryForward.carry(onCompacted, ancestor, divisible = false).isEmpty)
    val onOlder = v.copy(fragments = v.fragments.updated(0, Fragment(b(0), Seq("s0", "c1", "d2", "d4"))))
    assert(!CarryForward.buildsOn(onOlder, ancestor) && CarryForward.carry(onOlder, ancestor, divisible = false).isEmpty)
    assert(CarryForward.buildsOn(onOlder, ancestor.copy(compacted = None)), "nothing to build on")
  }

  test("carry forward: a fragment the ancestor's compaction split is divided by a compaction, kept by a commit") {
    import versioned.core.{Fragment, TableVersion}
    def version(fs: Seq[Fragment], compacted: Option[Seq[Fragment]] = None) =
      TableVersion("t", "{}", Seq("id"), hiddenKey = false, fs, compacted)
    val ancestor = version(Seq(Fragment(None, Seq("s0")), Fragment(Some(Seq(50)), Seq("s1", "d1"))),
      Some(Seq(Fragment(None, Seq("s0")), Fragment(Some(Seq(50)), Seq("t1")), Fragment(Some(Seq(75)), Seq("t2")))))
    val noMore = version(Seq(Fragment(None, Seq("s0", "d2")), Fragment(Some(Seq(50)), Seq("s1", "d1"))))
    val more = version(Seq(Fragment(None, Seq("s0", "d2")), Fragment(Some(Seq(50)), Seq("s1", "d1", "d2"))))
    val split = CarryForward.carry(more, ancestor, divisible = true).get
    assert(split.fragments.map(_.objects) == Seq(Seq("s0", "d2"), Seq("t1"), Seq("t2")))
    assert(split.divisions == Seq(CarryForward.Division(1, 2, Seq("d2"))), "d2 is divided at 75 into the split fragments")
    assert(CarryForward.carry(noMore, ancestor, divisible = true).get.divisions.isEmpty)
    // a commit never divides: the split fragment keeps its own chain (and the table its bounds)
    assert(CarryForward.carry(more, ancestor, divisible = false).isEmpty)
    assert(CarryForward.carry(noMore, ancestor, divisible = false).isEmpty)
  }
}
