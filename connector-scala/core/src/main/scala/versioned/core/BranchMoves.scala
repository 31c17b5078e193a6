package versioned.core

import java.util.concurrent.ConcurrentHashMap
import org.slf4j.LoggerFactory
import scala.util.control.NonFatal

/**
 * A branch of a repository moved in this process: to `image`, by a commit (which changed `tables`) or a reset
 * (`tables` None: any table may differ).
 */
final case class BranchMoved(repo: String, branch: String, image: String, tables: Option[Seq[String]])

/**
 * Who is told when a branch moves, after the move is recorded: an engine's listeners by name (one per name, so an
 * engine user that registers on every use registers once; bounded by the names its users choose). A listener
 * never fails the move it hears of: the move is already visible, so its failure is logged.
 */
final class BranchMoves {
  private val log = LoggerFactory.getLogger(classOf[BranchMoves])
  private val listeners = new ConcurrentHashMap[String, BranchMoved => Unit]()

  /** Registers `listener` under `name`, unless one is registered under it already. */
  def listen(name: String)(listener: BranchMoved => Unit): Unit = { listeners.putIfAbsent(name, listener); () }

  private[core] def announce(move: BranchMoved): Unit = listeners.forEach { (name, listener) =>
    try listener(move) catch {
      case NonFatal(e) => log.warn(s"versioned: listener '$name' failed after ${move.repo}@${move.branch} moved " +
        s"to ${move.image.take(12)}; the move stands", e)
    }
  }
}
