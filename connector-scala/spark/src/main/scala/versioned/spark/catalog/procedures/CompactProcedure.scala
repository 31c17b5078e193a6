package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.spark.api.MaintenanceApi

/**
 * `compact(repository, branch, table)`: waits for the background compaction of a branch head's tables,
 * then runs the compaction policy on that head now. One row (table, image, objects) per table compacted.
 */
private[procedures] final class CompactProcedure(context: ProcedureContext) extends MaintenanceProcedure(context.engine) {
  override def name(): String = "compact"
  override def description(): String = "Runs the compaction policy on a branch head now (after its background compaction)."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("branch", required = false, "branch (default: the repository's default branch)"),
    Param("table", required = false, "one table (default: every table)"))
  override protected def outputType: StructType = MaintenanceApi.CompactedSchema
  override protected def run(spark: SparkSession, e: versioned.core.Engine, a: Args): DataFrame =
    MaintenanceApi.compact(spark, context.locationJava, a("repository"), a.opt("branch").orNull, a.opt("table").orNull)
}
