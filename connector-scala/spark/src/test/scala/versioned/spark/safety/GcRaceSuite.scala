package versioned.spark.safety

import java.util.concurrent.{ConcurrentLinkedQueue, Executors, TimeUnit}
import java.util.concurrent.atomic.{AtomicBoolean, AtomicInteger}
import scala.jdk.CollectionConverters._
import org.apache.spark.sql.Row
import versioned.core._
import versioned.spark.VersionedSparkSuite
import versioned.spark.session.VersionedOptions
import versioned.spark.write.Snapshots

/**
 * Randomized concurrency with the product's defaults (background compaction after every commit, racing
 * everything below; the writers do not wait for it): three writers racing
 * on `main` (each owns the keys of one residue class, so each has an oracle of its own keys), one on
 * `dev`, a repository that reuses the same content and is dropped again and again, materialize and
 * evict, and forced garbage collection, all at once for a bounded time. Afterwards every acknowledged
 * image is in its branch's history (no commit lost to the compare-and-swap) and fully readable, equal
 * to its writer's oracle. On SQLite, and on PostgreSQL when VERSIONED_TEST_POSTGRES_URL is set.
 */
class GcRaceSuite extends VersionedSparkSuite {
  private val seconds = 15

  private def run(metastoreUrl: Option[String]): Unit = {
    metastoreUrl.foreach(spark.conf.set(VersionedOptions.ConfMetastoreUrl, _))
    try race() finally spark.conf.unset(VersionedOptions.ConfMetastoreUrl)
  }

  private def eng: Engine = versioned.spark.session.Warehouses.engine(spark, Map.empty[String, String])

  private def race(): Unit = {
    val s = spark; import s.implicits._
    val base = (1 to 150).map(i => (i, s"v$i"))
    write(base.toDF("id", "v"), "r.t", "primaryKey" -> "id")
    eng.refs.createBranch("r", "dev", Revision.Spec("main"))
    // (branch, image, keys the writer owns, the writer's oracle of those keys)
    val acknowledged = new ConcurrentLinkedQueue[(String, String, Int => Boolean, Map[Int, String])]()
    val failures = new ConcurrentLinkedQueue[Throwable]()
    val typed = new AtomicInteger()
    val stop = new AtomicBoolean(false)
    val pool = Executors.newFixedThreadPool(7)
    def loop(name: String)(body: => Unit): Unit = pool.submit(new Runnable {
      override def run(): Unit = while (!stop.get()) try body catch {
        case t: Throwable =>
          val v = Iterator.iterate(t)(_.getCause).takeWhile(_ != null).collectFirst { case v: VersionedException => v }
          if (v.exists(e => e.errorClass == ErrorClass.RefConflict || e.errorClass == ErrorClass.ObjectMissing)) typed.incrementAndGet()
          else failures.add(new RuntimeException(s"$name: $t", t))
      }
    })
    def writer(branch: String, seed: Int, owns: Int => Boolean): Unit = {
      val rnd = new scala.util.Random(seed)
      var state = base.toMap.filter(kv => owns(kv._1))
      val keys = (1 to 220).filter(owns)
      loop(s"writer-$branch-$seed") {
        val changes = (1 to 1 + rnd.nextInt(8)).map(_ => (keys(rnd.nextInt(keys.size)), s"$branch${rnd.nextInt(1000)}"))
          .groupBy(_._1).values.map(_.head).toSeq
        val deletes = changes.filter(_ => rnd.nextInt(5) == 0).map(_._1).toSet
        val df = changes.map { case (k, v) => (k, v, deletes(k)) }.toDF("id", "v", "gone")
        val message = s"w$seed ${rnd.nextLong()}"
        // not waiting for its background compaction: compactions race the other writers and gc
        append(df, "r.t", "branch" -> branch, "deleteColumn" -> "gone", "message" -> message)
        val next = state -- deletes ++ changes.filterNot(c => deletes(c._1))
        // the write returned: its commit (found by its unique message) is on the branch, unless it changed none of
        // the writer's rows (values it already had, deletes of absent keys): then there was nothing to commit
        val mine = eng.history.log("r", Revision.Spec(branch), 200).map(_.image).find(_.message == message)
        if (mine.isDefined || next != state) acknowledged.add((branch,
          mine.getOrElse(throw new AssertionError(s"acknowledged commit '$message' is not on $branch")).hash, owns, next))
        state = next
      }
    }
    (0 until 3).foreach(w => writer("main", w, _ % 3 == w))
    writer("dev", 3, _ => true)
    val dropped = new AtomicInteger()
    loop("dropper") { // the same content in a repository that comes and goes: its objects are reused by content
      val name = s"tmp${dropped.incrementAndGet()}"
      append(base.toDF("id", "v"), s"$name.t", "primaryKey" -> "id")
      eng.dropRepository(name)
    }
    loop("snapshots") { Snapshots.materialize(spark, eng, "r", Map.empty); eng.maintenance.evict("r") }
    loop("gc") { eng.maintenance.collectGarbage(None, 0L, force = true, dryRun = false) }
    Thread.sleep(seconds * 1000L)
    stop.set(true)
    pool.shutdown()
    assert(pool.awaitTermination(300, TimeUnit.SECONDS))
    assert(failures.isEmpty, failures.asScala.map(t => s"$t\n${t.getCause.getStackTrace.take(8).mkString("\n")}").mkString("\n"))
    assert(acknowledged.size >= 4, s"too few commits: ${acknowledged.size}")
    eng.maintenance.collectGarbage(None, 0L, force = true, dryRun = false)
    val history = Seq("main", "dev").map(b => b -> eng.history.log("r", Revision.Spec(b)).map(_.image.hash).toSet).toMap
    acknowledged.asScala.foreach { case (branch, image, owns, expected) =>
      assert(history(branch)(image), s"acknowledged image ${image.take(12)} is not in the history of $branch")
      val got = read("r.t", "image" -> image).collect().map(r => r.getInt(0) -> r.getString(1)).toMap
      assert(got.filter(kv => owns(kv._1)) == expected, s"acknowledged image ${image.take(12)} differs from its oracle")
    }
    info(s"${acknowledged.size} acknowledged commits, ${dropped.get} dropped repositories, $typed typed conflicts; none lost")
  }

