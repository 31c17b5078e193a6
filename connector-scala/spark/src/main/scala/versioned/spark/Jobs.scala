package versioned.spark

import java.util.concurrent.{Callable, ExecutionException, Executors}
import scala.jdk.CollectionConverters._
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

  /** Threads of [[onDriver]]: small work is more latency (file creation, footer reads) than CPU. */
  private val DriverThreads = 8

  /**
   * `f` over `items` on the driver, concurrently, without a Spark job (small commits and merges: a job's
   * scheduling costs more than the work). The first failure is rethrown.
   */
  def onDriver[A, B](items: Seq[A])(f: A => B): Seq[B] =
    if (items.size <= 1) items.map(f)
    else {
      val pool = Executors.newFixedThreadPool(math.min(DriverThreads, items.size), (r: Runnable) => {
        val t = new Thread(r, "versioned-driver-task"); t.setDaemon(true); t
      })
      try pool.invokeAll(items.map(a => (() => f(a)): Callable[B]).asJava).asScala.toSeq.map { fut =>
        try fut.get() catch { case e: ExecutionException => throw e.getCause }
      } finally pool.shutdownNow()
    }
}
