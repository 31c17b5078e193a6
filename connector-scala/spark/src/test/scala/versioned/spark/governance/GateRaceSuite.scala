package versioned.spark.governance

import java.util.concurrent.{ConcurrentLinkedQueue, Executors, TimeUnit}
import java.util.concurrent.atomic.AtomicBoolean
import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._
import scala.util.{Failure, Random, Success, Try}
import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import versioned.core.{ErrorClass, Revision}
import versioned.spark.catalog.CatalogSuiteBase
import versioned.spark.merge.MergeOutcome

/**
 * Writers and publishers racing on a protected branch (randomized, seeded): writers upsert rows (some of them
 * failing a required check) into their own source branches and try to write to the protected branch directly;
 * publishers publish the source branches into it. The protected branch only ever points at its first image or at
 * an image an acknowledged publish landed, each of which passes the checks; every refused operation has its typed
 * error; once the writers' bad rows are fixed and published, every acknowledged write is on the protected branch.
 */
class GateRaceSuite extends CatalogSuiteBase {
  private def main: String = engine.defaultBranch("r")
  private val schema = new StructType().add("id", IntegerType).add("price", IntegerType)

  private def upsert(rows: Seq[(Int, Int)], branch: String): Unit =
    spark.createDataFrame(java.util.Arrays.asList(rows.map { case (k, p) => Row(k, p) }: _*), schema)
      .write.format("versioned").option("branch", branch).option("upsert", "true").mode("append").save("r.orders")

  private def publish(branch: String) =
    Publisher.publish(spark, engine, "r", branch, main, deleteBranch = false, dryRun = false, None, "publisher")

  private def errorClass(t: Throwable): String = versionedCause(t).map(_.errorClass).getOrElse(throw t)

  test("writers and publishers racing on a protected branch: it moves only through passing gates, nothing acknowledged is lost") {
    sql("CREATE NAMESPACE c.r")
    sql("CREATE TABLE c.r.orders (id INT, price INT, PRIMARY KEY (id))")
    sql("INSERT INTO c.r.orders VALUES (1, 10), (2, 20)")
    sql("CALL c.system.add_check(repository => 'r', name => 'positive', table => 'orders', expression => 'price >= 0')")
    sql("CALL c.system.add_check(repository => 'r', name => 'bounded', expression => 'SELECT id FROM orders WHERE price > 1000')")
    val writers = Seq("w0", "w1")
    writers.foreach(w => sql(s"CALL c.system.create_branch('r', '$w')"))
    sql(s"CALL c.system.protect_branch(repository => 'r', pattern => '$main', checks => 'positive,bounded')")
    val first = headOf("r", main).get

    val acknowledged = new ConcurrentLinkedQueue[(String, Int, Int)]() // branch, key, price
    val published = new ConcurrentLinkedQueue[String]()
    val refused = new ConcurrentLinkedQueue[String]()
    val heads = new ConcurrentLinkedQueue[String]()
    val running = new AtomicBoolean(true)
    val pool = Executors.newFixedThreadPool(5)
    implicit val ec: ExecutionContext = ExecutionContext.fromExecutor(pool)
    try {
      val watcher = Future { while (running.get()) { headOf("r", main).foreach(heads.add); Thread.sleep(20) } }
      val writing = writers.zipWithIndex.map { case (w, who) =>
        Future {
          val rnd = new Random(37 + who)
          (0 until 5).foreach { round =>
            val rows = (0 until 3).map(j => (1000 * (who + 1) + 10 * round + j, rnd.nextInt(60) - 8))
            upsert(rows, w)
            rows.foreach { case (k, p) => acknowledged.add((w, k, p)) }
            if (round % 2 == 0) Try(upsert(Seq(9000 + who -> 1), main)) match {
              case Failure(e) => refused.add(errorClass(e))
              case Success(_) => fail(s"a direct write to the protected branch $main landed")
            }
          }
        }
      }
      val publishing = (0 until 2).map { p =>
        Future {
          val rnd = new Random(73 + p)
          (0 until 5).foreach { _ =>
            Try(publish(writers(rnd.nextInt(writers.size)))) match {
              case Success(out) => out.merge.commitHash.foreach(published.add)
              case Failure(e) => refused.add(errorClass(e))
            }
          }
        }
      }
      Await.result(Future.sequence(writing ++ publishing), 20.minutes)
      running.set(false)
      Await.result(watcher, 1.minute)
    } finally { running.set(false); pool.shutdown(); pool.awaitTermination(60, TimeUnit.SECONDS) }

    // refusals are the gates' typed errors only: a direct write, a failing check, a publish that lost a race
    val allowed = Set(ErrorClass.ProtectedRef, ErrorClass.CheckFailed, ErrorClass.RefConflict)
    assert(refused.asScala.forall(allowed.contains), s"unexpected refusals: ${refused.asScala.toSeq}")
    assert(refused.asScala.count(_ == ErrorClass.ProtectedRef) == 2 * 3)
    // the protected branch only ever pointed at its first image or at an image a publish landed through the gates
    val landed = published.asScala.toSet
    assert(heads.asScala.toSet.subsetOf(landed + first), s"heads seen: ${heads.asScala.toSet -- landed - first}")
    landed.foreach { h =>
      val runs = sql(s"CALL c.system.run_checks(repository => 'r', ref => '$h')").collect()
      assert(runs.length == 2 && runs.forall(_.getAs[String]("status") == "pass"), s"image $h: ${runs.toSeq}")
      val gate = sql(s"SELECT status FROM c.r.`$$checks` WHERE image = '$h' AND purpose = 'gate:$main'").collect()
      assert(gate.nonEmpty && gate.forall(_.getString(0) == "pass"), s"the gate's runs of $h")
    }
    val line = engine.history.log("r", Revision.Spec(main)).map(_.image.hash).toSet
    assert(landed.subsetOf(line))

    // nothing acknowledged is lost: fix the bad rows on each source branch, publish, and every write is there
    writers.foreach { w =>
      sql(s"UPDATE c.r.`orders@$w` SET price = -price WHERE price < 0")
      assert(Set(MergeOutcome.Merged, MergeOutcome.FastForward, MergeOutcome.UpToDate).contains(publish(w).status))
    }
    val expected = Seq(1 -> 10, 2 -> 20) ++ acknowledged.asScala.toSeq.map { case (_, k, p) => k -> math.abs(p) }
    val rows = sql("SELECT id, price FROM c.r.orders").collect().map(r => r.getInt(0) -> r.getInt(1)).toSeq
    assert(rows.sorted == expected.sorted)
  }
}
