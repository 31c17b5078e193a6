package versioned.spark.write

import java.nio.file.{Files, Paths}

/**
 * The scheduling niceness of the calling thread, as `nice` sets a process's: Linux schedules each thread on its
 * own, so a background compaction thread of niceness 10 gets about a tenth of a core that a commit's thread
 * also wants, and all of a core nobody else wants. Set through `renice` on the thread's id (`/proc/thread-self`),
 * once per thread and value; where there is no `/proc/thread-self` (not Linux) or `renice` refuses (lowering a
 * niceness needs privileges), the thread keeps its priority and a DEBUG line says why.
 */
private[write] object ThreadNiceness {
  private val log = org.slf4j.LoggerFactory.getLogger(getClass)
  private val self = Paths.get("/proc/thread-self")
  /** The niceness this thread was given (null: never set here). */
  private val given = new ThreadLocal[java.lang.Integer]

  /** Gives the calling thread niceness `n` (0-19) unless it already has it from here. */
  def set(n: Int): Unit = {
    val before = Option(given.get()).map(_.intValue).getOrElse(0) // a thread never set here has the process's (0)
    given.set(n)
    if (before != n) try {
      if (!Files.exists(self)) log.debug(s"versioned: no $self; thread ${Thread.currentThread().getName} keeps its priority")
      else {
        val tid = self.toRealPath().getFileName.toString
        val p = new ProcessBuilder("renice", "-n", n.toString, "-p", tid).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD).start()
        if (p.waitFor() != 0) log.debug(s"versioned: renice -n $n -p $tid exited with ${p.exitValue()}")
      }
    } catch {
      case e: java.io.IOException => log.debug(s"versioned: could not set the niceness of thread ${Thread.currentThread().getName}: $e")
    }
  }
}
