package versioned.spark.write

import versioned.core.format.WriteMode

import java.util.concurrent.{Executors, ThreadFactory}
import java.util.concurrent.atomic.AtomicInteger
import scala.collection.mutable
import org.apache.spark.SparkContext
import org.apache.spark.scheduler.{SparkListener, SparkListenerApplicationEnd}
import org.apache.spark.sql.SparkSession
import versioned.core.{Engine, Image, WarehouseConfig}
import versioned.core.format.CarryForward
import versioned.spark.session.Settings

/**
 * Compaction off the commit path (ARCHITECTURE.md, "The path of a commit", step 5). A commit hands its
 * new image here and returns; a daemon thread of the driver then evaluates the policy on it
 * ([[Compactor.maybeCompact]]) and runs what it selects as a named Spark job group, under its own
 * compaction lease.
 *
 *  - One compaction per table at a time: a table's requests are coalesced, only the newest image still
 *    waiting is compacted when the running one ends (compacting an older head would be wasted work).
 *  - Compaction only records an equivalent representation of an existing image in one metastore
 *    transaction ([[versioned.core.Engine.setCompacted]], under the generation lock gc also takes), so
 *    it never moves a branch and never changes an acknowledged commit: a failure or an interruption
 *    before that transaction leaves nothing visible (its objects stay in its lease's staging area or as
 *    unreferenced objects, collected by gc), and a failure is logged, never raised.
 *  - The SparkContext's stop drops waiting requests, cancels running job groups and waits (bounded)
 *    for the threads to leave; [[awaitIdle]] waits for everything submitted (tests, `compact`).
 *  - It yields to writes: its work runs as small jobs (one fragment per task slot, at most half the slots), and
 *    before each it waits while a write is in progress in the driver (at most `spark.versioned.compaction.yieldMs`).
 *  - It is paced ([[Pacing]]): between its jobs it rests so that it works at most
 *    `spark.versioned.compaction.dutyCycle` of the time, spreading a burst of work over the next commits.
 *  - `spark.versioned.compaction.background=false` runs the same step inline after each commit.
 */
