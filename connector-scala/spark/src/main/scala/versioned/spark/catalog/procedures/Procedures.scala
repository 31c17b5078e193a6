package versioned.spark.catalog.procedures

import org.apache.spark.sql.connector.catalog.procedures.UnboundProcedure
import versioned.core.{Engine, Errors}

/**
 * What a procedure may use: the catalog's engine and its location options (warehouse, metastore URL), for
 * APIs that take options. Both are read when the procedure is called, so session conf changes apply.
 */
private[versioned] final case class ProcedureContext(engine: () => Engine, location: () => Map[String, String]) {
  def locationJava: java.util.Map[String, String] = {
    val m = new java.util.HashMap[String, String]()
    location().foreach { case (k, v) => if (v != null) m.put(k, v) }
    m
  }
}

/** The procedures of namespace `system`, by name. */
private[versioned] object Procedures {
  private val byEngine: Map[String, (() => Engine) => UnboundProcedure] = Map(
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
    "reflog" -> (e => new ReflogProcedure(e)),
    "diff_summary" -> (e => new DiffSummaryProcedure(e)),
    "merge" -> (e => new MergeProcedure(e)),
    "merge_conflicts" -> (e => new MergeConflictsProcedure(e)),
    "cherry_pick" -> (e => new PickProcedure(e, revert = false)),
    "revert" -> (e => new PickProcedure(e, revert = true)),
    "rename_branch" -> (e => new RenameBranchProcedure(e)),
    "default_branch" -> (e => new DefaultBranchProcedure(e)),
    "resolve" -> (e => new ResolveProcedure(e)),
    "show" -> (e => new ShowProcedure(e)),
    "add_remote" -> (e => new AddRemoteProcedure(e)),
    "remove_remote" -> (e => new RemoveRemoteProcedure(e)),
    "remotes" -> (e => new RemotesProcedure(e)),
    "clone" -> (e => new CloneProcedure(e)),
    "fetch" -> (e => new FetchProcedure(e)),
    "download" -> (e => new DownloadProcedure(e)),
    "pull" -> (e => new PullProcedure(e)),
    "push" -> (e => new PushProcedure(e)),
    "import_table" -> (e => new ImportTableProcedure(e)),
    "protect_branch" -> (e => new ProtectBranchProcedure(e)),
    "unprotect_branch" -> (e => new UnprotectBranchProcedure(e)),
    "protections" -> (e => new ProtectionsProcedure(e)),
    "set_retention" -> (e => new SetRetentionProcedure(e)),
    "remove_retention" -> (e => new RemoveRetentionProcedure(e)),
    "retention" -> (e => new RetentionProcedure(e)),
    "add_check" -> (e => new AddCheckProcedure(e)),
    "remove_check" -> (e => new RemoveCheckProcedure(e)),
    "checks" -> (e => new ChecksProcedure(e)),
    "run_checks" -> (e => new RunChecksProcedure(e)),
    "publish" -> (e => new PublishProcedure(e)),
    "bisect" -> (e => new BisectProcedure(e)))

  /** Procedures that call an API taking location options. */
  private val byContext: Map[String, ProcedureContext => UnboundProcedure] = Map(
    "delete_where" -> (c => new DeleteWhereProcedure(c)),
    "materialize" -> (c => new MaterializeProcedure(c)),
    "compact" -> (c => new CompactProcedure(c)),
    "diff" -> (c => new DiffProcedure(c)),
    "last_commit" -> (_ => new LastCommitProcedure),
    "begin_transaction" -> (c => new BeginTransactionProcedure(c)),
    "transaction_write" -> (_ => new TransactionWriteProcedure),
    "transaction_upsert" -> (_ => new TransactionUpsertProcedure),
    "transaction_delete_where" -> (_ => new TransactionDeleteWhereProcedure),
    "transaction_read" -> (_ => new TransactionReadProcedure),
    "transaction_state" -> (_ => new TransactionStateProcedure("state")),
    "commit_transaction" -> (_ => new TransactionStateProcedure("commit")),
    "abort_transaction" -> (_ => new TransactionStateProcedure("abort")))

  def names: Seq[String] = (byEngine.keys ++ byContext.keys).toSeq.sorted

  def load(context: ProcedureContext, name: String): UnboundProcedure =
    byEngine.get(name.toLowerCase).map(_(context.engine)).orElse(byContext.get(name.toLowerCase).map(_(context)))
      .getOrElse(throw Errors.unsupported(
      s"Unknown procedure '$name'. Available: ${names.mkString(", ")}."))
}
