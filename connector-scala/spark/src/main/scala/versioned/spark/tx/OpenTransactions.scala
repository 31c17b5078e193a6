package versioned.spark.tx

import java.util.UUID
import java.util.concurrent.{ConcurrentHashMap, Executors, ScheduledExecutorService, ThreadFactory, TimeUnit}
import scala.jdk.CollectionConverters._
import org.apache.spark.sql.SparkSession
import org.slf4j.LoggerFactory
import versioned.core.{Leases, TransactionClosedException}

/**
 * Transactions driven by SQL (`CALL <catalog>.system.begin_transaction(...)` and the `transaction_*`
 * procedures), which a Spark Connect client uses: the transaction lives in the driver (the Connect server)
 * and the client names it by an unguessable token that [[begin]] returns. A token is valid only in the
 * session that began it; an unknown token, a token of another session, and a token of a transaction the
 * registry dropped are TRANSACTION_CLOSED.
 *
 * A client that goes away without committing or aborting would keep its transaction open (and its write
 * lease alive, holding back gc) forever, since the server's heartbeat keeps the lease fresh. So a
 * transaction no call has used (or is using) for [[IdleMs]] (the lease timeout, 10 minutes) is aborted, and an ended
 * transaction is forgotten after the same time (until then its outcome can still be asked for).
 */
private[versioned] object OpenTransactions {
  private val log = LoggerFactory.getLogger(getClass)
  /** A transaction unused for this long is aborted (open) or forgotten (ended). */
  val IdleMs: Long = Leases.TimeoutMs
  private val SweepMs: Long = 60 * 1000L

  private final class Entry(val tx: Transaction, val session: SparkSession) {
    @volatile var lastUsedMs: Long = System.currentTimeMillis()
    /** Calls running now: a long operation is not idleness. */
    val running = new java.util.concurrent.atomic.AtomicInteger()
  }

  private val entries = new ConcurrentHashMap[String, Entry]()
  @volatile private var sweeper: ScheduledExecutorService = _

  /** Registers `tx`, begun in `session`; returns its token. */
  def register(tx: Transaction, session: SparkSession): String = {
    val token = UUID.randomUUID().toString
    entries.put(token, new Entry(tx, session))
    ensureSweeper()
    token
  }

  /** The transaction named by `token` in `session` (open or ended), or TRANSACTION_CLOSED. */
  def apply(token: String, session: SparkSession): Transaction = entry(token, session).tx

  /** Runs `f` on the transaction named by `token` in `session`; it is not idle while `f` runs. */
  def using[T](token: String, session: SparkSession)(f: Transaction => T): T = {
    val e = entry(token, session)
    e.running.incrementAndGet()
    try f(e.tx) finally { e.lastUsedMs = System.currentTimeMillis(); e.running.decrementAndGet() }
  }

  private def entry(token: String, session: SparkSession): Entry = {
    val entry = Option(token).map(_.trim).flatMap(t => Option(entries.get(t))).filter(_.session eq session)
      .getOrElse(throw new TransactionClosedException(s"No transaction of this session has token '$token': it " +
        s"never existed, or it ended and was forgotten (an open transaction unused for ${IdleMs / 60000} minutes " +
        "is aborted). Begin a new transaction."))
    entry.lastUsedMs = System.currentTimeMillis()
    entry
  }

  /** Aborts open transactions unused for [[IdleMs]] and forgets ended ones; `now` for tests of the rule. */
  private[versioned] def sweep(now: Long = System.currentTimeMillis()): Unit =
    entries.asScala.toSeq.filter { case (_, e) => e.running.get == 0 && e.lastUsedMs < now - IdleMs }.foreach { case (token, e) =>
      if (e.tx.isOpen) log.warn(s"Aborting the transaction on '${e.tx.repository}@${e.tx.branch}': no call used it " +
        s"for ${IdleMs / 60000} minutes (its client went away?)")
      try e.tx.close() catch { case t: Throwable => log.warn(s"Could not abort an idle transaction: ${t.getMessage}") }
      entries.remove(token)
    }

  private def ensureSweeper(): Unit = if (sweeper == null) synchronized {
    if (sweeper == null) {
      val s = Executors.newSingleThreadScheduledExecutor(new ThreadFactory {
        override def newThread(r: Runnable): Thread = {
          val t = new Thread(r, "versioned-transaction-sweeper")
          t.setDaemon(true)
          t
        }
      })
      s.scheduleWithFixedDelay(() => try sweep() catch { case t: Throwable => log.warn(s"Sweep failed: $t") },
        SweepMs, SweepMs, TimeUnit.MILLISECONDS)
      sweeper = s
    }
  }
}
