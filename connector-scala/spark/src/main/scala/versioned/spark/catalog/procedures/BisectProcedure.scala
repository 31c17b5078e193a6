package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.GovernanceApi

/**
 * `bisect(repository, check, good, bad => NULL)`: the first commit on the first-parent line from `good` to `bad`
 * (default: the default branch) where `check` (a check's name, or a SQL query returning failing rows) fails, in
 * O(log n) recorded runs. One row: first_bad, message, last_good, candidates, runs.
 */
private[procedures] final class BisectProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "bisect"
  override def description(): String = "Finds the first commit where a check starts failing."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("check", required = true, "a check's name, or a SQL query returning the failing rows"),
    Param("good", required = true, "a revision where the check passes"),
    Param("bad", required = false, "a revision where it fails; default: the default branch"))
  override protected def outputType: StructType = GovernanceApi.BisectSchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    GovernanceApi.bisect(spark, e, a("repository"), a("check"), a("good"), a.opt("bad").orNull)
}
