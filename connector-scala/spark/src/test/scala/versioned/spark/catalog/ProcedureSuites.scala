package versioned.spark.catalog

import org.apache.spark.sql.Row
import versioned.core.{ErrorClass, Ref, Revision}

/**
 * Branch, tag and lock management, run three ways: `CALL c.system.*` with named arguments, with
 * positional arguments, and through the engine's RefOps (what the DataFrame-side API uses).
 */
abstract class RefManagementBehaviour extends CatalogSuiteBase {
  /** Each returns the image the ref points at afterwards (for deletions: before). */
  protected def createBranch(name: String, from: Option[String]): String
  protected def deleteBranch(name: String): String
  protected def resetBranch(name: String, to: String, expected: Option[String]): String
  protected def createTag(name: String, at: Option[String]): String
  protected def deleteTag(name: String): String
  protected def createLock(ns: String, name: String, at: Option[String]): String
  protected def releaseLock(ns: String, name: String): String

  private def hash(rev: String) = engine.resolve("r", Revision.Spec(rev)).hash

  test("branches: create from the default branch or a revision, reset, delete") {
    keyedTable((1, "a"))
    sql("INSERT INTO c.r.t VALUES (2, 'b')")
    assert(createBranch("dev", None) == hash("main"))
    assert(createBranch("old", Some("main~1")) == hash("main~1"))
    assert(sorted(sql("SELECT * FROM c.r.`t@old`")) == Seq(Row(1, "a")))
    sql("INSERT INTO c.r.`t@dev` VALUES (3, 'c')")
    assert(resetBranch("dev", "main~1", None) == hash("main~1"))
    assert(sorted(sql("SELECT * FROM c.r.`t@dev`")) == Seq(Row(1, "a")))
    val e = failsWithoutCommit("r", "dev")(resetBranch("dev", "main", Some("main")))
    expectError(ErrorClass.RefConflict)(e)
    assert(resetBranch("dev", "main", Some("old")) == hash("main"))
    val devAt = hash("dev")
    assert(deleteBranch("dev") == devAt)
    assert(!engine.refs.branches("r").exists(_.shortName == "dev"))
    expectError(ErrorClass.RefExists)(intercept[Throwable](createBranch("old", None)))
    expectError(ErrorClass.ProtectedRef)(intercept[Throwable](deleteBranch("main")))
    expectError(ErrorClass.RefNotFound)(intercept[Throwable](deleteBranch("nope")))
  }

  test("tags and locks pin images and are readable as versions") {
    keyedTable((1, "a"))
    assert(createTag("v1", None) == hash("main"))
    assert(createLock("etl", "run-1", Some("main")) == hash("main"))
    sql("INSERT INTO c.r.t VALUES (2, 'b')")
    assert(createTag("v2", Some("main")) == hash("main"))
    assert(sorted(sql("SELECT * FROM c.r.t VERSION AS OF 'v1'")) == Seq(Row(1, "a")))
    assert(sorted(sql("SELECT * FROM c.r.t VERSION AS OF 'etl:run-1'")) == Seq(Row(1, "a")))
    assert(engine.refs.locks("r", Some("etl")).map(_.shortName) == Seq("etl:run-1"))
    expectError(ErrorClass.RefExists)(intercept[Throwable](createTag("v1", None)))
    expectError(ErrorClass.ImmutableRef)(intercept[Throwable](sql("INSERT INTO c.r.`t@v1` VALUES (9, 'z')")))
    val v1 = hash("v1")
    assert(deleteTag("v1") == v1)
    assert(releaseLock("etl", "run-1") == v1)
    assert(engine.refs.tags("r").map(_.shortName) == Seq("v2"))
    assert(engine.refs.locks("r").isEmpty)
    expectError(ErrorClass.RefNotFound)(intercept[Throwable](releaseLock("etl", "run-1")))
  }
}

/** `CALL` with named arguments, in an order different from the declaration. */
class NamedCallProcedureSuite extends RefManagementBehaviour {
  private def call(q: String): String = {
    val rows = sql(q).collect()
    assert(rows.length == 1 && rows.head.schema.fieldNames.toSeq == Seq("name", "kind", "image"))
    rows.head.getString(2)
  }
  private def opt(name: String, v: Option[String]) = v.map(x => s", $name => '$x'").getOrElse("")

