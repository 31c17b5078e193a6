package versioned.spark.catalog

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.catalog.{Changelog, ChangelogContext, ChangelogRange, Column}
import org.apache.spark.sql.connector.expressions.{Expressions, NamedReference}
import org.apache.spark.sql.connector.read.{LocalScan, Scan, ScanBuilder}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import versioned.core.{Engine, Image}
import versioned.spark.TableIdent
import versioned.spark.diff.ChangeFeed

/**
 * Spark's change feed of a versioned table (`SELECT * FROM t CHANGES FROM VERSION 'a' TO VERSION 'b'`,
 * `spark.read.option("startingVersion", ...).changes(t)`): the rows of [[ChangeFeed]], computed when the
 * scan is first read (once) and served from the driver. The feed is already exact: no carry-over rows,
 * updates labelled by the connector (pre/post images, or delete + insert when `computeUpdates` is off) and,
 * for `deduplicationMode = netChanges`, already netted, so Spark adds no post-processing.
 */
private[catalog] final class VersionedChangelog(title: String, engine: Engine, location: Map[String, String],
                                                plan: ChangeFeed.Plan, mode: ChangeFeed.Mode) extends Changelog {
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
    new VersionedChangelog(title, engine, location, plan, mode)
  }
}