private[versioned] object Compactions {
  private val log = org.slf4j.LoggerFactory.getLogger(getClass)

  private final case class Key(warehouse: WarehouseConfig, repo: String, table: String)
  private final case class Request(spark: SparkSession, engine: Engine, req: WriteRequest, image: Image, settings: Settings)

  private val lock = new Object
  private val waiting = mutable.LinkedHashMap.empty[Key, Request]
  /** Tables with a thread compacting them, and the job group of that thread. */
  private val running = mutable.Map.empty[Key, (SparkContext, String)]
  private val watched = mutable.Set.empty[SparkContext]
  private val ids = new AtomicInteger()
  private val pool = Executors.newCachedThreadPool(new ThreadFactory {
    def newThread(r: Runnable): Thread = {
      val t = new Thread(r, s"versioned-compaction-${ids.incrementAndGet()}")
      t.setDaemon(true)
      t
    }
  })

  /** Compaction of `req`'s table after the commit of `image`, in the background or inline per `settings`. */
  def afterCommit(spark: SparkSession, engine: Engine, req: WriteRequest, image: Image, settings: Settings): Unit =
    if (!settings.backgroundCompaction) runLogged(Request(spark, engine, req, image, settings), Int.MaxValue, () => ())
    else submit(Request(spark, engine, req, image, settings))

  /**
   * Task slots each job of a background compaction (DIFF merges, SNAP rewrites) may take: half the session's
   * default parallelism (at least one), so that commits running meanwhile are not queued behind it in Spark's
   * FIFO scheduler.
   */
  private def backgroundSlots(sc: SparkContext): Int = math.max(1, sc.defaultParallelism / 2)

  /**
   * Before each job of a background compaction: waits while a write is in progress in this driver
   * ([[versioned.core.Leases.writesInProgress]]: a DataFrame write, DML, a commit through the API, a merge),
   * at most `maxMs` each time (writes that never pause must not starve compaction), and not once the
   * SparkContext stops. A compaction's jobs are small (one fragment per task slot), so a commit that starts
   * while one runs shares the host with it only until that job ends.
   */
  private def yieldToWrites(sc: SparkContext, maxMs: Long): Unit =
    waitWhile(sc, maxMs * 1000000L, stepNs = 2000000L)(versioned.core.Leases.writesInProgress)

  /**
   * Sleeps in steps of at most `stepNs` while `cond` holds, for at most `maxNs` nanoseconds in all, and not once
   * the SparkContext stops: the waits of a background compaction (yielding to writes, pacing's rests).
   */
  private def waitWhile(sc: SparkContext, maxNs: Long, stepNs: Long)(cond: => Boolean): Unit = {
    val deadline = System.nanoTime() + maxNs
    var left = maxNs
    while (left > 0 && cond && !sc.isStopped) {
      val step = math.min(left, stepNs)
      Thread.sleep(step / 1000000L, (step % 1000000L).toInt)
      left = deadline - System.nanoTime()
    }
  }

  private def submit(r: Request): Unit = lock.synchronized {
    val sc = r.spark.sparkContext
    if (sc.isStopped) return
    if (watched.add(sc)) sc.addSparkListener(new SparkListener {
      override def onApplicationEnd(end: SparkListenerApplicationEnd): Unit = stop(sc)
    })
    val key = Key(r.engine.config, r.req.ident.repo, r.req.ident.table)
    waiting(key) = r
    lock.notifyAll() // a compaction may wait for a newer request (nextBuildingOn)
    if (!running.contains(key)) {
      running(key) = (sc, s"versioned-compaction-${java.util.UUID.randomUUID()}")
      pool.execute(() => drain(key))
    }
  }

  /** Runs the table's newest waiting request until none waits, then marks the table idle. */
  private def drain(key: Key): Unit = {
    def next(): Option[Request] = take(key)
    var r = next()
    try while (r.isDefined) {
      // the image compacted last: carried forward from when the head is far ahead
      val last = CompactedHints.image(r.get.engine, key.repo, key.table)
      inGroup(r.get, lock.synchronized(running.get(key).map(_._2)).getOrElse(""), last)
      val recorded = CompactedHints.image(r.get.engine, key.repo, key.table)
      val engine = r.get.engine
      r = recorded.filter(_ => recorded != last).fold(next())(nextBuildingOn(key, engine, _))
    } finally if (r.isDefined) lock.synchronized { // left by an error: the table is idle (the next commit retries)
      waiting.remove(key); running.remove(key); lock.notifyAll()
    }
  }

  /** The table's newest waiting request, removed; none: the table is marked idle. */
  private def take(key: Key): Option[Request] = lock.synchronized {
    val r = waiting.remove(key)
    if (r.isEmpty) { running.remove(key); lock.notifyAll() }
    r
  }

  /**
   * After this thread recorded `hint`'s compacted form: the next request, preferring one planned on that form. A
   * commit planned before it was recorded builds on the logical chains or the form recorded before; the commits
   * planned after it build on `hint`'s form ([[CommitPlanner]]'s carried base) and do not extend that commit's
   * chains, so a form recorded for it could not be carried to them, and their chains would grow again. While the
   * waiting request's version does not build on `hint`'s form ([[CarryForward.buildsOn]]), a newer request is
   * awaited while a write is in progress in this driver (or for the first [[IdleGraceMs]]: a stream's next batch
   * starts its write within it), at most [[StaleWaitMs]] in all; then the waiting request is taken.
   */
  private def nextBuildingOn(key: Key, engine: Engine, hint: String): Option[Request] = {
    val start = System.nanoTime()
    lazy val anchor = engine.tableIfHeld(key.repo, hint, key.table)
    def buildsOn(w: Request): Boolean = anchor.forall(a => engine.tableIfHeld(key.repo, w.image.hash, key.table)
      .forall(CarryForward.buildsOn(_, a)))
    var checked = Option.empty[String]
    while (true) {
      val w = lock.synchronized(waiting.get(key))
      val waited = (System.nanoTime() - start) / 1000000L
      val idle = waited >= IdleGraceMs && !versioned.core.Leases.writesInProgress
      if (w.isEmpty || waited >= StaleWaitMs || idle || w.get.spark.sparkContext.isStopped) return take(key)
      val image = w.get.image.hash
      if (!checked.contains(image)) {
        if (scala.util.Try(buildsOn(w.get)).getOrElse(true)) return take(key)
        checked = Some(image)
      }
      lock.synchronized(if (waiting.get(key).exists(_.image.hash == image)) lock.wait(PollMs))
    }
    None
  }

  /** How long a compaction waits in all for a commit planned on the form it recorded ([[nextBuildingOn]]). */
  val StaleWaitMs = 1000L
  /** How long it waits for one when no write is in progress in the driver. */
  val IdleGraceMs = 50L
  private val PollMs = 10L

  /** One request in this thread, as Spark job group `group` (cancelled when the SparkContext stops). */
  private def inGroup(r: Request, group: String, lastCompacted: Option[String]): Unit = {
    val sc = r.spark.sparkContext
    if (sc.isStopped) return
    // a pool thread inherits the local properties of the thread that created it (a write's SQL execution)
    Seq("spark.sql.execution.id", "spark.sql.execution.root.id", "spark.job.description", "spark.scheduler.pool")
      .foreach(sc.setLocalProperty(_, null))
    sc.clearJobTags()
    SparkSession.setActiveSession(r.spark)
    sc.setJobGroup(group, s"versioned: compaction ${r.req.ident}@${r.image.shortHash}", interruptOnCancel = true)
    val pacing = new Pacing(r.settings.compactionDutyCycle, ns => waitWhile(sc, ns, stepNs = 10000000L)(true))
    try runLogged(r, backgroundSlots(sc), () => pacing.rest(() => yieldToWrites(sc, r.settings.compactionYieldMs)), lastCompacted)
    finally { sc.clearJobGroup(); SparkSession.clearActiveSession() }
  }

  /** The policy and the compaction it selects; a failure is logged, never raised (the commit stands). */
  private def runLogged(r: Request, slots: Int, pause: () => Unit, lastCompacted: Option[String] = None): Unit =
    try { Compactor.maybeCompact(r.spark, r.engine, r.req, r.image, r.settings, slots, pause, lastCompacted); () }
    catch {
      // the table (or its repository) was dropped after the commit: nothing left to compact
      case e @ (_: versioned.core.TableNotFoundException | _: versioned.core.RepositoryNotFoundException) =>
        log.info(s"versioned: no compaction after commit ${r.image.shortHash} of ${r.req.ident}: ${e.getMessage}")
      case e @ (scala.util.control.NonFatal(_) | _: InterruptedException) =>
        log.warn(s"versioned: compaction after commit ${r.image.shortHash} of ${r.req.ident} failed; the commit " +
          s"stands and the next commit of the table (or compact) retries it: $e", e)
    }

  /** Waits until no compaction is waiting or running (at most `timeoutMs`; <= 0: no limit). True when idle. */
  def awaitIdle(timeoutMs: Long = 0L): Boolean = lock.synchronized {
    val deadline = System.currentTimeMillis() + timeoutMs
    while ((waiting.nonEmpty || running.nonEmpty) && (timeoutMs <= 0 || System.currentTimeMillis() < deadline))
      lock.wait(if (timeoutMs <= 0) 0L else math.max(1L, deadline - System.currentTimeMillis()))
    waiting.isEmpty && running.isEmpty
  }

  /** Waits until no compaction of `repo`.`table` in `engine`'s warehouse is waiting or running. */
  def awaitTable(engine: Engine, repo: String, table: String): Unit = lock.synchronized {
    val key = Key(engine.config, repo, table)
    while (waiting.contains(key) || running.contains(key)) lock.wait()
  }

  /**
   * `compact`: waits for the background compaction of each table of `branch`'s head (`table`: one of
   * them), then evaluates the policy on that head now and runs what it selects before returning.
   * Returns (table, image, objects written) per table the policy compacted.
   */
  def compactNow(spark: SparkSession, engine: Engine, repo: String, branch: Option[String], table: Option[String],
                 location: Map[String, String]): Seq[(String, String, Int)] = {
    val settings = Settings.of(spark)
    val b = branch.getOrElse(engine.defaultBranchOrConfig(repo))
    val names = engine.writableHead(repo, b).toSeq.flatMap(h => engine.tables(repo, h.hash).map(_.name))
    table.filterNot(names.contains).foreach(t => throw new versioned.core.TableNotFoundException(repo, t, s"branch $b"))
    table.fold(names)(Seq(_)).flatMap { name =>
      awaitTable(engine, repo, name)
      // the head again: a commit may have moved the branch meanwhile
      engine.writableHead(repo, b).flatMap { head =>
        val req = WriteRequest(versioned.spark.session.TableIdent(repo, name), Some(b), WriteMode.Changes, None, upsert = false,
          "", "", location)
        val written = versioned.spark.session.Jobs.described(spark, s"compaction $repo.$name@${head.shortHash}")(
          Compactor.maybeCompact(spark, engine, req, head, settings))
        Option.when(written > 0)((name, head.hash, written))
      }
    }
  }

  /** The SparkContext `sc` stops: drops its waiting requests, cancels its running jobs, waits up to a minute. */
  private def stop(sc: SparkContext): Unit = {
    val groups = lock.synchronized {
      waiting.filterInPlace { case (_, r) => r.spark.sparkContext ne sc }
      watched.remove(sc)
      running.values.collect { case (c, g) if c eq sc => g }.toSeq
    }
    groups.foreach(g => scala.util.Try(sc.cancelJobGroup(g)))
    lock.synchronized {
      val deadline = System.currentTimeMillis() + 60000L
      while (running.values.exists(_._1 eq sc) && System.currentTimeMillis() < deadline)
        lock.wait(math.max(1L, deadline - System.currentTimeMillis()))
    }
  }
}
