package versioned.spark.safety

import java.util.concurrent.{ConcurrentLinkedQueue, Executors, TimeUnit}
import java.util.concurrent.atomic.{AtomicBoolean, AtomicInteger}
import scala.jdk.CollectionConverters._
import org.apache.spark.sql.Row
import versioned.core._
import versioned.spark.{VersionedOptions, VersionedSparkSuite}
import versioned.spark.write.Snapshots

/**
 * Randomized concurrency with the product's defaults (commit-time compaction on): writers on two
 * branches, a repository that reuses the same content and is dropped again and again, materialize and
 * evict, and forced garbage collection, all at once for a bounded time; afterwards every acknowledged
 * image is fully readable and equal to its oracle. On SQLite, and on PostgreSQL when
 * VERSIONED_TEST_POSTGRES_URL is set.
 */
class GcRaceSuite extends VersionedSparkSuite {
  private val seconds = 15

  private def run(metastoreUrl: Option[String]): Unit = {
    metastoreUrl.foreach(spark.conf.set(VersionedOptions.ConfMetastoreUrl, _))
    try race() finally spark.conf.unset(VersionedOptions.ConfMetastoreUrl)
  }

  private def eng: Engine = versioned.spark.Warehouses.engine(spark, Map.empty[String, String])

  private def race(): Unit = {
    val s = spark; import s.implicits._
    val base = (1 to 150).map(i => (i, s"v$i"))
    write(base.toDF("id", "v"), "r.t", "primaryKey" -> "id")
    eng.refs.createBranch("r", "dev", Revision.Spec("main"))
    val acknowledged = new ConcurrentLinkedQueue[(String, Map[Int, String])]()
    val failures = new ConcurrentLinkedQueue[Throwable]()
    val typed = new AtomicInteger()
    val stop = new AtomicBoolean(false)
    val pool = Executors.newFixedThreadPool(5)
    def loop(name: String)(body: => Unit): Unit = pool.submit(new Runnable {
      override def run(): Unit = while (!stop.get()) try body catch {
        case t: Throwable =>
          val v = Iterator.iterate(t)(_.getCause).takeWhile(_ != null).collectFirst { case v: VersionedException => v }
          if (v.exists(e => e.errorClass == ErrorClass.RefConflict || e.errorClass == ErrorClass.ObjectMissing)) typed.incrementAndGet()
          else failures.add(new RuntimeException(s"$name: $t", t))
      }
    })
    def writer(branch: String, seed: Int): Unit = {
      val rnd = new scala.util.Random(seed)
      var state = base.toMap
      loop(s"writer-$branch") {
        val changes = (1 to 1 + rnd.nextInt(8)).map(_ => (rnd.nextInt(220), s"$branch${rnd.nextInt(1000)}"))
          .groupBy(_._1).values.map(_.head).toSeq
        val deletes = changes.filter(_._1 % 5 == 0).map(_._1).toSet
        val df = changes.map { case (k, v) => (k, v, deletes(k)) }.toDF("id", "v", "gone")
        write(df, "r.t", "branch" -> branch, "deleteColumn" -> "gone")
        state = state -- deletes ++ changes.filterNot(c => deletes(c._1))
        acknowledged.add(eng.branchHeadOption("r", branch).get.hash -> state)
      }
    }
    writer("main", 1)
    writer("dev", 2)
    val dropped = new AtomicInteger()
    loop("dropper") { // the same content in a repository that comes and goes: its objects are reused by content
      val name = s"tmp${dropped.incrementAndGet()}"
      write(base.toDF("id", "v"), s"$name.t", "primaryKey" -> "id")
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
    acknowledged.asScala.foreach { case (image, expected) =>
      val got = read("r.t", "image" -> image).collect().map(r => r.getInt(0) -> r.getString(1)).toMap
      assert(got == expected, s"acknowledged image ${image.take(12)} differs from its oracle")
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
