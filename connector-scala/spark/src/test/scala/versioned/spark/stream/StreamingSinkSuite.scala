package versioned.spark.stream

import java.io.File
import java.nio.file.Files
import org.apache.spark.sql.{DataFrame, Encoder, Row}
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream
import org.apache.spark.sql.streaming.StreamingQuery
import versioned.core.{ErrorClass, Revision}
import versioned.spark.VersionedTestBase
import versioned.spark.catalog.VersionedCatalog

object StreamingSinkSuite {
  final case class Rec(id: Long, name: String)
  final case class Cdc(id: Long, name: String, del: Boolean)
  final case class Wide(id: Long, name: String, extra: Int)
  final case class MaybeKey(id: Option[Long], name: String)
}

/**
 * The streaming sink end to end: MemoryStream sources into `writeStream.format("versioned")` (and `toTable`
 * through the catalog) with the write semantics of batch writes, each micro-batch one commit, replays after a
 * lost checkpoint commit committing nothing, and bad input refused typed with nothing committed.
 */
class StreamingSinkSuite extends VersionedTestBase {
  import StreamingSinkSuite._

  override protected def extraConf: Map[String, String] = Map("spark.sql.catalog.c" -> classOf[VersionedCatalog].getName)

  private def checkpointDir(): File = Files.createTempDirectory("versioned-stream-ckpt").toFile

  private def memory[A: Encoder]: MemoryStream[A] = MemoryStream[A](spark, 2)

  private def start(df: DataFrame, table: String, ckpt: File, opts: (String, String)*): StreamingQuery =
    df.writeStream.format("versioned").option("checkpointLocation", ckpt.getAbsolutePath).options(opts.toMap).start(table)

  /** Runs `q` over everything its source has, then waits for the compaction of its commits. */
  private def drain(q: StreamingQuery): Unit = { q.processAllAvailable(); awaitCompaction() }

  /** A stream of `batches` into r.t (one micro-batch each) that stops afterwards; its source and checkpoint. */
  private def streamed(batches: Seq[Seq[Rec]], opts: (String, String)*): (MemoryStream[Rec], File) = {
    val session = spark; import session.implicits._
    val in = memory[Rec]
    val ckpt = checkpointDir()
    val q = start(in.toDF(), "r.t", ckpt, opts: _*)
    try batches.foreach { b => in.addData(b: _*); drain(q) } finally q.stop()
    (in, ckpt)
  }

  /** A stream whose one batch of `rows` into r.t fails with `errorClass` (message with `parts`), changing nothing. */
  private def refusedBatch[A: Encoder](rows: Seq[A], opts: (String, String)*)(errorClass: String, parts: String*): Unit = {
    val before = repoState("r", "t")
    val in = memory[A]
    val q = start(in.toDF(), "r.t", checkpointDir(), opts: _*)
    try { in.addData(rows: _*); expectError(errorClass, parts: _*)(q.processAllAvailable()) } finally q.stop()
    assert(repoState("r", "t") == before, s"the refused $errorClass batch changed the repository")
    assert(stagedWrites.isEmpty, s"staging leftovers: $stagedWrites")
  }

  private def branch: String = engine.defaultBranch("r")
  private def commits: Int = if (!engine.repositoryExists("r")) 0 else logSize("r", branch)
  private def rows(table: String = "r.t"): Seq[Row] = read(table).collect().toSeq

  /** The stream's batch ids on the default branch, from the commit messages, newest first. */
  private def batchIds(): Seq[Long] = engine.history.log("r", Revision.Spec(branch))
    .flatMap(e => versioned.spark.write.StreamBatches.batchOf(e.image.message))

  test("append into a keyed table: each micro-batch is one commit, the table equals the oracle") {
    val session = spark; import session.implicits._
    val in = memory[Rec]
    val ckpt = checkpointDir()
    val q = start(in.toDF(), "r.t", ckpt, "primaryKey" -> "id")
    try {
      in.addData((1L to 5L).map(i => Rec(i, s"a$i")): _*); drain(q)
      in.addData((6L to 9L).map(i => Rec(i, s"b$i")): _*); drain(q)
      in.addData(Rec(10L, "c10")); drain(q)
    } finally q.stop()
    assertSameRows(rows(), (1L to 10L).map(i => Row(i, (if (i <= 5) "a" else if (i <= 9) "b" else "c") + i)), "append")
    assert(commits == 3 && batchIds() == Seq(2L, 1L, 0L))
    assert(read("r.t").schema.fieldNames.toSeq == Seq("id", "name"))
  }