  test("writers, drops, materialize, evict and forced gc together lose no acknowledged commit (SQLite)") {
    run(None)
  }

  test("the same on PostgreSQL") {
    TestMetastores.postgresAdminUrl match {
      case None => cancel("VERSIONED_TEST_POSTGRES_URL is not set")
      case Some(admin) =>
        val (db, url) = TestMetastores.createDatabase(admin)
        try run(Some(url)) finally TestMetastores.dropDatabase(admin, db)
    }
  }
}

/** `TableApi.upsert` returns the commit it made, not whatever the branch head is once it returns. */
class UpsertResultSuite extends VersionedSparkSuite {
  test("concurrent upserts on one branch each return their own commit") {
    val s = spark; import s.implicits._
    write(Seq((0, "a")).toDF("id", "v"), "r.t", "primaryKey" -> "id")
    val pool = Executors.newFixedThreadPool(3)
    val results = new ConcurrentLinkedQueue[(String, String)]() // (returned hash, message)
    (1 to 3).foreach { w =>
      pool.submit(new Runnable {
        override def run(): Unit = (1 to 4).foreach { i =>
          val msg = s"w$w-$i"
          try results.add(versioned.spark.api.TableApi.upsert(spark, null, Seq((w * 10 + i, msg)).toDF("id", "v"), "r.t",
            null, msg, null, null, null, null) -> msg)
          catch { case t: Throwable if Iterator.iterate(t)(_.getCause).takeWhile(_ != null)
            .exists { case v: VersionedException => v.errorClass == ErrorClass.RefConflict; case _ => false } => () }
        }
      })
    }
    pool.shutdown()
    assert(pool.awaitTermination(300, TimeUnit.SECONDS))
    assert(results.size >= 3)
    results.asScala.foreach { case (hash, msg) =>
      assert(engine.resolve("r", Revision.Spec(hash)).message == msg, s"upsert '$msg' returned another commit")
    }
  }
}
