package versioned.core

import java.sql.DriverManager
import versioned.core.governance.{BranchRule, BranchRules, Move}

/**
 * Protected branches in the core: the rules' decisions, their enforcement where refs move (both metastores), and on
 * PostgreSQL the trigger that refuses a protected move to a client with the writer's role bypassing the library.
 */
class ProtectionSuite extends CoreFixture {
  private def main = engine.defaultBranch("r")
  private def head(b: String) = engine.branchHeadOption("r", b).map(_.hash)

  private def setup(): Unit = {
    engine.commit("r", engine.config.defaultBranch, None, Map(putFresh("t")), "me", "first")
    engine.refs.createBranch("r", "dev", Revision.DefaultBranch)
    engine.commit("r", "dev", head("dev"), Map(putFresh("t")), "me", "on dev")
  }

  private def refused[T](branch: String)(f: => T): BranchProtectedException = {
    val before = engine.refs.all("r")
    val e = intercept[BranchProtectedException](f)
    assert(e.errorClass == ErrorClass.ProtectedRef && e.getMessage.contains("Nothing was changed"))
    assert(engine.refs.all("r") == before, s"refs changed although $branch's rule refused")
    e
  }

  test("rules: globs, the most restrictive matching rule, and each kind of move") {
    val rules = BranchRules(Seq(BranchRule("main"), BranchRule("release/*", requireMerge = false, allowDelete = true),
      BranchRule("team/**", requireMerge = false, allowForce = true)))
    assert(rules.covering("release/1").map(_.pattern) == Seq("release/*") && rules.covering("release/1/x").isEmpty)
    assert(rules.covering("team/a/b").nonEmpty && rules.covering("mainline").isEmpty)
    assert(rules.refusal("main", Move.Commit(merge = false)).isDefined && rules.refusal("main", Move.Commit(merge = true)).isEmpty)
    assert(rules.refusal("main", Move.Reset(fastForward = true)).isDefined)
    assert(rules.refusal("release/1", Move.Reset(fastForward = true)).isEmpty)
    assert(rules.refusal("release/1", Move.Reset(fastForward = false)).isDefined)
    assert(rules.refusal("release/1", Move.Delete).isEmpty && rules.refusal("main", Move.Delete).isDefined)
    assert(rules.refusal("team/x", Move.Reset(fastForward = false)).isEmpty)
    assert(rules.refusal("team/x", Move.Push(forced = true)).isEmpty && rules.refusal("main", Move.Push(forced = false)).isDefined)
    assert(rules.refusal("other", Move.Commit(merge = false)).isEmpty)
    assert(BranchRule("a.b+").matches("a.b+") && !BranchRule("a.b+").matches("axb+"))
  }

  test("a protected branch takes merge commits only; reset, delete and rename are refused") {
    setup()
    engine.protections.protect("r", BranchRule(main))
    val e = refused(main)(engine.commit("r", main, head(main), Map(putFresh("t")), "me", "direct"))
    assert(e.pattern == main && e.getMessage.contains("direct write"))
    refused(main)(engine.refs.resetBranch("r", main, Revision.Spec("dev")))
    refused(main)(engine.refs.deleteBranch("r", main))
    refused(main)(engine.refs.renameBranch("r", main, "x"))
    val merged = engine.commit("r", main, head(main), Map.empty, "me", "merge dev", mergeParents = head("dev").toSeq)
    assert(head(main).contains(merged.image.hash))
    // a rule on a branch that does not exist yet is allowed, and the branch can be created
    engine.protections.protect("r", BranchRule("release/*"))
    engine.refs.createBranch("r", "release/1", Revision.DefaultBranch)
    refused("release/1")(engine.commit("r", "release/1", head("release/1"), Map(putFresh("t")), "me", "direct"))
    assert(engine.protections.rules("r").map(_.pattern) == Seq(main, "release/*").sorted)
    intercept[InvalidNameException](engine.protections.protect("r", BranchRule("bad..name")))
    intercept[CheckNotFoundException](engine.protections.protect("r", BranchRule("x", requiredChecks = Seq("nope"))))
  }

  test("PostgreSQL: a client with the writer's role cannot move, delete or unprotect a protected branch by plain SQL") {
    assume(TestMetastores.postgresAdminUrl.isDefined, "needs VERSIONED_TEST_POSTGRES_URL")
    setup()
    engine.protections.protect("r", BranchRule(main))
    val url = engine.config.metastoreUrl
    val db = url.substring(url.lastIndexOf('/') + 1).takeWhile(_ != '?')
    val role = s"${db}_writer"
    def sql(u: String)(statements: String*): Unit = {
      val c = DriverManager.getConnection(u)
      try statements.foreach { s => val st = c.createStatement(); try st.execute(s) finally st.close() } finally c.close()
    }
    sql(url)(GovernanceRoles.writerGrants(role, "writer-secret"): _*)
    val writer = url.replaceAll("user=[^&]*", s"user=$role").replaceAll("password=[^&]*", "password=writer-secret")
    def fails(statement: String, expected: String): Unit = {
      val e = intercept[java.sql.SQLException](sql(writer)(statement))
      assert(e.getMessage.contains(expected), s"$statement: ${e.getMessage}")
    }
    try {
      val devHead = head("dev").get
      fails(s"UPDATE vc_refs SET image_hash = '$devHead' WHERE repo = 'r' AND name = 'heads/$main'", "[PROTECTED_REF]")
      fails(s"DELETE FROM vc_refs WHERE repo = 'r' AND name = 'heads/$main'", "[PROTECTED_REF]")
      fails(s"UPDATE vc_refs SET name = 'heads/x' WHERE repo = 'r' AND name = 'heads/$main'", "[PROTECTED_REF]")
      fails("DELETE FROM vc_branch_rules", "permission denied")
      fails("ALTER TABLE vc_refs DISABLE TRIGGER vc_refs_guard", "must be owner")
      fails("DROP TRIGGER vc_refs_guard ON vc_refs", "must be owner")
      assert(head(main).exists(_ != devHead))
      // unprotected branches move as before, and the library works with the writer's role (merges land)
      sql(writer)(s"UPDATE vc_refs SET image_hash = '${head(main).get}' WHERE repo = 'r' AND name = 'heads/dev'")
      val asWriter = new Engine(WarehouseConfig(engine.config.warehouse, writer))
      try {
        asWriter.commit("r", "dev", head("dev"), Map(putFresh("t")), "w", "on dev")
        asWriter.commit("r", main, head(main), Map.empty, "w", "merge", mergeParents = head("dev").toSeq)
        assert(head(main).map(engine.image("r", _).parents.size).contains(2))
        intercept[VersionedException](asWriter.protections.unprotect("r", main))
        // the trigger's refusal reaches a library user as the same typed error
        val e = intercept[ProtectedRefException](asWriter.metastore.tx(c => Sql.update(c,
          "UPDATE vc_refs SET image_hash = ? WHERE repo = 'r' AND name = ?", head("dev").get, s"heads/$main")))
        assert(e.errorClass == ErrorClass.ProtectedRef)
      } finally asWriter.close()
    } finally sql(url)(s"DROP OWNED BY $role", s"DROP ROLE $role")
  }
}
