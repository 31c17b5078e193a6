package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.GovernanceApi

/**
 * `publish(repository, branch, into => NULL, delete_branch => false, dry_run => false, message, author)`:
 * merges a branch into another (default: the default branch) through the gates, every table it changed in one
 * image; one row: status, commit, into, branch_deleted, tables, checks (a dry run: the checks on the merged image).
 */
private[procedures] final class PublishProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "publish"
  override def description(): String = "Publishes a branch: merges it through the gates (write-audit-publish)."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo, Param("branch", required = true, "branch to publish"),
    Param("into", required = false, "branch to publish into; default: the default branch"),
    Param.flag("delete_branch", "true to delete the branch once published"),
    Param.flag("dry_run", "true to report what would land and the checks' results on it"),
    Param("message", required = false, "commit message"), Param("author", required = false, "commit author"))
  override protected def outputType: StructType = GovernanceApi.PublishSchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    GovernanceApi.publish(spark, e, a("repository"), a("branch"), a.opt("into").orNull, a.flag("delete_branch"),
      a.flag("dry_run"), a.opt("message").orNull, a.opt("author").orNull)
}
