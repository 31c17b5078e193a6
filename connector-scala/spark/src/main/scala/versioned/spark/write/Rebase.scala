package versioned.spark.write

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.functions.{lit, when}
import org.apache.spark.sql.types.ByteType
import versioned.core._
import versioned.spark.session.TableIdent
import versioned.spark.session.{TableSnapshot, VersionedOptions}
import versioned.spark.format.TableLayout
import versioned.spark.format.Columns.col
import versioned.spark.diff.{DiffShape, TableDiff}

/**
 * Retrying a commit whose branch moved: the engine already lands a commit on a new head when the
 * commits in between changed none of its tables; when they changed one of them it raises
 * [[BranchMovedException]], and the writer plans again on the new head if its change does not depend on
 * what they changed. Bounded attempts with jittered exponential backoff, as Iceberg retries commits.
 */
private[versioned] object Rebase {
  private val log = org.slf4j.LoggerFactory.getLogger(getClass)
  /** Attempts of one commit (the first included). */
  val MaxAttempts = 8
  private val MinWaitMs = 25L
  private val MaxWaitMs = 2000L

  /**
   * Runs `attempt` on `head`; when it raises [[BranchMovedException]] and `replannable(head, newHead)`
   * holds, runs it again on the new head, at most [[MaxAttempts]] times in all.
   */
  def retrying[T](engine: Engine, head: Option[Image])(attempt: Option[Image] => T)
                 (replannable: (Image, Image) => Boolean): T = {
    var on = head
    var n = 1
    while (true) {
      try return attempt(on)
      catch {
        case m: BranchMovedException if n < MaxAttempts && on.isDefined && m.head.isDefined =>
          val next = engine.image(on.get.repo, m.head.get)
          if (!replannable(on.get, next)) throw m
          log.info(s"versioned: ${m.tables.mkString(",")} changed concurrently on ${next.shortHash}; " +
            s"planning again (attempt ${n + 1} of $MaxAttempts)")
          backoff(n)
          on = Some(next)
          n += 1
      }
    }
    throw new IllegalStateException("unreachable")
  }

  private def backoff(attempt: Int): Unit = {
    val cap = math.min(MaxWaitMs, MinWaitMs << math.min(attempt, 10))
    Thread.sleep((cap / 2) + scala.util.Random.nextLong(cap / 2 + 1))
  }

  /**
   * Whether computed `changes` (the DIFF layout: user columns, `_vchange`, `_vdup` for key-less tables)
   * planned on `from` stay valid on `to`: the table kept its shape and no commit in between touched any
   * of their keys (a key-less table's rows are their own keys). Reads the diff of the two versions,
   * which costs what changed in between.
   */
  def disjointChanges(spark: SparkSession, engine: Engine, req: WriteRequest, changes: DataFrame,
                      from: Image, to: Image): Boolean = {
    val repo = req.ident.repo
    val (a, b) = (engine.tableOption(repo, from.hash, req.ident.table), engine.tableOption(repo, to.hash, req.ident.table))
    if (a.isEmpty || b.isEmpty) return false
    val (la, lb) = (TableLayout.of(a.get), TableLayout.of(b.get))
    if (!TableLayout.sameColumns(la.schema, lb.schema) || la.primaryKey != lb.primaryKey) return false
    val keys = la.keyColumns.filterNot(_ == VersionedOptions.DupColumn)
    val theirs = TableDiff.diff(spark, req.locationOptions, req.ident.toString, Revision.Spec(from.hash),
      Revision.Spec(to.hash)).select(keys.map(col): _*).distinct()
    val ours = changes.select(keys.map(k => col(k).as(s"o_$k")): _*)
    ours.join(theirs, keys.map(k => col(s"o_$k") <=> col(k)).reduce(_ && _), "left_semi").isEmpty
  }

  /**
   * What version `to` changed over `from` of one keyed table, as computed changes (the DIFF layout:
   * upserts with the new values, deletes), to be planned again on a newer head like any computed change
   * (a transaction's uncommitted version over the version it started from). None when they cannot be
   * (a key-less table, or columns or key changed between them).
   */
  def netChanges(spark: SparkSession, location: Map[String, String], from: TableSnapshot,
                 to: TableSnapshot): Option[DataFrame] = {
    val layout = to.layout
    if (layout.hidden || !DiffShape.same(from.layout, layout)) return None
    val kind = when(col(TableDiff.ChangeColumn) === "delete", lit(ChangeKind.Delete)).otherwise(lit(ChangeKind.Upsert))
    Some(TableDiff.versions(spark, location, from, to).select(layout.schema.fieldNames.toSeq.map(c =>
      if (layout.primaryKey.contains(c)) col(c) else col(s"${c}_after").as(c)) :+
      kind.cast(ByteType).as(VersionedOptions.ChangeColumn): _*))
  }
}
