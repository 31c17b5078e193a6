package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.GovernanceApi

/**
 * `protect_branch(repository, pattern, require_merge => true, allow_force => false, allow_delete => false,
 * checks => NULL)`: adds or replaces the protection rule of a branch name or glob (`checks`: comma-separated names
 * of checks that must pass on what a merge lands). One row: the rule.
 */
private[procedures] final class ProtectBranchProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "protect_branch"
  override def description(): String = "Protects branches matching a name or glob."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("pattern", required = true, "branch name or glob ('*' within a path component, '**' across)"),
    Param.flag("require_merge", "false to allow direct writes", default = true),
    Param.flag("allow_force", "true to allow resets and forced pushes"),
    Param.flag("allow_delete", "true to allow deleting or renaming the branch"),
    Param("checks", required = false, "comma-separated checks that must pass on what a merge lands"))
  override protected def outputType: StructType = GovernanceApi.RuleSchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    GovernanceApi.protect(spark, e, a("repository"), a("pattern"),
      a.flag("require_merge"), a.flag("allow_force"), a.flag("allow_delete"), a.list("checks"))
}
