package versioned.core

import java.util.concurrent.{ConcurrentHashMap, Executors, ScheduledExecutorService, TimeUnit}
import org.slf4j.LoggerFactory

/** A write lease: while it lives, garbage collection leaves files younger than its start alone. */
final case class Lease(id: String, repo: String, purpose: String, startedMs: Long)

/**
 * Write leases (docs/FORMAT.md, "Garbage collection"). A writer opens one before it writes any file
 * (staging rows, objects) and closes it when its metastore transaction has ended. Its staging files live
 * under `_staging/<lease id>/`. Open leases are kept alive by a heartbeat; a lease whose heartbeat is
 * older than [[Leases.TimeoutMs]] belongs to a writer that died, and no longer protects anything.
 */
final class Leases(engine: Engine) {
  private val log = LoggerFactory.getLogger(classOf[Leases])
  private val open = ConcurrentHashMap.newKeySet[String]()

  def open(repo: String, purpose: String): Lease = {
    val lease = Lease(java.util.UUID.randomUUID().toString.replace("-", ""), repo, purpose, engine.now())
    engine.metastore.processTx(MetaDao.insertLease(_, lease.id, repo, purpose, lease.startedMs))
    open.add(lease.id)
    if (!Leases.Background.contains(purpose)) Leases.writing.add(lease.id)
    Leases.ensureHeartbeat()
    Leases.engines.add(this)
    lease
  }

  /** Ends a lease and removes its staging files; never throws (the work it protected is done). */
  def close(lease: Lease): Unit = {
    open.remove(lease.id)
    Leases.writing.remove(lease.id)
    try engine.store.delete(engine.store.leaseDir(lease.id), recursive = true)
    catch { case e: Exception => log.warn(s"Could not remove staging files of lease ${lease.id}: ${e.getMessage}") }
    try engine.metastore.processTx(MetaDao.deleteLease(_, lease.id))
    catch { case e: Exception => log.warn(s"Could not end lease ${lease.id} (it expires by itself): ${e.getMessage}") }
  }

  def withLease[T](repo: String, purpose: String)(f: Lease => T): T = {
    val lease = open(repo, purpose)
    try f(lease) finally close(lease)
  }

  private[core] def heartbeat(): Unit = if (!open.isEmpty) {
    val ids = open.toArray(new Array[String](0)).toSeq
    try engine.metastore.processTx(c => ids.foreach(MetaDao.heartbeatLease(c, _, engine.now())))
    catch { case e: Exception => log.warn(s"Lease heartbeat failed: ${e.getMessage}") }
  }
}

object Leases {
  /** A lease without a heartbeat for this long is considered dead. */
  val TimeoutMs: Long = 10 * 60 * 1000L
  /** Margin for clock differences between the writers' file system and the collector's clock. */
  val ClockSkewMs: Long = 5 * 60 * 1000L
  private val HeartbeatMs: Long = 60 * 1000L

  private val engines = ConcurrentHashMap.newKeySet[Leases]()

  /**
   * Lease purposes that are not a write in progress: compaction (which yields to writes) and an open
   * transaction (which holds its lease for as long as its user keeps it open).
   */
  val Background: Set[String] = Set("compaction", "transaction")
  /** Leases of this process, other than [[Background]] ones, that are open: writes in progress. */
  private val writing = ConcurrentHashMap.newKeySet[String]()

  /** Whether a write (a lease not of a [[Background]] purpose) is in progress in this process. */
  def writesInProgress: Boolean = !writing.isEmpty
  @volatile private var scheduler: ScheduledExecutorService = _

  private def ensureHeartbeat(): Unit = if (scheduler == null) synchronized {
    if (scheduler == null) {
      val s = Executors.newSingleThreadScheduledExecutor((r: Runnable) => {
        val t = new Thread(r, "versioned-lease-heartbeat"); t.setDaemon(true); t
      })
      s.scheduleWithFixedDelay(() => engines.forEach(_.heartbeat()), HeartbeatMs, HeartbeatMs, TimeUnit.MILLISECONDS)
      scheduler = s
    }
  }
}
