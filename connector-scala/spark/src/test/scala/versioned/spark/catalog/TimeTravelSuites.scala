package versioned.spark.catalog

import java.time.{Instant, ZoneOffset}
import java.time.format.DateTimeFormatter
import org.apache.spark.sql.{DataFrame, Row}
import versioned.core.{ErrorClass, Revision}

/**
 * Time travel and branch-qualified access, run three ways: SQL (`VERSION AS OF`, `TIMESTAMP AS OF`,
 * `` c.r.`t@dev` ``), the DataFrame API over the catalog (`versionAsOf` / `timestampAsOf` options,
 * `writeTo`) and the `versioned` format (`ref` / `asOf` / `branch` options).
 */
abstract class TimeTravelBehaviour extends CatalogSuiteBase {
  override protected def extraConf: Map[String, String] = super.extraConf + ("spark.sql.session.timeZone" -> "UTC")

  protected def atVersion(version: String): DataFrame
  protected def atTimestamp(ts: String): DataFrame
  protected def onBranch(branch: String): DataFrame
  protected def onBranchAt(branch: String, ts: String): DataFrame
  protected def appendTo(branch: String, rows: (Int, String)*): Unit

  private val fmt = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS").withZone(ZoneOffset.UTC)
  protected def fmtTs(ms: Long): String = fmt.format(Instant.ofEpochMilli(ms))

  /** Four commits on main: create, insert 1, insert 2, overwrite; refs v1 (tag) and etl:run1 (lock) at commit 2. */
  private def history(): Seq[String] = {
    keyedTable()
    sql("INSERT INTO c.r.t VALUES (1, 'a')")
    engine.refs.createTag("r", "v1", Revision.DefaultBranch)
    engine.refs.createLock("r", "etl", "run1", Revision.DefaultBranch)
    Thread.sleep(5)
    sql("INSERT INTO c.r.t VALUES (2, 'b')")
    Thread.sleep(5)
    sql("INSERT OVERWRITE c.r.t VALUES (1, 'A'), (2, 'b'), (3, 'c')")
    engine.history.log("r", Revision.DefaultBranch).map(_.image.hash).reverse
  }

  test("versions by branch, tag, lock, full hash, prefix and ancestry") {
    val hashes = history()
    val v2 = Seq(Row(1, "a"))
    val v3 = Seq(Row(1, "a"), Row(2, "b"))
    val v4 = Seq(Row(1, "A"), Row(2, "b"), Row(3, "c"))
    assert(sorted(atVersion("main")) == v4)
    assert(sorted(atVersion("v1")) == v2)
    assert(sorted(atVersion("etl:run1")) == v2)
    assert(sorted(atVersion(hashes(2))) == v3)
    assert(sorted(atVersion(hashes(2).take(10))) == v3)
    assert(sorted(atVersion("main~1")) == v3)
    assert(sorted(atVersion("main~3")).isEmpty)
    assert(sorted(atVersion("v1^")).isEmpty)
  }

  test("timestamps select the newest commit at or before the instant") {
    val hashes = history()
    val created = hashes.map(h => engine.resolve("r", Revision.Spec(h)).createdMs)
    assert(sorted(atTimestamp(fmtTs(created(1)))) == Seq(Row(1, "a")))
    assert(sorted(atTimestamp(fmtTs(created(2) + 1))) == Seq(Row(1, "a"), Row(2, "b")))
    assert(sorted(atTimestamp(fmtTs(created(3) + 60000))).size == 3)
    val e = intercept[Throwable](atTimestamp(fmtTs(created.head - 60000)).collect())
    expectError(ErrorClass.ImageNotFound, "no commit at or before")(e)
  }

  test("branch-qualified reads and writes use the branch") {
    history()
    val mainHead = headOf("r")
    engine.refs.createBranch("r", "dev", Revision.DefaultBranch)
    appendTo("dev", 4 -> "d")
    assert(headOf("r") == mainHead)
    assert(sorted(onBranch("dev")) == Seq(Row(1, "A"), Row(2, "b"), Row(3, "c"), Row(4, "d")))
    assert(sorted(atVersion("main")).size == 3)
    val devCreated = engine.resolve("r", Revision.Spec("dev")).createdMs
    assert(sorted(onBranchAt("dev", fmtTs(devCreated - 1))).size == 3)
    assert(sorted(onBranchAt("dev", fmtTs(devCreated))).size == 4)
    assert(engine.history.log("r", Revision.Spec("dev")).head.image.parents == mainHead.toSeq)
  }
}

class SqlTimeTravelSuite extends TimeTravelBehaviour {
  override protected def atVersion(version: String): DataFrame = sql(s"SELECT * FROM c.r.t VERSION AS OF '$version'")
  override protected def atTimestamp(ts: String): DataFrame = sql(s"SELECT * FROM c.r.t TIMESTAMP AS OF '$ts'")
  override protected def onBranch(branch: String): DataFrame = sql(s"SELECT * FROM c.r.`t@$branch`")
  override protected def onBranchAt(branch: String, ts: String): DataFrame =
    sql(s"SELECT * FROM c.r.`t@$branch` TIMESTAMP AS OF '$ts'")
  override protected def appendTo(branch: String, rows: (Int, String)*): Unit =
    sql(s"INSERT INTO c.r.`t@$branch` VALUES ${rows.map { case (i, v) => s"($i, '$v')" }.mkString(", ")}")
}

class DataFrameTimeTravelSuite extends TimeTravelBehaviour {
  override protected def atVersion(version: String): DataFrame = spark.read.option("versionAsOf", version).table("c.r.t")
  override protected def atTimestamp(ts: String): DataFrame = spark.read.option("timestampAsOf", ts).table("c.r.t")
  override protected def onBranch(branch: String): DataFrame = spark.table(s"c.r.`t@$branch`")
  override protected def onBranchAt(branch: String, ts: String): DataFrame =
    spark.read.option("timestampAsOf", ts).table(s"c.r.`t@$branch`")
  override protected def appendTo(branch: String, rows: (Int, String)*): Unit = {
    val session = spark; import session.implicits._
    rows.toDF("id", "v").writeTo(s"c.r.`t@$branch`").append()
  }
}

class FormatTimeTravelSuite extends TimeTravelBehaviour {
  override protected def atVersion(version: String): DataFrame = read("r.t", "ref" -> version)
  override protected def atTimestamp(ts: String): DataFrame = read("r.t", "asOf" -> ts)
  override protected def onBranch(branch: String): DataFrame = read("r.t", "ref" -> branch)
  override protected def onBranchAt(branch: String, ts: String): DataFrame = read("r.t", "ref" -> branch, "asOf" -> ts)
  override protected def appendTo(branch: String, rows: (Int, String)*): Unit = {
    val session = spark; import session.implicits._
    write(rows.toDF("id", "v"), "r.t", "branch" -> branch)
  }
}
