package versioned.spark.catalog.procedures

import versioned.core.{Engine, Ref}

/** `delete_branch(repository, branch)`: deletes a branch (not the default branch); its images stay reachable from other refs. */
private[procedures] final class DeleteBranchProcedure(engine: () => Engine) extends RefProcedure(engine) {
  override def name(): String = "delete_branch"
  override def description(): String = "Deletes a branch. The default branch is protected."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo, Param("branch", required = true, "branch to delete"))
  override protected def run(e: Engine, a: Args): Ref = {
    val ref = existing(e, a("repository"), Ref.branch(a("branch")), s"Branch '${a("branch")}'")
    e.refs.deleteBranch(a("repository"), a("branch"))
    ref
  }
}
