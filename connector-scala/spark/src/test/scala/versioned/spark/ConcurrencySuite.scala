package versioned.spark

import versioned.spark.session.VersionedOptions

import java.util.concurrent.{CyclicBarrier, Executors, TimeUnit}
import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.util.{Failure, Success, Try}
import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import versioned.core.{ErrorClass, RefConflictException, Revision}

/**
 * Concurrent writers on one branch move it by compare-and-swap: each commit either lands or fails
 * with REF_CONFLICT having committed nothing, and no successful commit is lost. Readers pinned to an
 * image are unaffected by commits on top of it.
 */
class ConcurrencySuite extends VersionedTestBase {
  private val schema = new StructType().add("id", IntegerType).add("who", StringType)
  private def batch(who: Int, round: Int): Seq[Row] = (0 until 10).map(i => Row(10000 * (who + 1) + 100 * round + i, s"w$who"))

  private def withPool[T](threads: Int)(f: ExecutionContext => T): T = {
    val pool = Executors.newFixedThreadPool(threads)
    try f(ExecutionContext.fromExecutor(pool)) finally { pool.shutdown(); pool.awaitTermination(60, TimeUnit.SECONDS) }
  }

  private def setup(): Seq[Row] = {
    val base = (0 until 100).map(i => Row(i, "base"))
    write(frame(schema, base), "r.t", "primaryKey" -> "id")
    base
  }

  test("racing appends: every commit lands or fails with REF_CONFLICT, and nothing is lost") {
    val base = setup()
    val rounds = 4
    val barrier = new CyclicBarrier(2)
    val outcomes: Seq[(Int, Int, Try[Unit])] = withPool(2) { implicit ec =>
      val fs = (0 until 2).map { who =>
        Future {
          (0 until rounds).map { round =>
            barrier.await(120, TimeUnit.SECONDS)
            (who, round, Try(write(frame(schema, batch(who, round), 2), "r.t", "message" -> s"w$who r$round")))
          }
        }
      }
      Await.result(Future.sequence(fs), 10.minutes).flatten
    }
    outcomes.collect { case (who, round, Failure(e)) =>
      val v = versionedCause(e).getOrElse(fail(s"writer $who round $round failed without a VersionedException", e))
      assert(v.errorClass == ErrorClass.RefConflict, s"writer $who round $round: ${v.getMessage}")
      assert(v.isInstanceOf[RefConflictException] && v.getMessage.contains("Nothing was committed"), v.getMessage)
    }
    val landed = outcomes.collect { case (who, round, Success(_)) => (who, round) }
    assert(landed.nonEmpty)
    val expected = base ++ landed.flatMap { case (who, round) => batch(who, round) }
    assertReads(read("r.t"), expected, s"after racing appends (landed: $landed)")
    assert(logSize("r") == 1 + landed.size, "one image per successful commit, none for a failed one")
    val messages = engine.history.log("r", Revision.DefaultBranch).map(_.image.message).toSet
    landed.foreach { case (who, round) => assert(messages.contains(s"w$who r$round")) }
    assert(stagedWrites.isEmpty, s"staging leftovers: $stagedWrites")
  }

  test("writers that retry on REF_CONFLICT eventually commit every batch") {
    val base = setup()
    val rounds = 3
    val conflicts = new java.util.concurrent.atomic.AtomicInteger()
    withPool(2) { implicit ec =>
      val fs = (0 until 2).map { who =>
        Future {
          (0 until rounds).foreach { round =>
            var done = false
            var attempts = 0
            while (!done) {
              attempts += 1
              Try(write(frame(schema, batch(who, round), 2), "r.t")) match {
                case Success(_) => done = true
                case Failure(e) if attempts < 20 && versionedCause(e).exists(_.errorClass == ErrorClass.RefConflict) =>
                  conflicts.incrementAndGet()
                case Failure(e) => throw e
              }
            }
          }
        }
      }
      Await.result(Future.sequence(fs), 10.minutes)
    }
    val expected = base ++ (for (who <- 0 until 2; round <- 0 until rounds) yield batch(who, round)).flatten
    assertReads(read("r.t"), expected, s"after retried appends ($conflicts conflicts)")
    assert(logSize("r") == 1 + 2 * rounds)
  }

