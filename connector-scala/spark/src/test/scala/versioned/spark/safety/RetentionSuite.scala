package versioned.spark.safety

import org.apache.spark.sql.Row
import versioned.core.{ErrorClass, Revision, Sql}
import versioned.spark.catalog.CatalogSuiteBase

/**
 * Retention policies by ref through SQL and the engine (docs/SAFETY.md, "Retention policies"): what gc expires and
 * why, what it never expires (heads, tags, locks, merge bases, anything younger than its retention period, branches no
 * policy covers), the typed error of a read of an expired version, stale branches, bad input. Runs on PostgreSQL too
 * (VERSIONED_TEST_METASTORE).
 */
class RetentionSuite extends CatalogSuiteBase {
  private def main: String = engine.defaultBranch("r")
  private def gc(dryRun: Boolean = false, olderThan: String = "0"): Seq[Row] =
    sql(s"CALL c.system.gc(repository => 'r', older_than_seconds => $olderThan, force => true, dry_run => $dryRun)")
      .collect().toSeq
  private def hash(spec: String): String = engine.resolve("r", Revision.Spec(spec)).hash
  private def ids(ref: String): Set[Int] = sql(s"SELECT id FROM c.r.`t@$ref`").collect().map(_.getInt(0)).toSet
  private def policies: Seq[Row] = sql("CALL c.system.retention(repository => 'r')").collect().toSeq

  /** `r.t` on the default branch, and branch `feature/x` with `n` more commits (key 100 + i each). */
  private def featureBranch(n: Int): Seq[String] = {
    keyedTable(1 -> "a", 2 -> "b")
    sql("CALL c.system.create_branch('r', 'feature/x')")
    (1 to n).map { i => sql(s"INSERT INTO c.r.`t@feature/x` VALUES (${100 + i}, 'f$i')"); hash("feature/x") }
  }

  /** Moves the commit times of `images` (and the refs created at them) `days` into the past: the test's clock. */
  private def age(images: Seq[String], days: Int): Unit = engine.metastore.tx { c =>
    val ms = days * 24L * 3600 * 1000
    images.foreach { h =>
      Sql.update(c, "UPDATE vc_images SET created_ms = created_ms - ? WHERE repo = 'r' AND hash = ?", ms, h)
      Sql.update(c, "UPDATE vc_refs SET created_ms = created_ms - ? WHERE repo = 'r' AND image_hash = ?", ms, h)
    }
  }

