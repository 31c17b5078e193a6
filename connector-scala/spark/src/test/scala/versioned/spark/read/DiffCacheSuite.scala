package versioned.spark.read

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import versioned.spark.VersionedTestBase
import versioned.spark.session.VersionedOptions

/**
 * The executor's cache of conflated DIFF chains ([[DiffCache]]) against an oracle: scans with key filters
 * (whose Parquet reads skip DIFF pages) never leave a partial chain for later scans, and a chain that extends
 * a cached one (the next commit) is conflated from the cached rows plus its new DIFFs. DIFFs here span many
 * Parquet pages (2,000 rows each) of one fragment.
 */
class DiffCacheSuite extends VersionedTestBase {
  // one fragment for the 10,000 rows; compaction as by default (a compacted chain is a new cache key)
  override protected def extraConf: Map[String, String] = Map(VersionedOptions.ConfFragmentRows -> "100000")

  private val schema = new StructType().add("id", LongType).add("v", IntegerType)
  private def rows(ids: Seq[Long], v: Int): Seq[Row] = ids.map(i => Row(i, v))

  test("a key-filtered scan does not cache a partial chain; extended chains read right; every scan equals the oracle") {
    DiffCache.clear()
    val n = 10000L
    var cur = rows(0L until n, 0).map(r => r.getLong(0) -> r).toMap
    write(frame(schema, cur.values.toSeq, partitions = 1), "r.t", "primaryKey" -> "id")
    for (v <- 1 to 3) {
      // every third key changes (pages of every DIFF hold the whole key range), some are deleted
      val ids = (0L until n).filter(_ % 3 == v % 3)
      val gone = ids.filter(_ % 7 == 0).toSet
      val df = spark.createDataFrame(spark.sparkContext.parallelize(ids.map(i => Row(i, v, gone(i))), 1),
        schema.add("gone", BooleanType))
      append(df, "r.t", "deleteColumn" -> "gone")
      cur = cur -- gone ++ ids.filterNot(gone).map(i => i -> Row(i, v))
      // a narrow key range first (its DIFF reads skip pages), then a full scan and another range
      assertReads(read("r.t").where("id < 100"), cur.values.filter(_.getLong(0) < 100).toSeq, s"commit $v: id < 100")
      assertReads(read("r.t"), cur.values.toSeq, s"commit $v: full scan after a filtered one")
      assertReads(read("r.t").where("id >= 9000"), cur.values.filter(_.getLong(0) >= 9000).toSeq, s"commit $v: id >= 9000")
      assertReads(read("r.t"), cur.values.toSeq, s"commit $v: full scan again (cached)")
    }
    DiffCache.clear()
    assertReads(read("r.t"), cur.values.toSeq, "cold full scan")
  }

  test("an overlay built from a cached prefix replaces it; other chains stay until the budget is full") {
    DiffCache.clear()
    def overlay = Overlay(Array.empty[org.apache.spark.sql.catalyst.InternalRow], Seq(LongType), 1)
    var loads = Vector.empty[(Seq[String], Option[Int])]
    def get(objects: String*): Overlay = DiffCache.getOrLoad(DiffCache.Key(objects, "l"), 1L << 20) { prefix =>
      loads :+= (objects -> prefix.map(_._2)); overlay
    }
    get("a"); get("x")
    get("a", "b")
    get("a", "b", "c")
    assert(loads == Vector(Seq("a") -> None, Seq("x") -> None, Seq("a", "b") -> Some(1), Seq("a", "b", "c") -> Some(2)))
    get("a", "b", "c"); get("x")
    assert(loads.length == 4, "the head chain and an unrelated chain stay cached")
    get("a", "b")
    assert(loads.last == (Seq("a", "b") -> None), "a superseded prefix was dropped: rebuilt from its DIFFs alone")
    DiffCache.clear()
  }

  test("repeated scans of more chains than fit keep hitting the chains cached first; idle chains make room") {
    DiffCache.clear()
    val one = Overlay(Array.empty[org.apache.spark.sql.catalyst.InternalRow], Seq(LongType), 1).estimatedBytes max 1L
    val budget = 4 * one // room for 4 chains (each at most half the budget)
    var loads = Vector.empty[String]
    def get(c: String): Unit = DiffCache.getOrLoad(DiffCache.Key(Seq(c), "l"), budget) { _ =>
      loads :+= c; Overlay(Array.empty[org.apache.spark.sql.catalyst.InternalRow], Seq(LongType), 1)
    }
    val chains = (1 to 6).map(i => s"c$i")
    chains.foreach(get)
    assert(loads == chains)
    chains.foreach(get) // least recently used eviction would load all 6 again
    assert(loads.drop(6) == Seq("c5", "c6"), "the first 4 chains stay cached for the next scan")
    val saved = DiffCache.idleNanos
    try {
      DiffCache.idleNanos = 0L // every cached chain counts as idle: the new ones displace the least recently used
      get("c7"); get("c1")
      assert(loads.takeRight(2) == Seq("c7", "c1"), "c7 displaced c1 (the least recently used), so c1 is loaded again")
    } finally DiffCache.idleNanos = saved
    DiffCache.clear()
  }
}