  test("upsert: later batches replace their keys' rows") {
    val session = spark; import session.implicits._
    val in = memory[Rec]
    val q = start(in.toDF(), "r.t", checkpointDir(), "primaryKey" -> "id", "upsert" -> "true")
    val oracle = scala.collection.mutable.Map.empty[Long, String]
    try for (batch <- 0 until 4) {
      val recs = (0 until 6).map(j => Rec((batch * 3 + j) % 10L, s"v$batch-$j"))
      recs.foreach(r => oracle(r.id) = r.name)
      in.addData(recs: _*); drain(q)
    } finally q.stop()
    assertSameRows(rows(), oracle.toSeq.map { case (k, v) => Row(k, v) }, "upsert")
    assert(commits == 4)
  }

  test("deleteColumn: a change feed applied by key, one commit per batch") {
    val session = spark; import session.implicits._
    write(Seq(Rec(1, "x"), Rec(2, "y"), Rec(3, "z")).toDF(), "r.t", "primaryKey" -> "id")
    val before = commits
    val in = memory[Cdc]
    val q = start(in.toDF(), "r.t", checkpointDir(), "deleteColumn" -> "del")
    try {
      in.addData(Cdc(1, "x2", del = false), Cdc(2, "", del = true), Cdc(4, "w", del = false)); drain(q)
      in.addData(Cdc(4, "", del = true), Cdc(5, "v", del = false)); drain(q)
    } finally q.stop()
    assertSameRows(rows(), Seq(Row(1L, "x2"), Row(3L, "z"), Row(5L, "v")), "change feed")
    assert(commits == before + 2)
    assert(!read("r.t").columns.contains("del"))
  }

  test("key-less append keeps every row, duplicates included") {
    val session = spark; import session.implicits._
    val in = memory[Rec]
    val q = start(in.toDF(), "r.t", checkpointDir())
    try {
      in.addData(Rec(1, "a"), Rec(1, "a"), Rec(2, "b")); drain(q)
      in.addData(Rec(1, "a"), Rec(3, "c")); drain(q)
    } finally q.stop()
    assertSameRows(rows(), Seq(Row(1L, "a"), Row(1L, "a"), Row(2L, "b"), Row(1L, "a"), Row(3L, "c")), "key-less")
    assert(commits == 2)
  }

  test("a batch replayed after a crash between its commit and the checkpoint commits nothing") {
    val session = spark; import session.implicits._
    val (in, ckpt) = streamed(Seq(Seq(Rec(1, "a"), Rec(2, "b")), Seq(Rec(3, "c"))), "primaryKey" -> "id")
    val head = headHash("r", branch)
    assert(commits == 2)
    // the checkpoint loses batch 1's commit entry: as if the driver died after the table's commit
    val lost = Seq(new File(ckpt, "commits/1"), new File(ckpt, "commits/.1.crc"))
    assert(lost.head.exists())
    lost.foreach(_.delete())
    val q2 = start(in.toDF(), "r.t", ckpt, "primaryKey" -> "id")
    try {
      drain(q2) // batch 1 again: nothing committed (a second commit would be a KEY_EXISTS failure or a duplicate)
      assert(q2.exception.isEmpty, q2.exception.toString)
      assert(headHash("r", branch) == head && commits == 2)
      assert(new File(ckpt, "commits/1").exists(), "the replayed batch was checkpointed")
      in.addData(Rec(4, "d")); drain(q2)
    } finally q2.stop()
    assertSameRows(rows(), Seq(Row(1L, "a"), Row(2L, "b"), Row(3L, "c"), Row(4L, "d")), "exactly once")
    assert(commits == 3 && batchIds() == Seq(2L, 1L, 0L))
  }

  test("a batch replayed after its offsets and commit entries were lost commits nothing (key-less table)") {
    val session = spark; import session.implicits._
    val (in, ckpt) = streamed(Seq(Seq(Rec(1, "a")), Seq(Rec(2, "b"), Rec(2, "b"))))
    Seq("commits/1", "commits/.1.crc", "offsets/1", "offsets/.1.crc").foreach(p => new File(ckpt, p).delete())
    val q2 = start(in.toDF(), "r.t", ckpt)
    try drain(q2) finally q2.stop()
    assertSameRows(rows(), Seq(Row(1L, "a"), Row(2L, "b"), Row(2L, "b")), "key-less, exactly once")
    assert(commits == 2)
  }

