package versioned.spark.merge

import org.apache.spark.sql.Row
import versioned.core.{ErrorClass, Revision}
import versioned.spark.api.VersionedApi
import versioned.spark.catalog.CatalogSuiteBase

/**
 * Squash merges (docs/MERGE.md, "Squash"): one commit with one parent holding the source's net change, its message
 * listing the squashed commits; conflicts returned as a merge's with nothing committed; a branch whose rule requires
 * merge commits refuses a squash. Through the Scala API and SQL; on PostgreSQL too (VERSIONED_TEST_METASTORE).
 */
class SquashMergeSuite extends CatalogSuiteBase {
  private def main: String = engine.defaultBranch("r")
  private def head(b: String) = engine.branchHeadOption("r", b).get
  private def squash(source: String, strategy: String = "fail", ff: String = null, dryRun: Boolean = false) =
    VersionedApi.merge(spark, null, "r", source, main, strategy, ff, dryRun, null, "tester", null, false, true)
  private def ids(ref: String): Set[(Int, String)] =
    sql(s"SELECT id, v FROM c.r.`t@$ref`").collect().map(r => (r.getInt(0), r.getString(1))).toSet

  test("a squash is one commit with one parent, the source's net change, and lists the squashed commits") {
    keyedTable(1 -> "a", 2 -> "b", 3 -> "c")
    sql("CALL c.system.create_branch('r', 'dev')")
    sql("INSERT INTO c.r.`t@dev` VALUES (4, 'd')")
    sql("UPDATE c.r.`t@dev` SET v = 'bb' WHERE id = 2")
    sql("DELETE FROM c.r.`t@dev` WHERE id = 4") // net: only the update of 2 remains
    sql("DELETE FROM c.r.`t@dev` WHERE id = 3")
    sql(s"INSERT INTO c.r.`t@$main` VALUES (5, 'e')")
    val devCommits = engine.history.log("r", Revision.Spec("dev"), 4)
    val before = head(main)
    val out = squash("dev")
    assert(out.status == MergeOutcome.Merged && !out.fastForward)
    val h = head(main)
    assert(out.commit == h.hash && h.parents == Seq(before.hash), "one parent: the target's head")
    assert(ids(main) == Set(1 -> "a", 2 -> "bb", 5 -> "e"))
    assert(h.message.startsWith("squash merge dev into " + main) && h.message.contains("Squashed 4 commits"))
    devCommits.foreach(e => assert(h.message.contains(e.image.shortHash + " " + e.image.message.linesIterator.next()),
      s"the message lists ${e.image.shortHash}: ${h.message}"))
    assert(ids("dev") == Set(1 -> "a", 2 -> "bb"), "the source is unchanged")
    // squashing again changes nothing (the net change is already there)
    assert(squash("dev").status == MergeOutcome.UpToDate || head(main).hash == h.hash)
  }

  test("a squash of a fast-forwardable source is still one new commit; SQL's squash argument; a message") {
    keyedTable(1 -> "a")
    sql("CALL c.system.create_branch('r', 'dev')")
    sql("INSERT INTO c.r.`t@dev` VALUES (2, 'b')")
    sql("INSERT INTO c.r.`t@dev` VALUES (3, 'c')")
    val before = head(main)
    val row = sql(s"CALL c.system.merge(repository => 'r', source => 'dev', squash => true, message => 'feature x')").head()
    assert(row.getString(0) == "merged" && !row.getBoolean(2))
    val h = head(main)
    assert(h.parents == Seq(before.hash) && h.hash != head("dev").hash)
    assert(h.message.startsWith("feature x\n") && h.message.contains("Squashed 2 commits"))
    assert(ids(main) == ids("dev"))
    expectError(ErrorClass.InvalidOption, "squash")(failsWithoutCommit("r", main)(
      sql("CALL c.system.merge(repository => 'r', source => 'dev', squash => true, fast_forward => 'only')")))
  }

  test("a squash with conflicts returns them as a merge does and commits nothing; a strategy settles them") {
    keyedTable(1 -> "a", 2 -> "b")
    sql("CALL c.system.create_branch('r', 'dev')")
    sql("UPDATE c.r.`t@dev` SET v = 'dev' WHERE id = 1")
    sql(s"UPDATE c.r.`t@$main` SET v = 'main' WHERE id = 1")
    val before = head(main)
    val plain = VersionedApi.merge(spark, null, "r", "dev", main, "fail", null, true, null, "tester", null, false)
    val out = squash("dev")
    assert(out.status == MergeOutcome.Conflicts && out.commit == null && out.conflictCount == 1)
    assert(out.conflicts.collect().toSeq == plain.conflicts.collect().toSeq, "the same conflicts as a merge")
    assert(head(main) == before, "nothing committed")
    val settled = squash("dev", strategy = "theirs")
    assert(settled.status == MergeOutcome.Merged && head(main).parents == Seq(before.hash))
    assert(ids(main) == Set(1 -> "dev", 2 -> "b"))
  }

  test("a squash into a branch whose rule requires merge commits is refused with PROTECTED_REF; allowed otherwise") {
    keyedTable(1 -> "a")
    sql("CALL c.system.create_branch('r', 'dev')")
    sql("INSERT INTO c.r.`t@dev` VALUES (2, 'b')")
    sql(s"CALL c.system.protect_branch(repository => 'r', pattern => '$main')")
    expectError(ErrorClass.ProtectedRef, "require_merge", "Nothing was committed")(failsWithoutCommit("r", main)(squash("dev")))
    expectError(ErrorClass.ProtectedRef)(failsWithoutCommit("r", main)(
      sql("CALL c.system.merge(repository => 'r', source => 'dev', squash => true)")))
    sql(s"CALL c.system.protect_branch(repository => 'r', pattern => '$main', require_merge => false)")
    val before = head(main)
    assert(squash("dev").status == MergeOutcome.Merged && head(main).parents == Seq(before.hash))
    assert(ids(main).map(_._1) == Set(1, 2))
  }

  test("a dry-run squash reports without committing") {
    keyedTable(1 -> "a")
    sql("CALL c.system.create_branch('r', 'dev')")
    sql("INSERT INTO c.r.`t@dev` VALUES (2, 'b')")
    val before = head(main)
    val out = squash("dev", dryRun = true)
    assert(out.status == MergeOutcome.Merged && out.commit == null && head(main) == before)
  }
}
