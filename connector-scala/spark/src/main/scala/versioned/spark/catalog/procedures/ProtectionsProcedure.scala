package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.GovernanceApi

/** `protections(repository)`: the protection rules, one row each (pattern, require_merge, allow_force, allow_delete, required_checks). */
private[procedures] final class ProtectionsProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "protections"
  override def description(): String = "Lists the protection rules of a repository."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo)
  override protected def outputType: StructType = GovernanceApi.RuleSchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame = GovernanceApi.protections(spark, e, a("repository"))
}
