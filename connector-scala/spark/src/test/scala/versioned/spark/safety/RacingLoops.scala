package versioned.spark.safety

import java.util.concurrent.{ConcurrentLinkedQueue, Executors, TimeUnit}
import java.util.concurrent.atomic.AtomicBoolean
import scala.jdk.CollectionConverters._
import versioned.core.Engine

/**
 * Threads of a race suite: each [[loop]] runs its body again and again (a failure is kept, the loop goes on) until
 * [[runWithGc]] stops them, after running them for a while beside a loop of forced garbage collection.
 */
private[safety] final class RacingLoops(loops: Int) {
  private val failures = new ConcurrentLinkedQueue[Throwable]()
  private val stop = new AtomicBoolean(false)
  private val pool = Executors.newFixedThreadPool(loops + 1)

  def loop(name: String)(body: => Unit): Unit = pool.submit(new Runnable {
    override def run(): Unit = while (!stop.get()) try body catch {
      case t: Throwable => failures.add(new RuntimeException(s"$name: $t", t))
    }
  })

  /** Records a failure found by a loop's own check. */
  def fail(t: Throwable): Unit = failures.add(t)

  /** Runs the loops `seconds` beside forced gc of `repo` (zero retention), stops them; the failures, as text. */
  def runWithGc(engine: Engine, repo: String, seconds: Int): Seq[String] = {
    loop("gc")(engine.maintenance.collectGarbage(Some(repo), 0, force = true, dryRun = false))
    Thread.sleep(seconds * 1000L)
    stop.set(true)
    pool.shutdown()
    if (!pool.awaitTermination(5, TimeUnit.MINUTES)) failures.add(new IllegalStateException("the loops did not stop"))
    failures.asScala.map(_.toString).toSeq
  }
}
