package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.merge.{MergeOptions, MergeOutcome, Merger}

/**
 * `cherry_pick(repository, commit, branch => NULL, parent => NULL, strategy => 'fail', dry_run => false,
 * message => NULL, author => NULL)` applies the change `commit` made onto `branch`; `revert(...)` (same
 * arguments) applies its inverse. `parent` (1-based) is required for a merge commit. One row as `merge`.
 */
private[procedures] final class PickProcedure(engine: () => Engine, revert: Boolean) extends MaintenanceProcedure(engine) {
  override def name(): String = if (revert) "revert" else "cherry_pick"
  override def description(): String =
    if (revert) "Commits the inverse of a commit's change on a branch." else "Commits a commit's change onto a branch."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("commit", required = true, "the commit (any revision)"),
    Param("branch", required = false, "branch to commit on; default: the default branch"),
    Param("parent", required = false, "for a merge commit: which parent (1-based) its change is against", ParamKind.Ordinal),
    Param("strategy", required = false, "fail | ours | theirs; default fail"),
    Param.flag("dry_run", "true to only report what would happen"),
    Param("message", required = false, "commit message"),
    Param("author", required = false, "commit author"),
    Param("resolutions", required = false, "map: table -> name of a table or view with its resolved rows", ParamKind.Names))
  override protected def outputType: StructType = MergeOutcome.SummarySchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame = {
    val repo = a("repository")
    val branch = a.opt("branch").filter(_.trim.nonEmpty).getOrElse(e.defaultBranch(repo))
    val parent = a.ordinal("parent")
    val opts = MergeOptions(a.opt("strategy").orNull, MergeOptions.Auto, a.flag("dry_run"), a.opt("message").orNull,
      versioned.spark.api.VersionedApi.authorOf(spark, a.opt("author").orNull), resolutions(spark, a), allowUnrelated = false,
      squash = false)
    new Merger(spark, e).pick(repo, a("commit"), branch, parent, revert, opts).summary
  }
}
