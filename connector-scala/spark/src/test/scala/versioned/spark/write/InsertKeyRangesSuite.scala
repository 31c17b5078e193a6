package versioned.spark
package write

import versioned.spark.session.VersionedOptions

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types._
import versioned.core.{ErrorClass, Revision}

/**
 * An insert (an append without upsert) checks that none of its keys is in the table. Keys outside the key range of
 * every object of the table (from the metastore's statistics) are new without a lookup, so a large insert of
 * ascending ids commits on the driver; keys inside a range are looked up (KEY_EXISTS when stored), and an insert
 * with more than 10,000 such keys is planned with Spark jobs. Every case is compared with the distributed path
 * (`localCommitMaxRows` 0): the same table, or the same error with nothing committed.
 *
 * Both paths write one DIFF per fragment here (`sharedDiffMaxRows` = 0, `tailFragments` = false), so that they make the same table version:
 * the driver's shared DIFF (`SharedDiffSuite`) holds the same rows in another form.
 *
 * Fragments of 5,000 rows (not the test base's 50): the tables have tens of thousands of keys, because the
 * thresholds are counts of keys, while the number of fragments is not what is tested (a few fragments give the
 * objects several key ranges, gaps between them and ends to hit); at 50 rows, the background compactions of
 * their hundreds of fragments took most of the suite's time.
 */
class InsertKeyRangesSuite extends VersionedTestBase {
  override protected def extraConf: Map[String, String] =
    super.extraConf ++ Map(versioned.spark.session.Setting.SharedDiffMaxRows.key -> "0",
      versioned.spark.session.Setting.TailFragments.key -> "false", versioned.spark.session.Setting.FragmentRows.key -> "5000")
  private val schema = new StructType().add("id", IntegerType).add("v", StringType)
  private val Distributed = VersionedOptions.ConfLocalCommitMaxRows -> "0"

  private def data(ids: Seq[Int], parts: Int = 2): DataFrame = frame(schema, ids.map(i => Row(i, s"v$i")), parts)

  /** Table `r.t` with keys `ids` (two commits, so its objects have several ranges), and branch `dist` at its head. */
  private def setup(ids: Seq[Int]): Unit = {
    val (a, b) = ids.splitAt(ids.size / 2)
    write(data(a), "r.t", "primaryKey" -> "id")
    write(data(b), "r.t", "upsert" -> "true")
    engine.refs.createBranch("r", "dist", Revision.Spec(engine.defaultBranch("r")))
  }

  /**
   * Inserts `ids` on the default branch with the default settings and on branch `dist` by the distributed path:
   * the same table results; the number of Spark jobs of the default branch's insert.
   */
  private def insertBoth(ids: Seq[Int], expected: Seq[Int]): Int = {
    val jobs = jobsOf(write(data(ids), "r.t"))
    withConf(Distributed)(write(data(ids), "r.t", "branch" -> "dist"))
    val main = engine.defaultBranch("r")
    assertReads(read("r.t"), expected.map(i => Row(i, s"v$i")), "after the insert")
    val (h, d) = (engine.branchHeadOption("r", main).get, engine.branchHeadOption("r", "dist").get)
    assert(engine.table("r", h, "t").hash == engine.table("r", d, "t").hash, "both paths make the same table")
    jobs
  }

  /** The insert of `ids` fails with KEY_EXISTS naming `key` on both paths, committing nothing. */
  private def keyExists(ids: Seq[Int], key: Int): Unit = {
    val before = repoState("r", "t")
    val fast = expectError(ErrorClass.KeyExists, s"id=$key", "Nothing was committed")(write(data(ids), "r.t")).getMessage
    val dist = withConf(Distributed)(expectError(ErrorClass.KeyExists, s"id=$key")(write(data(ids), "r.t")).getMessage)
    assert(fast == dist)
    assert(repoState("r", "t") == before, "the refused insert changed the repository")
    assert(stagedWrites.isEmpty, s"staging leftovers: $stagedWrites")
  }

  test("an insert of 20,000 keys above the table's range commits on the driver, as the distributed path would") {
    setup(1 to 20000)
    assert(insertBoth(20001 to 40000, 1 to 40000) == 1, "no Spark job besides the write's own")
    // and again above the DIFF the first insert wrote
    assert(insertBoth(40001 to 60000, 1 to 60000) == 1)
  }

  test("a stored key among 20,000 inserted ones is KEY_EXISTS: at either end of a range, or inside one") {
    setup(1 to 20000)
    for (stored <- Seq(20000, 1, 10000, 10001, 7777)) keyExists((20001 to 39999) :+ stored, stored)
    // keys below the table's range are new without a lookup, a stored one among them is not
    keyExists((-19999 to 0) :+ 20000, 20000)
    assert(insertBoth(-19999 to 0, -19999 to 20000) == 1)
  }

  test("keys inside a range that are not stored (a gap, a deleted key) are looked up and commit, in several fragments") {
    withConf("spark.versioned.fragment.targetRows" -> "5000") {
      setup(0 to 40000 by 2)
      // 5,000 odd keys inside the ranges of several fragments (looked up), 15,000 above them
      val odd = 1 to 10000 by 2
      assert(insertBoth(odd ++ (40001 to 55000), (0 to 40000 by 2) ++ odd ++ (40001 to 55000)) == 1)
      keyExists((60001 to 80000) :+ 3, 3)
      keyExists((60001 to 80000) :+ 30000, 30000)
      // a deleted key stays inside the range of the object that held it, and may be inserted again
      val marked = new StructType().add("id", IntegerType).add("v", StringType).add("del", BooleanType)
      write(frame(marked, Seq(Row(20000, null, true))), "r.t", "upsert" -> "true", "deleteColumn" -> "del")
      assert(read("r.t").filter("id = 20000").count() == 0)
      write(data((60001 to 80000) :+ 20000), "r.t")
      assertReads(read("r.t").filter("id = 20000 or id = 80000"), Seq(Row(20000, "v20000"), Row(80000, "v80000")), "re-inserted")
      assert(logSize("r", engine.defaultBranch("r")) == 5)
    }
  }

  test("more than 10,000 keys inside the ranges: planned with Spark jobs, same table and same KEY_EXISTS") {
    setup(0 to 40000 by 2)
    val odd = 1 to 24001 by 2 // 12,001 keys, all but the few in gaps between fragments need a lookup
    keyExists(odd :+ 24000, 24000)
    assert(insertBoth(odd, (0 to 40000 by 2) ++ odd) > 1, "distributed: more than the write's job")
  }
}
