package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.merge.{MergeOptions, MergeOutcome, Merger}

/**
 * `merge(repository, source, target => NULL, strategy => 'fail', fast_forward => 'auto', dry_run => false,
 * message => NULL, author => NULL, allow_unrelated => false, resolutions => NULL,
 * squash => false)`: merges `source` into branch `target`
 * (default: the default branch). One row: status, commit, fast_forward, base, conflicts, tables. With
 * conflicts and strategy 'fail' nothing is committed; `merge_conflicts` lists them.
 */
private[procedures] final class MergeProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "merge"
  override def description(): String = "Three-way merge of a revision into a branch."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("source", required = true, "revision to merge"),
    Param("target", required = false, "branch to merge into; default: the default branch"),
    Param("strategy", required = false, "fail | ours | theirs; default fail"),
    Param("fast_forward", required = false, "auto | never | only; default auto"),
    Param.flag("dry_run", "true to only report what would happen"),
    Param("message", required = false, "commit message"),
    Param("author", required = false, "commit author"),
    Param.flag("allow_unrelated", "true to merge histories without a common ancestor"),
    Param("resolutions", required = false, "map: table -> name of a table or view with its resolved rows", ParamKind.Names),
    Param.flag("squash", "true for one commit with one parent holding the source's net change"))
  override protected def outputType: StructType = MergeOutcome.SummarySchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    MergeProcedure.outcome(spark, e, a, MergeOptions(a.opt("strategy").orNull, a.opt("fast_forward").orNull,
      a.flag("dry_run"), a.opt("message").orNull, versioned.spark.api.VersionedApi.authorOf(spark, a.opt("author").orNull),
      resolutions(spark, a), a.flag("allow_unrelated"), a.flag("squash"))).summary
}

private[procedures] object MergeProcedure {
  /** The merge a `merge` or `merge_conflicts` call describes. */
  def outcome(spark: SparkSession, e: Engine, a: Args, opts: MergeOptions): MergeOutcome = {
    val repo = a("repository")
    val target = a.opt("target").filter(_.trim.nonEmpty).getOrElse(e.defaultBranch(repo))
    new Merger(spark, e).merge(repo, a("source"), target, opts)
  }
}
