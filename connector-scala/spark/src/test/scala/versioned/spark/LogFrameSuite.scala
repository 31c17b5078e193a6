package versioned.spark

import versioned.spark.session.Warehouses

import java.sql.Timestamp
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.execution.LocalTableScanExec
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec
import org.apache.spark.sql.functions.{array_contains, col, count, lit, max}
import versioned.core.{ErrorClass, LogEntry, Revision}
import versioned.spark.api.{HistoryApi, LogSource}

/** The log DataFrame of the API facade (what `Repository.log` returns) against the engine's log. */
class LogFrameSuite extends VersionedTestBase with AdaptiveSparkPlanHelper {
  private def log(ref: String, limit: Int = -1, partitionBytes: Option[Int] = None): DataFrame = partitionBytes match {
    case None => HistoryApi.log(spark, new java.util.HashMap[String, String](), "r", ref, limit)
    case Some(b) => LogSource.frame(spark, Warehouses.config(spark, Map.empty), "r", Revision.Spec(ref), limit,
      Map(LogSource.PartitionBytes -> b.toString))
  }

  private def expected(ref: String): Seq[Row] = engine.history.log("r", Revision.Spec(ref)).map { (e: LogEntry) =>
    Row(e.image.hash, e.image.parents, e.image.author, e.image.message, new Timestamp(e.image.createdMs), e.tablesChanged,
      e.image.actor.map(_.user).orNull, e.image.actor.map(_.appId).orNull, e.image.actor.map(_.client).orNull)
  }

  /** A history of a few real writes on two branches, then `n` commits that change no table. */
  private def history(n: Int): Unit = {
    val session = spark; import session.implicits._
    write(Seq((1, "a")).toDF("id", "v"), "r.t", "primaryKey" -> "id", "message" -> "first", "author" -> "ann")
    write(Seq((2, "b")).toDF("id", "v"), "r.u", "primaryKey" -> "id", "message" -> "second")
    engine.refs.createBranch("r", "dev", Revision.Spec("main~1"))
    write(Seq((3, "c")).toDF("id", "v"), "r.t", "branch" -> "dev", "message" -> "on dev")
    var head = headHash("r")
    (1 to n).foreach { i => head = Some(engine.commit("r", "main", head, Map.empty, "bot", s"empty $i").image.hash) }
  }

  private def scanSchema(df: DataFrame): Seq[String] =
    collect(df.queryExecution.executedPlan) { case b: BatchScanExec => b.scan.readSchema().fieldNames.toSeq }.flatten

  test("the log DataFrame holds every column of every image, newest first") {
    history(30)
    val df = log("main")
    assert(df.schema == HistoryApi.LogSchema)
    assert(df.collect().toSeq == expected("main") && df.count() == 32)
    assert(log("dev").collect().toSeq == expected("dev") && log("dev").count() == 2)
    assert(log("main").collect().head.getAs[String]("message") == "empty 30")
    assert(log("main").collect().last.getSeq[String](5) == Seq("t"))
  }

  test("rows split over several partitions keep their order") {
    history(60)
    val df = log("main", partitionBytes = Some(2000))
    assert(plannedPartitions(df) > 3)
    assert(df.collect().toSeq == expected("main") && df.count() == 62)
    assert(df.select("hash").collect().map(_.getString(0)).toSeq == expected("main").map(_.getString(0)))
  }

  test("a query reads only the columns it uses") {
    history(5)
    val df = log("main")
    assert(scanSchema(df.select("message")) == Seq("message"))
    assert(df.select("message").collect().map(_.getString(0)).toSeq == expected("main").map(_.getString(3)))
    assert(scanSchema(df.groupBy("author").count()) == Seq("author"))
    assert(df.groupBy("author").count().collect().toSet ==
      expected("main").groupBy(_.getString(2)).map { case (a, rs) => Row(a, rs.size.toLong) }.toSet)
    val changedT = df.filter(array_contains(col("tables_changed"), "t")).select("hash", "created")
    assert(scanSchema(changedT).toSet == Set("hash", "created", "tables_changed"))
    assert(changedT.collect().toSeq == expected("main").filter(_.getSeq[String](5).contains("t")).map(r => Row(r(0), r(4))))
    assert(df.limit(2).collect().toSeq == expected("main").take(2))
  }

  test("COUNT(*) is answered without reading the rows; other aggregates read them") {
    history(5)
    val df = log("main")
    val counted = df.groupBy().count()
    assert(collect(counted.queryExecution.executedPlan) { case b: BatchScanExec => b }.isEmpty)
    assert(collect(counted.queryExecution.executedPlan) { case l: LocalTableScanExec => l }.size == 1)
    assert(df.count() == 7 && log("main", limit = 3).count() == 3 && log("main", limit = 0).count() == 0)
    assert(df.agg(count("*"), count(lit(1))).collect().toSeq == Seq(Row(7L, 7L)))
    assert(df.filter(col("author") === "bot").count() == 5 && scanSchema(df.filter(col("author") === "bot").groupBy().count()) == Seq("author"))
    assert(df.limit(4).count() == 4 && df.select("author").distinct().count() == 3)
    assert(df.agg(count("message"), max("created")).collect().head == Row(7L, expected("main").head.get(4)))
  }

  test("limit, an empty log and errors when the DataFrame is created") {
    history(10)
    assert(log("main", limit = 3).collect().toSeq == expected("main").take(3))
    assert(log("main", limit = 100).collect().toSeq == expected("main"))
    val none = log("main", limit = 0)
    assert(none.schema == HistoryApi.LogSchema && none.collect().isEmpty && none.count() == 0)
    expectError(ErrorClass.RefNotFound, "nope")(log("nope"))
    expectError(ErrorClass.ImageNotFound)(log("main~20"))
  }

  test("the DataFrame is a snapshot of the log when it was created") {
    history(2)
    val before = log("main")
    val rows = before.collect().toSeq
    engine.commit("r", "main", headHash("r"), Map.empty, "bot", "later")
    assert(before.collect().toSeq == rows && before.count() == 4)
    assert(log("main").count() == 5)
  }
}
