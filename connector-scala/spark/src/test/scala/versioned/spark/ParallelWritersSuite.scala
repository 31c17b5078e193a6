package versioned.spark

import java.util.concurrent.{CyclicBarrier, Executors, TimeUnit}
import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.util.{Failure, Success, Try}
import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import versioned.core.{ErrorClass, Revision}

/**
 * Parallel writers on one repository, as parallel ETL jobs run (default settings, compaction on): commits
 * to different tables, or to different keys of one table, all land (rebased by the engine, or planned
 * again on the new head); read-modify-write changes that overlap fail with a typed REF_CONFLICT, and no
 * acknowledged commit is lost.
 */
class ParallelWritersSuite extends VersionedTestBase {
  override protected def extraConf: Map[String, String] =
    Map("spark.sql.catalog.c" -> classOf[catalog.VersionedCatalog].getName)

  private val schema = new StructType().add("id", IntegerType, nullable = false).add("v", IntegerType)

  private def parallel[T](n: Int)(f: Int => T): Seq[Try[T]] = {
    val pool = Executors.newFixedThreadPool(n)
    implicit val ec: ExecutionContext = ExecutionContext.fromExecutor(pool)
    val barrier = new CyclicBarrier(n)
    try Await.result(Future.sequence((0 until n).map(i => Future { barrier.await(60, TimeUnit.SECONDS); Try(f(i)) })),
      15.minutes)
    finally pool.shutdown()
  }

  private def upsert(rows: Seq[Row], table: String, message: String): Unit =
    write(frame(schema, rows, 1), table, "upsert" -> "true", "message" -> message)

  test("8 writers on 8 different tables, 20 commits each: every commit lands") {
    write(frame(schema, Seq(Row(0, 0))), "r.seed", "primaryKey" -> "id")
    (0 until 8).foreach(i => write(frame(schema, Seq(Row(-1, i))), s"r.t$i", "primaryKey" -> "id"))
    val start = logSize("r")
    val outcomes = parallel(8)(w => (0 until 20).foreach(c => upsert(Seq(Row(c, w * 100 + c)), s"r.t$w", s"w$w c$c")))
    outcomes.foreach { case Failure(e) => fail(s"a writer failed: $e", e); case _ => () }
    assert(logSize("r") == start + 160)
    (0 until 8).foreach(w => assertReads(read(s"r.t$w"), Row(-1, w) +: (0 until 20).map(c => Row(c, w * 100 + c)), s"t$w"))
    val messages = engine.history.log("r", Revision.Spec("main")).map(_.image.message).toSet
    for (w <- 0 until 8; c <- 0 until 20) assert(messages.contains(s"w$w c$c"))
  }

  test("8 writers upserting overlapping keys of one table: only typed conflicts, nothing lost, a serial order") {
    write(frame(schema, (0 until 10).map(k => Row(k, -1))), "r.t", "primaryKey" -> "id")
    val start = logSize("r")
    val outcomes = parallel(8)(w => (0 until 5).map { c =>
      Try(upsert((0 until 10).filter(k => (k + w + c) % 3 == 0).map(k => Row(k, w * 10 + c)), "r.t", s"w$w c$c"))
    }).flatMap { case Success(rs) => rs; case Failure(e) => fail(s"a writer thread failed: $e", e) }
    outcomes.collect { case Failure(e) =>
      assert(versionedCause(e).exists(_.errorClass == ErrorClass.RefConflict), s"untyped failure: $e")
    }
    val log = engine.history.log("r", Revision.Spec("main")).map(_.image.message)
    assert(log.size == start + outcomes.count(_.isSuccess), "one commit per acknowledged write")
    assert(outcomes.count(_.isSuccess) >= 8, s"writes land (re-planned on the new head): ${outcomes.count(_.isSuccess)}")
    // replaying the commits in log order gives the table: nothing was lost or applied on a stale head
    val expected = log.reverse.filter(_.startsWith("w")).foldLeft((0 until 10).map(_ -> -1).toMap) { (m, msg) =>
      val Array(w, c) = msg.split(' ').map(_.drop(1).toInt)
      m ++ (0 until 10).filter(k => (k + w + c) % 3 == 0).map(_ -> (w * 10 + c))
    }
    assertReads(read("r.t"), expected.toSeq.map { case (k, v) => Row(k, v) }, "replayed")
  }

  test("8 writers running UPDATE v = v + 1 on overlapping keys: conflicts are typed, no update is lost") {
    write(frame(schema, (0 until 6).map(k => Row(k, 0))), "r.t", "primaryKey" -> "id")
    val outcomes = parallel(8)(w => (0 until 4).map { c =>
      Try(spark.sql(s"UPDATE c.r.t SET v = v + 1 WHERE id = ${(w + c) % 6}").collect()).map(_ => 1)
    })
    val results = outcomes.flatMap {
      case Success(rs) => rs
      case Failure(e) => fail(s"a writer thread failed: $e", e)
    }
    results.collect { case Failure(e) =>
      val v = versionedCause(e).getOrElse(fail(s"an UPDATE failed without a VersionedException: $e", e))
      assert(v.errorClass == ErrorClass.RefConflict, v.getMessage)
    }
    val landed = results.count(_.isSuccess)
    assert(landed > 0)
    assert(read("r.t").collect().map(_.getInt(1)).sum == landed, "every acknowledged increment is in the table")
  }
}