  test("keep_commits: gc expires the older commits of the branch's own line; reads of them are VERSION_EXPIRED") {
    val commits = featureBranch(3)
    // a key-less table rewritten whole: its first version's objects are used by expired versions only
    val s = spark; import s.implicits._
    overwrite((1 to 20).map(i => (i, s"old$i")).toDF("n", "v"), "r.s", "branch" -> "feature/x")
    val all = commits :+ hash("feature/x")
    overwrite((1 to 20).map(i => (i, s"new$i")).toDF("n", "v"), "r.s", "branch" -> "feature/x")
    val head = hash("feature/x")
    val mainBefore = engine.history.log("r", Revision.DefaultBranch).map(_.image.hash)
    sql("CALL c.system.set_retention(repository => 'r', pattern => 'feature/*', keep_commits => 1)")
    assert(policies == Seq(Row("feature/*", null, 1, null)))
    val planned = gc(dryRun = true)
    val images = planned.filter(_.getString(0) == "image")
    assert(images.map(_.getString(1)).toSet == all.map(h => s"r@$h").toSet, planned.mkString("\n"))
    assert(images.forall(_.getString(3).contains("retention policy 'feature/*' (keep_commits=1)")))
    val objects = planned.filter(_.getString(0) == "object")
    assert(objects.nonEmpty && objects.forall(_.getString(3).startsWith("only expired versions used it")), planned.mkString("\n"))
    assert(objects.forall(o => engine.store.objectExists(o.getString(1))) && ids("feature/x~2") == Set(1, 2, 101, 102, 103),
      "a dry run changes nothing")
    val done = gc()
    assert(done.map(r => (r.getString(0), r.getString(1))).toSet == planned.map(r => (r.getString(0), r.getString(1))).toSet)
    assert(objects.forall(o => !engine.store.objectExists(o.getString(1))), "the expired versions' objects are collected")
    assert(ids("feature/x") == Set(1, 2, 101, 102, 103))
    assert(sql("SELECT v FROM c.r.`s@feature/x`").collect().map(_.getString(0)).toSet == (1 to 20).map(i => s"new$i").toSet)
    Seq("feature/x~1", "feature/x~3", commits.head).foreach { spec =>
      // never an empty or partial version: the typed error naming the policy
      expectError(ErrorClass.VersionExpired, "retention policy 'feature/*'", "keep_commits=1")(
        intercept[Throwable](sql(s"SELECT * FROM c.r.`t@$spec`").collect()))
    }
    // the commits stay in the log; the default branch (no policy) keeps its whole history
    assert(engine.history.log("r", Revision.Spec("feature/x")).map(_.image.hash).take(5) == head +: all.reverse)
    assert(engine.history.log("r", Revision.DefaultBranch).map(_.image.hash) == mainBefore)
    mainBefore.foreach(h => engine.tables("r", h)) // not expired
    // nothing more to do; a branch from an expired version is refused and creates nothing
    assert(gc().isEmpty)
    expectError(ErrorClass.VersionExpired)(intercept[Throwable](
      sql(s"CALL c.system.create_branch('r', 'old', '${commits.head}')")))
    assert(!engine.refs.all("r").exists(_.shortName == "old"))
  }

  test("tags, locks and the merge base with the default branch pin their image; the horizon is the floor") {
    val commits = featureBranch(6)
    sql(s"CALL c.system.create_tag('r', 'v1', '${commits(1)}')")
    sql(s"CALL c.system.create_lock(repository => 'r', namespace => 'ns', name => 'l', ref => '${commits(3)}')")
    sql(s"INSERT INTO c.r.`t@$main` VALUES (3, 'c')")
    sql("CALL c.system.set_retention(repository => 'r', pattern => 'feature/*', keep_commits => 1)")
    assert(gc(olderThan = "3600").isEmpty, "nothing younger than the retention period is expired")
    val expired = gc().filter(_.getString(0) == "image").map(_.getString(1).stripPrefix("r@")).toSet
    assert(expired == Set(commits(0), commits(2), commits(4)))
    assert(ids("v1") == Set(1, 2, 101, 102) && ids("ns:l") == Set(1, 2, 101, 102, 103, 104))
    assert(ids(main) == Set(1, 2, 3))
    // the merge base (the default branch's commit the feature started from) stays: the merge still reads it
    val out = sql(s"CALL c.system.merge(repository => 'r', source => 'feature/x')").head()
    assert(out.getString(0) == "merged" && ids(main) == Set(1, 2, 3) ++ (101 to 106))
  }

  test("keep_days keeps the commits of the last days; expire_branches_after_days deletes stale branches only") {
    val commits = featureBranch(4)
    sql("CALL c.system.create_branch('r', 'feature/stale')")
    sql("CALL c.system.create_branch('r', 'feature/kept')")
    sql("CALL c.system.protect_branch(repository => 'r', pattern => 'feature/kept', require_merge => false)")
    age(commits.take(2), 10) // the first two feature commits were made ten days ago
    age(engine.history.log("r", Revision.DefaultBranch).map(_.image.hash), 40) // the base and the branches made on it
    sql("CALL c.system.set_retention(repository => 'r', pattern => 'feature/**', keep_days => 5, " +
      "expire_branches_after_days => 30)")
    val done = gc()
    val branches = done.filter(_.getString(0) == "branch")
    assert(branches.map(_.getString(1)) == Seq("r@feature/stale"), done.mkString("\n"))
    assert(branches.head.getString(3).contains("not updated for 30 days"))
    val refs = engine.refs.all("r").map(_.shortName).toSet
    assert(!refs("feature/stale") && refs("feature/kept") && refs(main) && refs("feature/x"),
      "the default branch and a protected branch are never expired")
    assert(ids("feature/x") == Set(1, 2, 101, 102, 103, 104) && ids("feature/x~1") == Set(1, 2, 101, 102, 103))
    expectError(ErrorClass.VersionExpired, "keep_days=5")(intercept[Throwable](sql("SELECT * FROM c.r.`t@feature/x~2`").collect()))
    assert(ids(main) == Set(1, 2))
  }

