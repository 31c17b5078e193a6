package versioned.spark.read

import org.apache.spark.sql.sources._
import org.apache.spark.sql.types.{LongType, StructField}
import org.scalatest.funsuite.AnyFunSuite

/**
 * The filter a key lookup pushes down to Parquet: it must select exactly the looked-up keys (Parquet may
 * then only skip what it excludes), and a file whose key range holds few of them must be able to
 * evaluate it without visiting every leaf (Parquet's page index costs a pass over a file's pages per leaf).
 */
class KeyLookupFilterSuite extends AnyFunSuite {
  private val field = StructField("id", LongType, nullable = false)

  /** A filter evaluated on one key value. */
  private def eval(f: Filter, v: Long): Boolean = f match {
    case EqualTo(_, x: Long) => v == x
    case GreaterThanOrEqual(_, x: Long) => v >= x
    case LessThanOrEqual(_, x: Long) => v <= x
    case And(l, r) => eval(l, v) && eval(r, v)
    case Or(l, r) => eval(l, v) || eval(r, v)
    case other => fail(s"unexpected filter $other")
  }

  /**
   * Leaves visited when every value of [lo, hi] (a file's key range) is checked the way Parquet's page
   * index checks a predicate: an AND whose left side selects nothing in the range skips its right side.
   */
  private def visited(f: Filter, lo: Long, hi: Long): Int = f match {
    case And(l, r) =>
      val left = visited(l, lo, hi)
      if ((lo to hi).exists(eval(l, _))) left + visited(r, lo, hi) else left
    case Or(l, r) => visited(l, lo, hi) + visited(r, lo, hi)
    case _ => 1
  }

  private def leaves(f: Filter): Int = f match {
    case And(l, r) => leaves(l) + leaves(r)
    case Or(l, r) => leaves(l) + leaves(r)
    case _ => 1
  }

  test("the pushed filter selects exactly the looked-up keys, whatever their number and clustering") {
    val rnd = new scala.util.Random(7)
    for (n <- Seq(1, 2, 15, 16, 17, 100, 257, 1000, 5000)) {
      val keys = Seq.fill(n)(rnd.nextInt(100000).toLong) ++ (if (n > 10) (500L until 520L) else Nil)
      val f = KeyLookup.of(field, keys).filter.get
      val set = keys.toSet
      (0L until 100000L by 7).foreach(v => assert(eval(f, v) == set(v), s"n=$n v=$v"))
      keys.foreach(v => assert(eval(f, v), s"n=$n key $v not selected"))
    }
    assert(KeyLookup.of(field, Nil).filter.isEmpty)
    // beyond MaxKeys runs only the overall range is pushed: no longer exact
    val many = KeyLookup.of(field, (0L until (KeyLookup.MaxKeys + 1).toLong).map(_ * 2))
    assert(!many.filterIsExact && many.filter.contains(And(GreaterThanOrEqual("id", 0L), LessThanOrEqual("id", KeyLookup.MaxKeys * 2L))))
    assert(KeyLookup.of(field, (0L until 50000L)).filterIsExact, "consecutive keys are one run")
  }

  test("a file holding few of many scattered keys visits few leaves of the filter") {
    val rnd = new scala.util.Random(11)
    val keys = Seq.fill(2000)(rnd.nextInt(10000000).toLong)
    val f = KeyLookup.of(field, keys).filter.get
    assert(leaves(f) > 2000)
    // a file of 125,000 consecutive keys holds about 25 of them
    val (lo, hi) = (5000000L, 5000000L + 125000L)
    val inFile = keys.count(k => k >= lo && k <= hi)
    val v = visited(f, lo, hi)
    assert(v < 10 * math.max(inFile, 1) + 100, s"visited $v leaves for $inFile keys in the file")
  }

  test("isKeySet: only filters that are exactly a set of first-key values, which the lookup then implies") {
    val layout = versioned.spark.format.TableLayout(
      org.apache.spark.sql.types.StructType(Seq(field, StructField("v", LongType))), Seq("id"), hidden = false)
    val exact = Seq(EqualTo("id", 1L), EqualNullSafe("id", 2L), In("id", Array(1L, 2L, 3L)),
      Or(EqualTo("id", 1L), In("id", Array(5L, 6L))), And(In("id", Array(1L, 2L)), In("id", Array(2L, 3L))))
    exact.foreach(f => assert(KeyLookup.isKeySet(layout, f), f))
    // a lookup is derived from these too, but they say more than the key set (or nothing of it)
    val other = Seq(And(In("id", Array(1L, 2L)), EqualTo("v", 3L)), Or(EqualTo("id", 1L), EqualTo("v", 3L)),
      EqualTo("v", 1L), In("v", Array(1L)), GreaterThan("id", 3L), EqualTo("id", "not a number"), IsNotNull("id"))
    other.foreach(f => assert(!KeyLookup.isKeySet(layout, f), f))
    assert(KeyLookup.fromFilters(layout, Seq(other.head)).map(_.values) == Some(IndexedSeq(1L, 2L)))
    val keyless = layout.copy(primaryKey = Nil, hidden = true)
    assert(!KeyLookup.isKeySet(keyless, EqualTo("id", 1L)))
  }

  test("count: the looked-up values in a key range, against a scan of the values") {
    val rnd = new scala.util.Random(7)
    val values = (0 until 300).map(_ => rnd.nextInt(10000).toLong).distinct.sorted
    val l = KeyLookup.of(field, values)
    for (_ <- 0 until 500) {
      val lo = Option.when(rnd.nextInt(5) > 0)(rnd.nextInt(10000).toLong)
      val hi = Option.when(rnd.nextInt(5) > 0)(rnd.nextInt(10000).toLong)
      val expected = values.count(v => lo.forall(v >= _) && hi.forall(v <= _))
      assert(l.count(lo, hi) == expected, s"[$lo, $hi]")
      assert(l.mayHold(lo, hi) == (expected > 0), s"[$lo, $hi]")
    }
    assert(l.count(Some(values.head), Some(values.head)) == 1)
  }

  test("fragments are packed into tasks by the bytes a lookup reads of them") {
    val f = ObjectFile("file:/x", 100L << 20, 1000000L, "x", "")
    assert(FragmentPartition(0, Some(f), Nil).readBytes == (100L << 20))
    assert(FragmentPartition(0, Some(f), Nil, readShare = 0.1).readBytes == (10L << 20))
    // ten 100 MB fragments: four tasks for a full scan, two for a lookup reading a tenth of each (on 2 cores)
    val MB = 1L << 20
    assert(VersionedScan.groups(Seq.fill(10)(100 * MB), 128 * MB, 4 * MB, 2).size == 10)
    assert(VersionedScan.groups(Seq.fill(10)(10 * MB), 128 * MB, 4 * MB, 2).size == 2)
  }
}
