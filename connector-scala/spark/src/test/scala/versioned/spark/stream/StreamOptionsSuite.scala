package versioned.spark.stream

import java.io.File
import java.nio.file.Files
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream
import versioned.core.{ErrorClass, Revision}
import versioned.spark.VersionedTestBase
import versioned.spark.api.VersionedApi
import versioned.spark.write.Commits

/**
 * Idempotent batch writes for `foreachBatch` (write options `streamQueryId` / `streamBatchId` and the API's
 * `writeBatch`), the sink's output modes, and the options a streaming write refuses.
 */
class StreamOptionsSuite extends VersionedTestBase {
  import StreamingSinkSuite._

  private def checkpointDir(): File = Files.createTempDirectory("versioned-stream-ckpt").toFile
  private def branch: String = engine.defaultBranch("r")
  private def commits: Int = logSize("r", branch)
  private def rows(): Seq[Row] = read("r.t").collect().toSeq
  private val noOptions = new java.util.HashMap[String, String]()

  private def batchWrite(df: DataFrame, q: String, b: Long, opts: (String, String)*): Option[String] =
    Commits.of(df.write.format("versioned").mode("append").option("streamQueryId", q).option("streamBatchId", b.toString)
      .options(opts.toMap).save("r.t")).map(_.image.hash)

  test("a batch written twice with the same query and batch ids commits once and returns the same commit") {
    val session = spark; import session.implicits._
    val first = batchWrite(Seq(Rec(1, "a"), Rec(2, "b")).toDF(), "q-1", 0, "primaryKey" -> "id")
    val again = batchWrite(Seq(Rec(1, "a"), Rec(2, "b")).toDF(), "q-1", 0)
    assert(first.isDefined && again == first && commits == 1)
    // through the API (what the Python helper calls): the same commit again, then the next batch
    val viaApi = VersionedApi.writeBatch(spark, noOptions, Seq(Rec(1, "a")).toDF(), "r.t", "q-1", 0L, "append",
      null, null, null, null, false, null)
    assert(viaApi == first.get && commits == 1)
    val next = VersionedApi.writeBatch(spark, noOptions, Seq(Rec(2, "b2")).toDF(), "r.t", "q-1", 1L, "append",
      null, "sync", null, null, true, null)
    assert(next != first.get && commits == 2 && headHash("r", branch).contains(next))
    // batches of another query, and skipped batch ids, are fine for foreachBatch writes
    assert(batchWrite(Seq(Rec(3, "c")).toDF(), "q-2", 7).isDefined)
    awaitCompaction()
    assertSameRows(rows(), Seq(Row(1L, "a"), Row(2L, "b2"), Row(3L, "c")), "idempotent batches")
    assert(engine.history.log("r", Revision.Spec(branch)).head.image.message.contains("query=q-2 batch=7 table=t"))
  }

  test("foreachBatch with the batch's ids: a batch replayed after a lost checkpoint commit writes nothing twice") {
    val session = spark; import session.implicits._
    val in = MemoryStream[Rec](spark, 2)
    val ckpt = checkpointDir()
    def run() = in.toDF().writeStream.option("checkpointLocation", ckpt.getAbsolutePath)
      .foreachBatch { (df: DataFrame, id: Long) => batchWrite(df, "fb", id, "primaryKey" -> "id"); () }.start()
    val q1 = run()
    try { in.addData(Rec(1, "a")); q1.processAllAvailable(); in.addData(Rec(2, "b")); q1.processAllAvailable() }
    finally q1.stop()
    Seq("commits/1", "commits/.1.crc").foreach(p => new File(ckpt, p).delete())
    val q2 = run()
    try { q2.processAllAvailable(); assert(q2.exception.isEmpty) } finally q2.stop()
    awaitCompaction()
    assertSameRows(rows(), Seq(Row(1L, "a"), Row(2L, "b")), "foreachBatch, exactly once")
    assert(commits == 2)
  }

