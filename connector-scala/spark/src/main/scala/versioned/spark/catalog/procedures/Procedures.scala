package versioned.spark.catalog.procedures

import org.apache.spark.sql.connector.catalog.procedures.UnboundProcedure
import versioned.core.{Engine, Errors}

/** The procedures of namespace `system`, by name. */
private[versioned] object Procedures {
  private val all: Map[String, (() => Engine) => UnboundProcedure] = Map(
    "create_branch" -> (e => new CreateBranchProcedure(e)),
    "delete_branch" -> (e => new DeleteBranchProcedure(e)),
    "reset_branch" -> (e => new ResetBranchProcedure(e)),
    "create_tag" -> (e => new CreateTagProcedure(e)),
    "delete_tag" -> (e => new DeleteTagProcedure(e)),
    "create_lock" -> (e => new CreateLockProcedure(e)),
    "release_lock" -> (e => new ReleaseLockProcedure(e)),
    "gc" -> (e => new GcProcedure(e, wholeWarehouse = false)),
    "gc_warehouse" -> (e => new GcProcedure(e, wholeWarehouse = true)),
    "verify" -> (e => new VerifyProcedure(e)),
    "diff_summary" -> (e => new DiffSummaryProcedure(e)),
    "merge" -> (e => new MergeProcedure(e)),
    "merge_conflicts" -> (e => new MergeConflictsProcedure(e)),
    "cherry_pick" -> (e => new PickProcedure(e, revert = false)),
    "revert" -> (e => new PickProcedure(e, revert = true)))

  def names: Seq[String] = all.keys.toSeq.sorted

  def load(engine: () => Engine, name: String): UnboundProcedure =
    all.get(name.toLowerCase).map(_(engine)).getOrElse(throw Errors.unsupported(
      s"Unknown procedure '$name'. Available: ${names.mkString(", ")}."))
}
