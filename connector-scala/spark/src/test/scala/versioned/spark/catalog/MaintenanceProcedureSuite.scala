package versioned.spark.catalog

import java.io.File
import java.nio.file.Files
import versioned.core.{ErrorClass, ObjectMeta, Revision}

/** `CALL c.system.gc / gc_warehouse / verify`: the SQL forms of garbage collection and verification. */
class MaintenanceProcedureSuite extends CatalogSuiteBase {
  private def condition(e: org.apache.spark.SparkThrowable): String = e.getCondition

  test("gc: dry run lists, a short retention needs force, a forced run deletes what a dropped repository left") {
    keyedTable((1, "a"), (2, "b"))
    sql("CREATE NAMESPACE c.tmp")
    sql("CREATE TABLE c.tmp.x (id INT, v STRING, PRIMARY KEY (id))")
    sql("INSERT INTO c.tmp.x VALUES (9, 'z')")
    sql("DROP NAMESPACE c.tmp CASCADE")
    assert(sql("CALL c.system.gc(repository => 'r', dry_run => 'true')").collect().isEmpty, "r's objects are all needed")
    expectError(ErrorClass.InvalidOption, "force")(failsWithoutCommit("r")(
      sql("CALL c.system.gc_warehouse(older_than_seconds => '0')").collect()))
    // arguments are typed (a number of seconds, booleans): Spark casts a string to the type, or refuses it
    assert(condition(intercept[org.apache.spark.SparkThrowable](
      sql("CALL c.system.gc(repository => 'r', older_than_seconds => 'soon')").collect())) == "CAST_INVALID_INPUT")
    expectError(ErrorClass.InvalidOption, "older_than_seconds", ">= 0")(intercept[Throwable](
      sql("CALL c.system.gc(repository => 'r', older_than_seconds => -1)").collect()))
    assert(condition(intercept[org.apache.spark.SparkThrowable](
      sql("CALL c.system.gc(repository => 'r', force => 'maybe')").collect())) == "CAST_INVALID_INPUT")
    assert(condition(intercept[org.apache.spark.SparkThrowable](
      sql("CALL c.system.gc(repository => 'r', force => DATE'2026-01-01')").collect())).startsWith("DATATYPE_MISMATCH"))
    assert(sql("CALL c.system.gc(repository => 'r', older_than_seconds => 7200, force => false, dry_run => TRUE)")
      .collect().isEmpty)
    expectError(ErrorClass.RepositoryNotFound)(intercept[Throwable](sql("CALL c.system.gc('nope')").collect()))
    val dry = sql("CALL c.system.gc_warehouse(older_than_seconds => 0, force => true, dry_run => true)").collect()
    assert(dry.map(_.getString(0)).toSet == Set("object") && dry.nonEmpty)
    dry.foreach(r => assert(new File(new java.net.URI(r.getString(2)).getPath).exists(), "a dry run deletes nothing"))
    val done = sql("CALL c.system.gc_warehouse(older_than_seconds => '0', force => 'true')").collect()
    assert(done.map(_.getString(1)).toSet == dry.map(_.getString(1)).toSet)
    assert(sorted(sql("SELECT * FROM c.r.t")).map(_.toString) == Seq("[1,a]", "[2,b]"))
  }

  test("verify reports every object ok, then the one that went missing, with the versions that need it") {
    keyedTable((1, "a"), (2, "b"))
    sql("INSERT INTO c.r.t VALUES (3, 'c')")
    val ok = sql("CALL c.system.verify('r')").collect()
    assert(ok.nonEmpty && ok.forall(_.getString(2) == "ok"))
    val t = tableAt("r", "t").get
    val victim = t.effectiveFragments.head.objects.head
    Files.delete(new File(warehouse, ObjectMeta.relativePath(victim)).toPath)
    val bad = sql("CALL c.system.verify(repository => 'r', refs => 'main')").collect().filter(_.getString(2) != "ok")
    assert(bad.map(_.getString(0)).toSeq == Seq(victim) && bad.head.getString(2) == "missing")
    assert(bad.head.getSeq[String](4).exists(_.startsWith("t@")))
    assert(engine.resolve("r", Revision.Spec("main")).hash.nonEmpty)
  }
}