  test("bad stream ids are refused, nothing committed") {
    val session = spark; import session.implicits._
    batchWrite(Seq(Rec(1, "a")).toDF(), "q", 0, "primaryKey" -> "id")
    val before = repoState("r", "t")
    val df = Seq(Rec(2, "b")).toDF()
    def refused(parts: String*)(f: => Any): Unit = {
      expectError(ErrorClass.InvalidOption, parts: _*)(f)
      assert(repoState("r", "t") == before)
    }
    refused("'streamBatchId'", "together")(df.write.format("versioned").mode("append").option("streamQueryId", "q").save("r.t"))
    refused("'streamBatchId'", "-1")(batchWrite(df, "q", -1))
    refused("'streamBatchId'", "x")(df.write.format("versioned").mode("append").option("streamQueryId", "q")
      .option("streamBatchId", "x").save("r.t"))
    refused("'streamQueryId'")(batchWrite(df, "has space", 1))
    val in = MemoryStream[Rec](spark, 2)
    val q = in.toDF().writeStream.format("versioned").option("checkpointLocation", checkpointDir().getAbsolutePath)
      .option("streamBatchId", "3").start("r.t")
    try { in.addData(Rec(5, "e")); refused("'streamBatchId'", "foreachBatch")(q.processAllAvailable()) } finally q.stop()
  }

  test("complete output mode: each batch's result becomes the table (an overwrite per batch)") {
    val session = spark; import session.implicits._
    val in = MemoryStream[Rec](spark, 2)
    val counts = in.toDF().groupBy("name").count()
    val complete = counts.writeStream.format("versioned").outputMode("complete")
      .option("checkpointLocation", checkpointDir().getAbsolutePath).option("primaryKey", "name").start("r.t")
    try {
      in.addData(Rec(1, "a"), Rec(2, "a"), Rec(3, "b")); complete.processAllAvailable()
      in.addData(Rec(4, "b"), Rec(5, "c")); complete.processAllAvailable()
    } finally complete.stop()
    awaitCompaction()
    assertSameRows(rows(), Seq(Row("a", 2L), Row("b", 2L), Row("c", 1L)), "complete")
    assert(commits == 2)
  }

  test("update mode into a keyed table with upsert: one row per key") {
    val session = spark; import session.implicits._
    Seq(("a", 0L)).toDF("name", "count").write.format("versioned").mode("append").option("primaryKey", "name").save("r.t")
    val in = MemoryStream[Rec](spark, 2)
    val q = in.toDF().groupBy("name").count().writeStream.format("versioned").outputMode("update")
      .option("checkpointLocation", checkpointDir().getAbsolutePath).option("upsert", "true").start("r.t")
    try {
      in.addData(Rec(1, "a"), Rec(2, "b")); q.processAllAvailable()
      in.addData(Rec(3, "a")); q.processAllAvailable()
    } finally q.stop()
    awaitCompaction()
    assertSameRows(rows(), Seq(Row("a", 2L), Row("b", 1L)), "update")
  }

  test("a continuous trigger is refused when the query starts, nothing committed") {
    val session = spark; import session.implicits._
    Seq(Rec(1, "a")).toDF().write.format("versioned").mode("append").option("primaryKey", "id").save("r.t")
    val before = repoState("r", "t")
    val e = intercept[org.apache.spark.SparkThrowable with Throwable] {
      spark.readStream.format("rate").option("rowsPerSecond", "5").load()
        .selectExpr("value AS id", "CAST(value AS STRING) AS name").writeStream.format("versioned")
        .option("checkpointLocation", checkpointDir().getAbsolutePath)
        .trigger(org.apache.spark.sql.streaming.Trigger.Continuous("1 second")).start("r.t")
    }
    assert(e.getCondition == "DATA_SOURCE_STREAMING_WRITE_NOT_SUPPORTED", e.getMessage)
    assert(spark.streams.active.isEmpty && repoState("r", "t") == before)
  }
}
