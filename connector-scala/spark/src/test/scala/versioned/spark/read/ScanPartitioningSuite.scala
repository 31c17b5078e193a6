package versioned.spark.read

import org.scalatest.funsuite.AnyFunSuite

class ScanPartitioningSuite extends AnyFunSuite {
  private val MB = 1L << 20
  private def sizes(gs: Seq[Range]) = gs.map(_.size)

  test("small fragments share tasks: one group per core") {
    val gs = VersionedScan.groups(Seq.fill(10)(3 * MB), 128 * MB, 4 * MB, 2)
    assert(sizes(gs) == Seq(5, 5))
    assert(gs.flatten == (0 until 10))
  }

  test("large fragments: a multiple of the parallelism, consecutive and balanced, never split") {
    assert(sizes(VersionedScan.groups(Seq.fill(10)(32 * MB), 128 * MB, 4 * MB, 2)) == Seq(2, 3, 2, 3))
    assert(sizes(VersionedScan.groups(Seq.fill(10)(500 * MB), 128 * MB, 4 * MB, 2)) == Seq.fill(10)(1))
    val skewed = VersionedScan.groups(Seq(400 * MB, MB, MB, MB, 400 * MB), 128 * MB, 4 * MB, 2)
    assert(skewed.flatten == (0 until 5))
    assert(skewed.forall(r => r == (r.head to r.last)))
  }

  test("edge cases") {
    assert(VersionedScan.groups(Nil, 128 * MB, 4 * MB, 2).isEmpty)
    assert(VersionedScan.groups(Seq(0L), 128 * MB, 4 * MB, 2) == Seq(0 until 1))
    assert(sizes(VersionedScan.groups(Seq(0L, 0L, 0L), 128 * MB, 0L, 2)) == Seq(3))
    assert(sizes(VersionedScan.groups(Seq.fill(3)(MB), 128 * MB, 4 * MB, 8)) == Seq(1, 1, 1))
  }
}
