package versioned.spark.governance

import org.apache.spark.sql.Row
import versioned.core.ErrorClass
import versioned.spark.api.{TransactionApi, VersionedApi}
import versioned.spark.catalog.CatalogSuiteBase

/**
 * Protected branches through every surface that moves a ref: each refused operation raises PROTECTED_REF naming
 * the rule and leaves the head where it was; merges land. Runs on PostgreSQL too (VERSIONED_TEST_METASTORE).
 */
class ProtectedBranchSuite extends CatalogSuiteBase {
  private def main: String = engine.defaultBranch("r")

  /** `r.t` with rows 1..3 on the default branch, a branch `dev` from it, and `rule` on the default branch. */
  private def protectedRepo(rule: String = ""): Unit = {
    keyedTable(1 -> "a", 2 -> "b", 3 -> "c")
    sql(s"CALL c.system.create_branch('r', 'dev')")
    sql(s"CALL c.system.protect_branch(repository => 'r', pattern => '$main'$rule)")
  }

  private def refused(branch: String = main)(f: => Any): Unit =
    expectError(ErrorClass.ProtectedRef, s"rule '", "Nothing was changed")(failsWithoutCommit("r", branch)(f))

  test("direct writes to a protected branch are refused on every write surface; nothing is committed") {
    protectedRepo()
    val before = read("r.t").collect().toSet
    val df = spark.createDataFrame(java.util.List.of(Row(9, "z")), read("r.t").schema)
    refused()(df.write.format("versioned").mode("append").save("r.t"))
    refused()(df.write.format("versioned").mode("append").option("upsert", "true").save("r.t"))
    refused()(df.write.format("versioned").mode("overwrite").save("r.t"))
    refused()(sql("INSERT INTO c.r.t VALUES (10, 'x')"))
    refused()(sql("UPDATE c.r.t SET v = 'u' WHERE id = 1"))
    refused()(sql("DELETE FROM c.r.t WHERE id = 2"))
    df.createOrReplaceTempView("src")
    refused()(sql("MERGE INTO c.r.t USING src ON c.r.t.id = src.id WHEN NOT MATCHED THEN INSERT *"))
    refused()(sql("CALL c.system.delete_where(repository => 'r', table => 't', condition => 'id = 1')"))
    refused()(sql("CREATE TABLE c.r.u (id INT, PRIMARY KEY (id))"))
    refused() {
      val tx = TransactionApi.begin(spark, null, "r", null, "tx", "me")
      tx.write(df, "t", "append", null)
      tx.commit()
    }
    assert(read("r.t").collect().toSet == before)
  }

  test("a merge into a protected branch lands as a merge commit; the source branch stays writable") {
    protectedRepo()
    sql("INSERT INTO c.r.`t@dev` VALUES (4, 'd')")
    val out = VersionedApi.merge(spark, null, "r", "dev", main, "fail", "auto", false, null, null, null, false)
    assert(out.status == "merged" && !out.fastForward)
    val head = engine.branchHeadOption("r", main).get
    assert(head.parents.size == 2 && head.parents(1) == engine.branchHeadOption("r", "dev").get.hash)
    assert(read("r.t").collect().map(_.getInt(0)).toSet == Set(1, 2, 3, 4))
    sql("INSERT INTO c.r.`t@dev` VALUES (5, 'e')")
    expectError(ErrorClass.ProtectedRef, "merge commit")(failsWithoutCommit("r", main)(
      sql(s"CALL c.system.merge(repository => 'r', source => 'dev', target => '$main', fast_forward => 'only')")))
  }

  test("reset, delete and rename of a protected branch are refused unless the rule allows them") {
    protectedRepo()
    sql("INSERT INTO c.r.`t@dev` VALUES (4, 'd')")
    val first = headOf("r", main).get
    refused()(sql(s"CALL c.system.reset_branch('r', '$main', 'dev')"))
    refused()(sql(s"CALL c.system.delete_branch('r', '$main')"))
    refused()(sql(s"CALL c.system.rename_branch('r', '$main', 'other')"))
    assert(engine.refs.branches("r").map(_.shortName).toSet == Set(main, "dev"))
    sql(s"CALL c.system.protect_branch(repository => 'r', pattern => '$main', allow_force => 'true')")
    sql(s"CALL c.system.reset_branch('r', '$main', 'dev')")
    assert(headOf("r", main) == headOf("r", "dev"))
    sql(s"CALL c.system.reset_branch('r', '$main', '$first')")
    assert(headOf("r", main).contains(first))
  }

  test("globs cover matching branches only; a rule may precede its branch; deletion when allowed") {
    keyedTable(1 -> "a")
    sql("CALL c.system.protect_branch(repository => 'r', pattern => 'release/*', require_merge => 'false', allow_delete => 'true')")
    sql("CALL c.system.create_branch('r', 'release/1')")
    sql("CALL c.system.create_branch('r', 'release/1/hotfix')")
    sql("CALL c.system.create_branch('r', 'feature')")
    sql("INSERT INTO c.r.`t@release/1` VALUES (2, 'b')") // require_merge false: direct writes allowed
    sql(s"INSERT INTO c.r.`t@feature` VALUES (3, 'c')")
    // not a fast-forward of release/1: refused (allow_force false); a fast-forward is allowed
    refused("release/1")(sql("CALL c.system.reset_branch('r', 'release/1', 'feature')"))
    sql("CALL c.system.reset_branch('r', 'release/1/hotfix', 'feature')") // '*' does not cross '/'
    sql("CALL c.system.delete_branch('r', 'release/1')")
    val rules = sql("CALL c.system.protections('r')").collect()
    assert(rules.map(_.getString(0)).toSeq == Seq("release/*"))
    sql("CALL c.system.unprotect_branch('r', 'release/*')")
    assert(sql("CALL c.system.protections('r')").collect().isEmpty)
  }

  test("bad rules are refused with typed errors and change nothing") {
    keyedTable(1 -> "a")
    expectError(ErrorClass.InvalidName)(intercept[Throwable](
      sql("CALL c.system.protect_branch(repository => 'r', pattern => 'a..b')")))
    expectError(ErrorClass.CheckNotFound, "nope")(intercept[Throwable](
      sql(s"CALL c.system.protect_branch(repository => 'r', pattern => '$main', checks => 'nope')")))
    // a flag is a BOOLEAN parameter: Spark refuses what does not cast to one before the procedure runs
    assert(intercept[org.apache.spark.SparkThrowable](
      sql(s"CALL c.system.protect_branch(repository => 'r', pattern => '$main', allow_force => 'maybe')").collect())
      .getCondition == "CAST_INVALID_INPUT")
    expectError(ErrorClass.RefNotFound)(intercept[Throwable](sql("CALL c.system.unprotect_branch('r', 'nothing')")))
    assert(engine.protections.rules("r").isEmpty)
    sql("INSERT INTO c.r.t VALUES (2, 'b')") // still writable
  }
}