  test("the checkpoint of a query that wrote another table is refused, nothing committed") {
    val session = spark; import session.implicits._
    val (in, ckpt) = streamed(Seq(Seq(Rec(1, "a")), Seq(Rec(2, "b"))), "primaryKey" -> "id")
    write(Seq(Rec(9, "z")).toDF(), "r.other", "primaryKey" -> "id")
    val before = repoState("r", "other")
    val q2 = start(in.toDF(), "r.other", ckpt)
    try {
      in.addData(Rec(3, "c"))
      expectError(ErrorClass.StreamCheckpointMismatch, "batch 2", "'other'", "checkpoint")(q2.processAllAvailable())
    } finally q2.stop()
    assert(repoState("r", "other") == before)
    assert(stagedWrites.isEmpty, s"staging leftovers: $stagedWrites")
  }

  test("schema drift in the input is refused naming the column, nothing committed") {
    val session = spark; import session.implicits._
    write(Seq(Rec(1, "a")).toDF(), "r.t", "primaryKey" -> "id")
    refusedBatch(Seq(Wide(2, "b", 7)))(ErrorClass.SchemaMismatch, "extra")
  }

  test("null keys and duplicate keys inside one batch are refused, nothing committed") {
    val session = spark; import session.implicits._
    write(Seq(Rec(1, "a")).toDF(), "r.t", "primaryKey" -> "id")
    refusedBatch(Seq(MaybeKey(Some(2), "b"), MaybeKey(None, "n")), "upsert" -> "true")(ErrorClass.NullPrimaryKey)
    refusedBatch(Seq(Rec(5, "x"), Rec(5, "y")))(ErrorClass.DuplicateKey, "id=5")
    refusedBatch(Seq(Cdc(6, "x", del = false), Cdc(6, "y", del = true)), "deleteColumn" -> "del")(ErrorClass.DuplicateKey)
  }

  test("toTable through the catalog, into a branch") {
    val session = spark; import session.implicits._
    write(Seq(Rec(1, "a")).toDF(), "r.t", "primaryKey" -> "id")
    spark.sql(s"CALL c.system.create_branch(repository => 'r', branch => 'ingest')").collect()
    val in = memory[Rec]
    val q = in.toDF().writeStream.format("versioned").option("checkpointLocation", checkpointDir().getAbsolutePath)
      .option("upsert", "true").toTable("c.r.`t@ingest`")
    try { in.addData(Rec(1, "a2"), Rec(2, "b")); drain(q) } finally q.stop()
    assertSameRows(read("r.t", "ref" -> "ingest").collect().toSeq, Seq(Row(1L, "a2"), Row(2L, "b")), "ingest branch")
    assertSameRows(rows(), Seq(Row(1L, "a")), "the default branch is untouched")
  }

  test("a batch writer racing the stream on disjoint keys: both make progress, nothing lost or duplicated") {
    val session = spark; import session.implicits._
    write(Seq(Rec(0, "seed")).toDF(), "r.t", "primaryKey" -> "id")
    val in = memory[Rec]
    val q = start(in.toDF(), "r.t", checkpointDir(), "upsert" -> "true")
    val batchWriter = new Thread(() => (1 to 4).foreach { i =>
      append(Seq(Rec(1000L + i, s"batch$i")).toDF(), "r.t", "upsert" -> "true")
    })
    try {
      batchWriter.start()
      (1 to 4).foreach { i => in.addData(Rec(i.toLong, s"stream$i")); q.processAllAvailable() }
      batchWriter.join()
      awaitCompaction()
    } finally q.stop()
    val expected = Row(0L, "seed") +: ((1 to 4).map(i => Row(i.toLong, s"stream$i")) ++ (1 to 4).map(i => Row(1000L + i, s"batch$i")))
    assertSameRows(rows(), expected, "stream and batch writer")
    assert(commits == 1 + 4 + 4 && batchIds().sorted == Seq(0L, 1L, 2L, 3L))
  }
}
