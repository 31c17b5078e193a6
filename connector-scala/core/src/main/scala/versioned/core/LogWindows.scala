package versioned.core

import java.sql.Connection

/**
 * The images of a repository, with the tables each changed, read on demand in windows of `seq` (commit
 * order), newest first. A parent is committed before its children, so a walk from a recent image needs only
 * the newest windows; each window is four times the size of the one before, so walking a whole history
 * takes a few queries. A window covering everything left is read without a `seq` condition. An image
 * outside every window (only possible if a writer numbered `seq` differently) is read by its hash.
 * `sqlite`: the metastore is SQLite; `graphOnly`: read only hashes and parents (see [[LogRowReader]]).
 */
private[core] final class LogWindows(c: Connection, sqlite: Boolean, graphOnly: Boolean, repo: String, firstWindow: Long) {
  private val range = MetaDao.seqRange(c, repo)
  private val lowest = range.fold(Long.MaxValue)(_._1)
  private var next = range.fold(Long.MinValue)(_._2) // highest seq not read yet
  private var size = math.max(1L, firstWindow)
  private var loaded: java.util.HashMap[String, LogEntry] = _ // sized by the first window
  private val reader = new LogRowReader(repo, sqlite, graphOnly, hash => {
    val e = loaded.get(hash)
    if (e == null || (e eq LogWindows.Taken)) hash else e.image.hash
  })

  /** The entry of image `hash` the first time it is asked for; null later on, and for an unknown hash. */
  def take(hash: String): LogEntry = {
    var e = if (loaded == null) null else loaded.get(hash)
    while (e == null && next >= lowest) { readWindow(); e = loaded.get(hash) }
    if (e == null) e = MetaDao.logEntry(c, repo, hash).orNull
    if (loaded == null) loaded = new java.util.HashMap[String, LogEntry]()
    if (e eq LogWindows.Taken) null else { loaded.put(hash, LogWindows.Taken); e }
  }

  private def readWindow(): Unit = {
    val rest = next - lowest < size
    val from = if (rest) lowest else next - size + 1
    if (loaded == null) loaded = new java.util.HashMap[String, LogEntry]((math.min(next - from, 1L << 20) * 4 / 3 + 16).toInt)
    val add = (e: LogEntry) => { loaded.putIfAbsent(e.image.hash, e); () }
    MetaDao.foreachLogEntry(c, repo, if (rest && range.exists(_._2 == next)) None else Some((from, next)), reader)(add)
    next = from - 1
    size = if (size > Long.MaxValue / 4) Long.MaxValue else size * 4
  }
}

private object LogWindows {
  /** Marks an entry already handed out. */
  private val Taken = LogEntry(Image("", "", Nil, 0L, "", ""), Nil)
}
