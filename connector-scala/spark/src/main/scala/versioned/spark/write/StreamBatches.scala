package versioned.spark.write

import versioned.core.{CommitResult, Engine, Errors, LogEntry, StreamCheckpointMismatchException}
import versioned.spark.session.VersionedOptions

/**
 * One batch of a streaming query: its id (Spark's query id, stable across restarts from one checkpoint) and the
 * batch's id. `sink`: written by the streaming sink, whose batches follow one another on the branch (each batch
 * is one commit), so a batch that does not follow the query's newest is refused; a `foreachBatch` write
 * (write options `streamQueryId` and `streamBatchId`) may skip batches.
 */
private[versioned] final case class StreamBatch(queryId: String, batchId: Long, sink: Boolean = false)

/**
 * Exactly-once batches: a batch's commit records its query, batch, table and branch in a trailer line of the
 * commit's message (durable in the metastore with the commit, copied by remotes with it). Before a batch
 * commits, the branch's history is read newest first for that query's commits of the table: when the branch
 * has the batch already (a replay after a crash between the commit and the query's checkpoint), the write
 * commits nothing and returns that commit. The read stops at the query's newest commit, which is near the head
 * when the query runs; a query's first batch reads the history once.
 */
private[versioned] object StreamBatches {
  private val log = org.slf4j.LoggerFactory.getLogger(getClass)
  private val Marker = "versioned-stream:"
  private val Line = """versioned-stream: query=(\S+) batch=(\d+) table=(\S+) branch=(\S+)""".r
  private val QueryId = """[A-Za-z0-9._:-]{1,128}""".r

  /** The batch named by write options `streamQueryId` and `streamBatchId` (both or neither). */
  def fromOptions(option: String => Option[String]): Option[StreamBatch] =
    (option(VersionedOptions.StreamQueryId), option(VersionedOptions.StreamBatchId)) match {
      case (None, None) => None
      case (Some(q), Some(b)) =>
        if (!QueryId.matches(q)) throw Errors.invalidOption(s"Option '${VersionedOptions.StreamQueryId}' is '$q': " +
          "give the streaming query's id (letters, digits, '.', '_', ':', '-'; at most 128 characters).")
        val id = b.trim.toLongOption.filter(_ >= 0).getOrElse(throw Errors.invalidOption(
          s"Option '${VersionedOptions.StreamBatchId}' is '$b': give the batch's id, a whole number of 0 or more."))
        Some(StreamBatch(q, id))
      case _ => throw Errors.invalidOption(s"Options '${VersionedOptions.StreamQueryId}' and " +
        s"'${VersionedOptions.StreamBatchId}' go together: give both (the query's id and the batch's id) or neither.")
    }

  /** `message` with the batch's trailer line. */
  def message(message: String, b: StreamBatch, table: String, branch: String): String =
    s"$message\n\n$Marker query=${b.queryId} batch=${b.batchId} table=$table branch=$branch"

  /** The (query, batch, table, branch) a commit message records, if it is a batch's commit. */
  def parse(message: String): Option[(String, Long, String, String)] =
    if (!message.contains(Marker)) None
    else message.linesIterator.toSeq.reverseIterator.collectFirst { case Line(q, b, t, br) => (q, b.toLong, t, br) }

  /** The batch id a commit message records, if it is a stream batch's commit. */
  def batchOf(message: String): Option[Long] = parse(message).map(_._2)

  /**
   * The commit `branch` already has for batch `b` of `table`, if any. For the sink, a batch that is neither
   * there nor the one after the query's newest batch on the branch raises [[StreamCheckpointMismatchException]].
   */
  def replayed(engine: Engine, repo: String, branch: String, table: String, b: StreamBatch): Option[CommitResult] =
    find(engine, repo, branch, table, b) match {
      case Right(e) =>
        log.info(s"versioned: batch ${b.batchId} of stream ${b.queryId} is commit ${e.image.shortHash} of $repo@$branch " +
          "already; nothing to commit")
        Some(CommitResult(e.image, branch, e.tablesChanged))
      case Left(newest) =>
        val expected = newest.fold(0L)(_ + 1)
        if (b.sink && b.batchId != expected) throw new StreamCheckpointMismatchException(
          s"The streaming query ${b.queryId} is at batch ${b.batchId}, but branch '$branch' of '$repo' holds " +
            newest.fold(s"no batch of it for table '$table'")(n => s"its batches of table '$table' up to $n") +
            ": the checkpoint belongs to another query, table or branch. Nothing was committed. Start the query " +
            "with a new checkpoint location, or write to the table and branch this checkpoint wrote to.")
        None
    }

  /**
   * The commit of batch `b` on the branch (Right), else the newest batch of the query there (Left). Reads the log
   * newest first in growing windows until it meets a commit of the query with a batch id of `b` or less.
   */
  private def find(engine: Engine, repo: String, branch: String, table: String,
                   b: StreamBatch): Either[Option[Long], LogEntry] = {
    val head = engine.branchHeadOption(repo, branch).getOrElse(return Left(None))
    var limit = 64
    var newest: Option[Long] = None
    while (true) {
      val entries = engine.history.logOfImage(repo, head.hash, limit)
      newest = None
      val hit = entries.iterator.map(e => e -> parse(e.image.message)).collectFirst {
        case (e, Some((q, n, t, br))) if q == b.queryId && t == table && br == branch && { newest = newest.orElse(Some(n)); n <= b.batchId } =>
          if (n == b.batchId) Right(e) else Left(newest)
      }
      if (hit.isDefined) return hit.get
      if (entries.size < limit) return Left(newest)
      limit = if (limit >= Int.MaxValue / 8) Int.MaxValue else limit * 8
    }
    Left(None)
  }
}
