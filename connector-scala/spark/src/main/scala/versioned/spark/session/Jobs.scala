package versioned.spark.session

import java.util.concurrent.{Callable, ExecutionException}
import org.apache.spark.sql.SparkSession

/**
 * Names the Spark jobs the connector starts, so the console and the UI say what they do; runs small
 * work on the driver instead of in a job.
 */
private[versioned] object Jobs {
  private val DescriptionKey = "spark.job.description" // SparkContext's job description property

  /** Runs `body` with job description `versioned: <what>`, then restores the caller's description. */
  def described[T](spark: SparkSession, what: String)(body: => T): T = {
    val sc = spark.sparkContext
    val previous = sc.getLocalProperty(DescriptionKey)
    sc.setJobDescription(s"versioned: $what")
    try body finally sc.setLocalProperty(DescriptionKey, previous)
  }

  /**
   * Names the jobs Spark runs for a DSv2 write of the connector (the stages of its input, then its write tasks):
   * Spark runs them on the thread of the write between asking for the batch write ([[begin]]) and committing or
   * aborting it ([[end]]). A description the caller set stays (the jobs are then theirs).
   */
  final class WriteJobs(what: String) {
    @volatile private var set = false
    def begin(): Unit = SparkSession.getActiveSession.map(_.sparkContext).foreach { sc =>
      if (!set && sc.getLocalProperty(DescriptionKey) == null) { sc.setJobDescription(s"versioned: $what"); set = true }
    }
    def end(): Unit = if (set) {
      set = false
      SparkSession.getActiveSession.foreach(_.sparkContext.setLocalProperty(DescriptionKey, null))
    }
  }

  /** Threads of one [[onDriver]] call: small work is more latency (file creation, footer reads) than CPU. */
  val DriverThreads = 8

  /** The driver's threads for [[onDriver]], shared by its calls (kept a minute when idle; a call can nest). */
  private val driverPool = java.util.concurrent.Executors.newCachedThreadPool((r: Runnable) => {
    val t = new Thread(r, "versioned-driver-task"); t.setDaemon(true); t
  })

  /**
   * Work handed to a second thread of the driver piece by piece, run one piece after another in the order given
   * (while the caller goes on with its own part: an object's content hash beside its Parquet encoding). [[await]]
   * waits for every piece and rethrows the first failure (the pieces after it are skipped); [[cancel]] skips the
   * pieces not started. Used by one thread.
   */
  final class InOrder {
    private var last = java.util.concurrent.CompletableFuture.completedFuture[Void](null)
    @volatile private var cancelled = false

    def submit(piece: () => Unit): Unit = {
      val run: Runnable = () => if (!cancelled) piece()
      last = last.thenRunAsync(run, driverPool)
    }

    def await(): Unit = try last.join() catch {
      case e: java.util.concurrent.CompletionException if e.getCause != null => throw e.getCause
    }

    def cancel(): Unit = cancelled = true
  }

  /**
   * `f` over `items` on the driver, up to `threads` (default [[DriverThreads]]) at a time, without a Spark job
   * (small commits and merges: a job's scheduling costs more than the work). Each item runs with the caller's
   * active session and class loader. Results are in the order of `items`; once every started item has ended,
   * the first failure is rethrown (the remaining items are skipped).
   */
  def onDriver[A, B](items: Seq[A], threads: Int = DriverThreads)(f: A => B): Seq[B] =
    if (items.size <= 1 || threads <= 1) items.map(f)
    else {
      val session = SparkSession.getActiveSession
      val loader = Thread.currentThread().getContextClassLoader
      val next = new java.util.concurrent.atomic.AtomicInteger()
      val failed = new java.util.concurrent.atomic.AtomicBoolean()
      val results = new Array[Any](items.size)
      // each worker takes the next item until none is left (or one failed)
      val worker: Callable[Unit] = () => {
        val thread = Thread.currentThread()
        thread.setContextClassLoader(loader)
        session.fold(SparkSession.clearActiveSession())(SparkSession.setActiveSession)
        try {
          var i = next.getAndIncrement()
          while (i < items.size && !failed.get()) {
            try results(i) = f(items(i)) catch { case e: Throwable => failed.set(true); throw e }
            i = next.getAndIncrement()
          }
        } finally SparkSession.clearActiveSession()
      }
      val outcomes = Seq.fill(math.min(threads, items.size))(worker).map(driverPool.submit(_))
        .map(fut => scala.util.Try(fut.get()))
      outcomes.collectFirst { case scala.util.Failure(e: ExecutionException) => throw e.getCause
                              case scala.util.Failure(e) => throw e }
      results.toSeq.asInstanceOf[Seq[B]]
    }
}