  test("bad policies are INVALID_OPTION and store nothing; removing an unknown policy is REF_NOT_FOUND") {
    keyedTable(1 -> "a")
    def refused(args: String, parts: String*): Unit = expectError(ErrorClass.InvalidOption, parts: _*)(
      intercept[Throwable](sql(s"CALL c.system.set_retention(repository => 'r', pattern => 'x*'$args)")))
    refused(", keep_days => -1", "keep_days")
    refused(", keep_commits => 0", "keep_commits")
    refused(", keep_days => 100000", "keep_days", "36500")
    refused(", expire_branches_after_days => 99999", "expire_branches_after_days")
    refused("", "sets nothing")
    expectError(ErrorClass.InvalidOption)(intercept[Throwable](engine.retention.set("r",
      versioned.core.RetentionPolicy("x*", keepCommits = Some(-5)))))
    expectError(ErrorClass.InvalidName)(intercept[Throwable](
      sql("CALL c.system.set_retention(repository => 'r', pattern => '', keep_days => 1)")))
    assert(policies.isEmpty)
    expectError(ErrorClass.RefNotFound, "no retention policy")(intercept[Throwable](
      sql("CALL c.system.remove_retention(repository => 'r', pattern => 'x*')")))
    sql("CALL c.system.set_retention(repository => 'r', pattern => 'x*', keep_days => 7)")
    sql("CALL c.system.set_retention(repository => 'r', pattern => 'x*', keep_commits => 3)") // replaces it
    assert(policies == Seq(Row("x*", null, 3, null)))
    assert(sql("CALL c.system.remove_retention(repository => 'r', pattern => 'x*')").collect().isEmpty)
    assert(policies.isEmpty)
  }

  test("policy changes are audited: set and remove append reflog entries (the chain stays intact); refusals append none") {
    keyedTable(1 -> "a")
    def entries: Seq[Row] = sql("SELECT ref, operation, detail, old_image, new_image, client FROM c.r.`$reflog` ORDER BY seq")
      .collect().toSeq
    val before = entries
    sql("CALL c.system.set_retention(repository => 'r', pattern => 'feature/*', keep_commits => 2)")
    sql("CALL c.system.set_retention(repository => 'r', pattern => 'feature/*', keep_days => 3, keep_commits => 2)")
    sql("CALL c.system.remove_retention(repository => 'r', pattern => 'feature/*')")
    val added = entries.drop(before.size)
    assert(added == Seq(
      Row("retention/feature/*", "retain", "retention policy 'feature/*' (keep_commits=2)", null, null, "sql"),
      Row("retention/feature/*", "retain", "retention policy 'feature/*' (keep_days=3, keep_commits=2)", null, null, "sql"),
      Row("retention/feature/*", "unretain", "", null, null, "sql")), added.mkString("\n"))
    assert(sql("CALL c.system.reflog(repository => 'r', ref => 'retention/feature/*')").count() == 3)
    // a refused change (a bad policy, an unknown pattern) appends nothing
    intercept[Throwable](sql("CALL c.system.set_retention(repository => 'r', pattern => 'x*', keep_days => -1)"))
    intercept[Throwable](sql("CALL c.system.remove_retention(repository => 'r', pattern => 'x*')"))
    assert(entries.size == before.size + 3)
    assert(sql("CALL c.system.verify('r')").collect().filter(_.getString(1) == "reflog").map(_.getString(2)).toSeq == Seq("ok"))
  }
}
