package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.RemotesApi

/**
 * `push(repository, remote => 'origin', branch => NULL, force => false, tags => true)`: uploads the
 * objects and history the remote lacks, then moves its branch (default: the default branch) by
 * compare-and-swap, fast-forward only unless `force`. One row: repository, remote, branch, status, old,
 * head, images, objects, uploaded, tags.
 */
private[procedures] final class PushProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "push"
  override def description(): String = "Pushes a branch (and tags) to a remote."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("remote", required = false, "remote name; default origin"),
    Param("branch", required = false, "branch to push; default: the default branch"),
    Param.flag("force", "true to replace a remote branch that is not an ancestor"),
    Param.flag("tags", "false to leave tags out", default = true))
  override protected def outputType: StructType = RemotesApi.PushSchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    RemotesApi.pushFrame(spark, RemotesApi.push(spark, e, a("repository"), a.opt("remote").orNull, a.opt("branch").orNull,
      a.flag("force"), a.flag("tags")))
}
