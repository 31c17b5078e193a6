package versioned.spark.write

/**
 * Paces a background compaction so that it takes at most `duty` (0 < duty <= 1) of one thread's time:
 * [[rest]], called between its units of work (a group of fragments), sleeps `busy * (1 - duty) / duty`,
 * where `busy` is the time since the previous rest ended. A compaction's work arrives in bursts (every
 * fragment reaches the consolidation threshold at the same commit under uniform churn); pacing spreads
 * a burst over the next commits instead of taking a core from one of them. Like a compaction
 * throughput limit, but without a size to tune: it scales with the host.
 *
 * `sleep` sleeps the given nanoseconds (the caller's, so that it can end early when the SparkContext stops);
 * `clock` (nanoseconds) is a parameter for tests.
 */
private[write] final class Pacing(duty: Double, sleep: Long => Unit, clock: () => Long = () => System.nanoTime()) {
  require(duty > 0 && duty <= 1, s"duty $duty")
  private var since = clock()

  /** The rest owed for the work since the previous rest (nanoseconds). */
  def owed(): Long = if (duty >= 1) 0L else math.min(Pacing.MaxRestNanos, ((clock() - since) * ((1 - duty) / duty)).toLong)

  /** Rests for the work since the previous rest, then runs `thenWait` (waits that are not work), and starts counting again. */
  def rest(thenWait: () => Unit = () => ()): Unit = {
    val ns = owed()
    if (ns > 0) sleep(ns)
    thenWait()
    since = clock()
  }
}

private[write] object Pacing {
  /** Most one rest lasts: a unit of work longer than a minute (a large SNAP rewrite) rests a minute. */
  val MaxRestNanos: Long = 60L * 1000 * 1000 * 1000
}
