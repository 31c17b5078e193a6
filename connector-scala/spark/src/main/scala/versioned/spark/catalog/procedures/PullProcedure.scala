package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.RemotesApi
import versioned.spark.merge.MergeOutcome

/**
 * `pull(repository, remote => 'origin', branch => NULL, strategy => 'fail', fast_forward => 'auto', message => NULL,
 * author => NULL)`: fetch, then merge the remote's branch into the local branch of that name (default: the
 * default branch). One row: the merge's status, commit, fast_forward, base, conflicts, tables.
 */
private[procedures] final class PullProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "pull"
  override def description(): String = "Fetches a remote and merges its branch into the local one."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("remote", required = false, "remote name; default origin"),
    Param("branch", required = false, "branch to pull; default: the default branch"),
    Param("strategy", required = false, "fail | ours | theirs; default fail"),
    Param("fast_forward", required = false, "auto | never | only; default auto"),
    Param("message", required = false, "merge commit message"),
    Param("author", required = false, "merge commit author"))
  override protected def outputType: StructType = MergeOutcome.SummarySchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    RemotesApi.pull(spark, e, a("repository"), a.opt("remote").orNull, a.opt("branch").orNull, a.opt("strategy").orNull,
      a.opt("fast_forward").orNull, a.opt("message").orNull, a.opt("author").orNull).summary
}
