package versioned.spark.merge

import org.apache.spark.sql.{DataFrame, SparkSession}
import versioned.core._
import versioned.spark.format.TableLayout

/** What a three-way merge does to one table of the target. */
private[merge] sealed trait TablePlan { def table: String }

private[merge] object TablePlan {
  /** The table takes a version as it is (the other side's, or its drop): no data is read or written. */
  final case class Take(table: String, update: TableUpdate) extends TablePlan
  /**
   * Row changes to apply to the target's version (DIFF layout) and the row conflicts (key columns,
   * then [[ThreeWay.ConflictColumns]]). `target`: when the merged columns differ from the target's
   * ([[SchemaMerge]]), the target's rows aligned to them (physical columns), to which the changes are
   * applied and the result written as a new SNAP; otherwise the changes are appended as DIFFs. `local`:
   * the changes and conflicts derive from rows on the driver (a small merge), so they are not worth caching.
   */
  final case class Rows(table: String, layout: TableLayout, changes: DataFrame, conflicts: Option[DataFrame],
                        cached: Seq[DataFrame] = Nil, target: Option[DataFrame] = None,
                        local: Boolean = false) extends TablePlan
  /**
   * A row merge computed on the driver (a small merge) in which no row conflicts: the changes to append to the
   * target's version, in the DIFF layout (`schema`), on the driver.
   */
  final case class Local(table: String, layout: TableLayout, schema: org.apache.spark.sql.types.StructType,
                         changes: IndexedSeq[org.apache.spark.sql.catalyst.InternalRow]) extends TablePlan
  /**
   * A conflict of the whole table (`drop`: one side dropped it, the other changed it; `schema`: both
   * changed it with different schemas or keys), settled by taking ours (nothing) or `theirs`.
   */
  final case class Whole(table: String, kind: String, base: Option[String], ours: Option[String], theirs: Option[String],
                         theirsUpdate: TableUpdate) extends TablePlan
}