  override protected def createBranch(name: String, from: Option[String]): String =
    call(s"CALL c.system.create_branch(branch => '$name', repository => 'r'${opt("from_ref", from)})")
  override protected def deleteBranch(name: String): String = call(s"CALL c.system.delete_branch(repository => 'r', branch => '$name')")
  override protected def resetBranch(name: String, to: String, expected: Option[String]): String =
    call(s"CALL c.system.reset_branch(ref => '$to', repository => 'r', branch => '$name'${opt("expected", expected)})")
  override protected def createTag(name: String, at: Option[String]): String =
    call(s"CALL c.system.create_tag(repository => 'r', tag => '$name'${opt("ref", at)})")
  override protected def deleteTag(name: String): String = call(s"CALL c.system.delete_tag(tag => '$name', repository => 'r')")
  override protected def createLock(ns: String, name: String, at: Option[String]): String =
    call(s"CALL c.system.create_lock(repository => 'r', namespace => '$ns', name => '$name'${opt("ref", at)})")
  override protected def releaseLock(ns: String, name: String): String =
    call(s"CALL c.system.release_lock(repository => 'r', name => '$name', namespace => '$ns')")

  test("SHOW PROCEDURES lists the system procedures") {
    val names = sql("SHOW PROCEDURES IN c.system").collect().map(_.getString(3)).toSeq.sorted
    assert(names == Seq("abort_transaction", "add_check", "add_remote", "begin_transaction", "bisect", "checks", "cherry_pick", "clone",
      "commit_transaction", "compact", "create_branch", "create_lock", "create_tag", "default_branch", "delete_branch", "delete_tag",
      "delete_where", "diff", "diff_summary", "download", "fetch", "gc", "gc_warehouse", "import_table", "last_commit", "materialize", "merge",
      "merge_conflicts", "protect_branch", "protections", "publish", "pull", "push", "reflog", "release_lock", "remotes", "remove_check", "remove_remote",
      "remove_retention", "rename_branch", "reset_branch", "resolve", "retention", "revert", "run_checks", "set_retention", "show",
      "transaction_delete_where", "transaction_read", "transaction_state", "transaction_upsert", "transaction_write", "unprotect_branch", "verify"))
  }
}

/** `CALL` with positional arguments. */
class PositionalCallProcedureSuite extends RefManagementBehaviour {
  private def call(q: String): String = sql(q).head().getString(2)
  private def opt(v: Option[String]) = v.map(x => s", '$x'").getOrElse("")

  override protected def createBranch(name: String, from: Option[String]): String =
    call(s"CALL c.system.create_branch('r', '$name'${opt(from)})")
  override protected def deleteBranch(name: String): String = call(s"CALL c.system.delete_branch('r', '$name')")
  override protected def resetBranch(name: String, to: String, expected: Option[String]): String =
    call(s"CALL c.system.reset_branch('r', '$name', '$to'${opt(expected)})")
  override protected def createTag(name: String, at: Option[String]): String = call(s"CALL c.system.create_tag('r', '$name'${opt(at)})")
  override protected def deleteTag(name: String): String = call(s"CALL c.system.delete_tag('r', '$name')")
  override protected def createLock(ns: String, name: String, at: Option[String]): String =
    call(s"CALL c.system.create_lock('r', '$ns', '$name'${opt(at)})")
  override protected def releaseLock(ns: String, name: String): String = call(s"CALL c.system.release_lock('r', '$ns', '$name')")
}

/** The engine API, which the DataFrame-side facade calls. */
class EngineRefProcedureSuite extends RefManagementBehaviour {
  private def rev(v: Option[String]) = v.map(Revision.Spec).getOrElse(Revision.DefaultBranch)
  private def before(full: String): String = engine.refs.all("r").find(_.fullName == full).map(_.image).getOrElse("")

  override protected def createBranch(name: String, from: Option[String]): String = engine.refs.createBranch("r", name, rev(from)).image
  override protected def deleteBranch(name: String): String = { val h = before(Ref.branch(name)); engine.refs.deleteBranch("r", name); h }
  override protected def resetBranch(name: String, to: String, expected: Option[String]): String =
    engine.refs.resetBranch("r", name, Revision.Spec(to), expected.map(e => engine.resolve("r", Revision.Spec(e)).hash)).image
  override protected def createTag(name: String, at: Option[String]): String = engine.refs.createTag("r", name, rev(at)).image
  override protected def deleteTag(name: String): String = { val h = before(Ref.tag(name)); engine.refs.deleteTag("r", name); h }
  override protected def createLock(ns: String, name: String, at: Option[String]): String =
    engine.refs.createLock("r", ns, name, rev(at)).image
  override protected def releaseLock(ns: String, name: String): String = {
    val h = before(Ref.lock(ns, name)); engine.refs.releaseLock("r", ns, name); h
  }
}
