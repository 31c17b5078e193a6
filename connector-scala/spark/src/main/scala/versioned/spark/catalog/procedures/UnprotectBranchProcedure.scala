package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.GovernanceApi

/** `unprotect_branch(repository, pattern)`: removes a protection rule. The rules that remain, one row each. */
private[procedures] final class UnprotectBranchProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "unprotect_branch"
  override def description(): String = "Removes the protection rule of a branch name or glob."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo, Param("pattern", required = true, "the rule's pattern"))
  override protected def outputType: StructType = GovernanceApi.RuleSchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame = {
    e.protections.unprotect(a("repository"), a("pattern"))
    GovernanceApi.protections(spark, e, a("repository"))
  }
}
