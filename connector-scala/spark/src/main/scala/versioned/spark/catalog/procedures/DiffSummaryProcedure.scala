package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.{Engine, Revision}
import versioned.spark.api.MaintenanceApi
import versioned.spark.diff.DiffSummary

/**
 * `diff_summary(repository, from_ref, to_ref => NULL, table => NULL)`: what changed from `from_ref` to
 * `to_ref` (default: the head of the default branch), one row per table that differs (or only `table`):
 * rows inserted, updated, deleted, the columns changed, per column the updated rows whose value changed,
 * and whether the schema changed.
 */
private[procedures] final class DiffSummaryProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "diff_summary"
  override def description(): String = "Per table: rows inserted, updated and deleted and columns changed between two revisions."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("from_ref", required = true, "revision to compare from"),
    Param("to_ref", required = false, "revision to compare to; default: the head of the default branch"),
    Param("table", required = false, "only this table; default: every table"))
  override protected def outputType: StructType = DiffSummary.Schema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    MaintenanceApi.diffSummary(spark, e, a("repository"), Revision.Spec(a("from_ref").trim),
      Some(a.revision("to_ref")), a.opt("table").map(_.trim).filter(_.nonEmpty))
}
