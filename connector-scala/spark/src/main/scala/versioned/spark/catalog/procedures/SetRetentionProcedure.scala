package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.{Engine, RetentionPolicy}
import versioned.spark.api.RetentionApi

/**
 * `set_retention(repository, pattern, keep_days => NULL, keep_commits => NULL, expire_branches_after_days => NULL)`:
 * adds or replaces the retention policy of a branch name or glob (at least one value; each from 1). One row: the policy.
 */
private[procedures] final class SetRetentionProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "set_retention"
  override def description(): String = "Sets how much history garbage collection keeps of branches matching a name or glob."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("pattern", required = true, "branch name or glob ('*' within a path component, '**' across)"),
    Param("keep_days", required = false, "keep the commits of the last N days of each branch", ParamKind.Ordinal),
    Param("keep_commits", required = false, "keep the last N commits of each branch (first-parent line)", ParamKind.Ordinal),
    Param("expire_branches_after_days", required = false, "delete branches not updated for N days", ParamKind.Ordinal))
  override protected def outputType: StructType = RetentionApi.PolicySchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    RetentionApi.set(spark, e, a("repository"), RetentionPolicy(a("pattern"), a.ordinal("keep_days"),
      a.ordinal("keep_commits"), a.ordinal("expire_branches_after_days")))
}