  test("writers on different branches never conflict") {
    val base = setup()
    engine.refs.createBranch("r", "dev", Revision.DefaultBranch)
    withPool(2) { implicit ec =>
      val fs = Seq("main", "dev").zipWithIndex.map { case (b, who) =>
        Future((0 until 3).foreach(round => write(frame(schema, batch(who, round), 2), "r.t", "branch" -> b)))
      }
      Await.result(Future.sequence(fs), 10.minutes)
    }
    assertReads(read("r.t"), base ++ (0 until 3).flatMap(batch(0, _)), "main")
    assertReads(read("r.t", "ref" -> "dev"), base ++ (0 until 3).flatMap(batch(1, _)), "dev")
    assert(logSize("r") == 4 && logSize("r", "dev") == 4)
  }

  test("racing first writes to a new repository: one creates it, the other lands on top or conflicts") {
    val barrier = new CyclicBarrier(2)
    val outcomes = withPool(2) { implicit ec =>
      val fs = (0 until 2).map { who =>
        Future {
          barrier.await(120, TimeUnit.SECONDS)
          who -> Try(write(frame(schema, batch(who, 0), 2), "fresh.t", "primaryKey" -> "id"))
        }
      }
      Await.result(Future.sequence(fs), 10.minutes)
    }
    outcomes.collect { case (_, Failure(e)) =>
      assert(versionedCause(e).map(_.errorClass).contains(ErrorClass.RefConflict), s"unexpected failure $e")
    }
    val landed = outcomes.collect { case (who, Success(_)) => who }
    assert(landed.nonEmpty)
    assertReads(read("fresh.t"), landed.flatMap(batch(_, 0)), s"after racing first writes (landed: $landed)")
    assert(logSize("fresh") == landed.size && engine.refs.branches("fresh").map(_.shortName) == Seq("main"))
  }

  test("a reader pinned to an image keeps its rows; unpinned readers only ever see whole versions") {
    withConf(VersionedOptions.ConfMaxChain -> "2") {
      val base = setup()
      val pinned = headHash("r").get
      val pinnedDf = read("r.t", "image" -> pinned)
      // the writer's successive versions, known in advance
      val steps: Seq[(Boolean, Seq[Row])] = (0 until 5).map { round =>
        if (round % 2 == 0) true -> (batch(0, round) :+ Row(round, s"upd$round"))
        else false -> base.filter(_.getInt(0) % (round + 2) != 0)
      }
      val versions = steps.scanLeft(base) { case (cur, (upsert, rows)) =>
        if (upsert) (cur.map(r => r.getInt(0) -> r).toMap ++ rows.map(r => r.getInt(0) -> r)).values.toSeq else rows
      }.map(multiset)
      withPool(1) { implicit ec =>
        val writer = Future(steps.foreach { case (upsert, rows) =>
          if (upsert) write(frame(schema, rows), "r.t", "upsert" -> "true") else overwrite(frame(schema, rows), "r.t")
        })
        var reads = 0
        while (!writer.isCompleted || reads < 3) {
          assertReads(read("r.t", "image" -> pinned), base, s"pinned read $reads")
          assertReads(read("r.t", "image" -> pinned.take(10)).filter("id < 10"), base.filter(_.getInt(0) < 10),
            s"pinned filtered read $reads")
          assertReads(pinnedDf, base, s"pinned DataFrame read $reads")
          val seen = multiset(read("r.t").collect().toSeq)
          assert(versions.contains(seen), s"read $reads of main is not one of the committed versions (${seen.size} distinct rows)")
          reads += 1
        }
        Await.result(writer, 10.minutes)
      }
      assert(logSize("r") == 6 && headHash("r").get != pinned)
      assert(multiset(read("r.t").collect().toSeq) == versions.last)
      assertReads(read("r.t", "image" -> pinned), base, "pinned read after the writer finished")
      assertReads(read("r.t", "ref" -> "main~5"), base, "first version by ancestry")
    }
  }
}
