package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.GovernanceApi

/**
 * `run_checks(repository, ref => NULL, checks => NULL)`: runs checks (comma-separated; default all) on the image
 * `ref` resolves to (default: the default branch) and records each run. One row per check: image, check,
 * severity, status (pass, fail, error), failing_rows, sample_keys, error, duration_ms.
 */
private[procedures] final class RunChecksProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "run_checks"
  override def description(): String = "Runs checks on a revision and records the results."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("ref", required = false, "revision to check; default: the default branch"),
    Param("checks", required = false, "comma-separated check names; default: every check"))
  override protected def outputType: StructType = GovernanceApi.RunSchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    GovernanceApi.runChecks(spark, e, a("repository"), a.opt("ref").orNull, a.list("checks"))
}
