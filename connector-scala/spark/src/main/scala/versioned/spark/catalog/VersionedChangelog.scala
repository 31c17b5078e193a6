package versioned.spark.catalog

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.catalog.{Changelog, ChangelogContext, ChangelogRange, Column}
import org.apache.spark.sql.connector.expressions.{Expressions, NamedReference}
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection
import org.apache.spark.sql.connector.read.{InputPartition, LocalScan, PartitionReader, PartitionReaderFactory, ScanBuilder}
import org.apache.spark.sql.connector.read.streaming.{MicroBatchStream, Offset}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import versioned.core.{Engine, Errors, Image}
import versioned.spark.session.TableIdent
import versioned.spark.diff.ChangeFeed

/**
 * Spark's change feed of a versioned table (`SELECT * FROM t CHANGES FROM VERSION 'a' TO VERSION 'b'`,
 * `spark.read.option("startingVersion", ...).changes(t)`): the rows of [[ChangeFeed]], computed when the
 * scan is first read (once) and served from the driver. The feed is already exact: no carry-over rows,
 * updates labelled by the connector (pre/post images, or delete + insert when `computeUpdates` is off) and,
 * for `deduplicationMode = netChanges`, already netted, so Spark adds no post-processing.
 */
private[catalog] final class VersionedChangelog(title: String, engine: Engine, location: Map[String, String],
                                                plan: ChangeFeed.Plan, mode: ChangeFeed.Mode,
                                                head: () => Image) extends Changelog {
  @volatile private var computed: Array[InternalRow] = _

  private def rows: Array[InternalRow] = {
    if (computed == null) synchronized {
      if (computed == null) computed = ChangeFeed.rows(SparkSession.active, engine, location, plan, mode)
    }
    computed
  }

  override def name(): String = title
  override def columns(): Array[Column] =
    plan.schema.fields.map(f => Column.create(f.name, f.dataType, f.nullable))
  override def containsCarryoverRows(): Boolean = false
  override def containsIntermediateChanges(): Boolean = false
  override def representsUpdateAsDeleteAndInsert(): Boolean = false
  override def rowId(): Array[NamedReference] = plan.rowId.map(c => Expressions.column(c): NamedReference).toArray

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = () => new LocalScan {
    override def rows(): Array[InternalRow] = VersionedChangelog.this.rows
    override def readSchema(): StructType = plan.schema
    override def description(): String = s"versioned changes of $title (${plan.commits.size} commits)"
    override def toMicroBatchStream(checkpointLocation: String): MicroBatchStream = {
      if (mode.netChanges) throw Errors.unsupported(
        "Net changes (deduplicationMode = 'netChanges') of a streaming change feed are not supported; read the " +
          "per-commit feed, or a batch feed with net changes.")
      new ChangeStream(engine, location, plan, mode, head)
    }
  }
}

private[catalog] object VersionedChangelog {
  def load(engine: Engine, location: Map[String, String], title: String, ident: TableIdent, ctx: ChangelogContext,
           head: => Image): VersionedChangelog = {
    val plan = ctx.range() match {
      case v: ChangelogRange.VersionRange =>
        ChangeFeed.versionRange(engine, ident, v.startingVersion(), Option(v.endingVersion().orElse(null)),
          v.startingBoundInclusive(), v.endingBoundInclusive(), head)
      case t: ChangelogRange.TimestampRange =>
        // Spark passes microseconds since the epoch, as for TIMESTAMP AS OF
        ChangeFeed.timeRange(engine, ident, Some(Math.floorDiv(t.startingTimestamp(), 1000L)),
          Option(t.endingTimestamp().orElse(null)).map(us => Math.floorDiv(us.longValue(), 1000L)),
          t.startingBoundInclusive(), t.endingBoundInclusive(), head)
      case _ =>
        ChangeFeed.timeRange(engine, ident, None, None, startInclusive = true, endInclusive = true, head)
    }
    val mode = ChangeFeed.Mode(ctx.deduplicationMode() == ChangelogContext.DeduplicationMode.NET_CHANGES,
      ctx.computeUpdates())
    new VersionedChangelog(title, engine, location, plan, mode, () => head)
  }
}

/** A position in a streaming change feed: every commit up to this sequence number was delivered. */
private[catalog] final case class SeqOffset(seq: Long) extends Offset {
  override def json(): String = seq.toString
}

/** The changed rows of some commits, as unsafe rows. */
private[catalog] final case class ChangeRows(rows: Array[InternalRow]) extends InputPartition

private[catalog] object ChangeRowsReader extends PartitionReaderFactory {
  override def createReader(partition: InputPartition): PartitionReader[InternalRow] = new PartitionReader[InternalRow] {
    private val rows = partition.asInstanceOf[ChangeRows].rows
    private var i = -1
    override def next(): Boolean = { i += 1; i < rows.length }
    override def get(): InternalRow = rows(i)
    override def close(): Unit = ()
  }
}

/**
 * A streaming change feed (`spark.readStream.changes(...)`): offsets are commit sequence numbers along the
 * first-parent line of the branch head (re-read at each trigger); each micro-batch holds the changes of the
 * commits after the previous offset, one change per row identity per commit, as in the batch feed.
 */
private[catalog] final class ChangeStream(engine: Engine, location: Map[String, String], plan: ChangeFeed.Plan,
                                          mode: ChangeFeed.Mode, head: () => Image) extends MicroBatchStream {
  private val repo = plan.ident.repo
  /** Before the first commit of the requested range (or at the head when the range is empty). */
  private val initial: Long = plan.commits.headOption.map(_.seq - 1).getOrElse(engine.lineage.withSeq(repo, head().hash).seq)

  override def initialOffset(): Offset = SeqOffset(initial)
  override def latestOffset(): Offset = SeqOffset(engine.lineage.withSeq(repo, head().hash).seq)
  override def deserializeOffset(json: String): Offset = SeqOffset(json.trim.toLong)
  override def commit(end: Offset): Unit = ()
  override def stop(): Unit = ()

  override def planInputPartitions(start: Offset, end: Offset): Array[InputPartition] = {
    val (from, to) = (start.asInstanceOf[SeqOffset].seq, end.asInstanceOf[SeqOffset].seq)
    if (to <= from) return Array.empty
    val last = engine.lineage.bySeq(repo, to).getOrElse(
      throw new versioned.core.ImageNotFoundException(s"No commit with sequence number $to in '$repo'."))
    val commits = engine.lineage.firstParentWhile(repo, last)(_.seq > from)
    val rows = ChangeFeed.rows(SparkSession.active, engine, location, plan.copy(commits = commits), mode)
    if (rows.isEmpty) Array.empty
    else {
      val unsafe = UnsafeProjection.create(plan.schema)
      Array(ChangeRows(rows.map(r => unsafe(r).copy(): InternalRow)))
    }
  }

  override def createReaderFactory(): PartitionReaderFactory = ChangeRowsReader
}
