package versioned.spark.merge

import org.apache.spark.sql.{functions, DataFrame, Row, SparkSession}
import org.apache.spark.sql.functions.{col => _, _}
import org.apache.spark.sql.types._
import versioned.core._

/**
 * The outcome of a merge, cherry-pick or revert. `status`: `merged` (a commit was made, or would be with
 * `dry_run`), `fast_forward`, `up_to_date` (nothing to do), `conflicts` (nothing committed). `tables` has
 * one row per table the merge touches; `conflicts` one row per conflicting cell or table.
 */
final case class MergeOutcome(status: String, commitHash: Option[String], fastForward: Boolean, base: Option[String],
                              stats: Seq[TableStat], conflicts: DataFrame, conflictCount: Long) {
  /** The commit made (or the fast-forward target), or null. */
  def commit: String = commitHash.orNull
  def baseHash: String = base.orNull
  def tables: DataFrame = {
    val spark = conflicts.sparkSession
    spark.createDataFrame(java.util.List.of(stats.map(s => Row(s.table, s.action, s.upserts, s.deletes)): _*),
      MergeOutcome.TablesSchema)
  }
  /**
   * One row: status, commit, fast_forward, base, conflicts (count), tables (what happened to each table, as
   * text), then the same as data for clients that read the outcome through SQL: table_details (the rows of
   * `tables`) and conflict_details (the rows of `conflicts`).
   */
  def summary: DataFrame = {
    val tableRows = stats.map(s => Row(s.table, s.action, s.upserts, s.deletes))
    val conflictRows = if (conflictCount == 0) Seq.empty[Row] else conflicts.collect().toSeq
    conflicts.sparkSession.createDataFrame(java.util.List.of(Row(status, commit, fastForward, baseHash, conflictCount,
      stats.map(s => s"${s.table}:${s.action}(+${s.upserts}/-${s.deletes})").mkString(", "), tableRows, conflictRows)),
      MergeOutcome.SummarySchema)
  }
  /** Raises [[MergeConflictException]] when the merge stopped on conflicts. */
  def check(): MergeOutcome = {
    if (status == MergeOutcome.Conflicts) throw new MergeConflictException(s"$conflictCount conflict(s); nothing was " +
      "committed. Inspect them (conflicts), then merge again with strategy 'ours' or 'theirs', or with resolutions.")
    this
  }
}

object MergeOutcome {
  val Merged = "merged"
  val FastForward = "fast_forward"
  val UpToDate = "up_to_date"
  val Conflicts = "conflicts"
  val TablesSchema: StructType = StructType(Seq(StructField("table", StringType, nullable = false),
    StructField("action", StringType, nullable = false), StructField("upserts", LongType, nullable = false),
    StructField("deletes", LongType, nullable = false)))

  val SummarySchema: StructType = StructType(Seq(StructField("status", StringType, nullable = false),
    StructField("commit", StringType), StructField("fast_forward", BooleanType, nullable = false),
    StructField("base", StringType), StructField("conflicts", LongType, nullable = false),
    StructField("tables", StringType, nullable = false),
    StructField("table_details", ArrayType(TablesSchema, containsNull = false), nullable = false),
    StructField("conflict_details", ArrayType(Merger.ConflictSchema, containsNull = false), nullable = false)))

  private[spark] def done(spark: SparkSession, status: String, commit: Option[String], base: Option[String],
                          fastForward: Boolean): MergeOutcome =
    MergeOutcome(status, commit, fastForward, base, Nil, TablePlans.publicConflicts(spark, Nil), 0L)
}
