package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.merge.{MergeOptions, Merger}

/**
 * `merge_conflicts(repository, source, target => NULL, allow_unrelated => false)`: the conflicts merging
 * `source` into `target` would meet (a dry run; nothing is committed). One row per conflicting cell or
 * table: table, key (JSON), column, base, ours, theirs, kind.
 */
private[procedures] final class MergeConflictsProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "merge_conflicts"
  override def description(): String = "Lists the conflicts a merge would meet (commits nothing)."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("source", required = true, "revision to merge"),
    Param("target", required = false, "branch to merge into; default: the default branch"),
    Param.flag("allow_unrelated", "true to merge histories without a common ancestor"))
  override protected def outputType: StructType = Merger.ConflictSchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    MergeProcedure.outcome(spark, e, a, MergeOptions(dryRun = true, allowUnrelated = a.flag("allow_unrelated"))).conflicts
}
