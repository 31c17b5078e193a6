package versioned.spark.catalog.procedures

import versioned.core.{Engine, Ref}

/** `create_branch(repository, branch, from_ref => NULL)`: a new branch at `from_ref` (default: the default branch head). */
private[procedures] final class CreateBranchProcedure(engine: () => Engine) extends RefProcedure(engine) {
  override def name(): String = "create_branch"
  override def description(): String = "Creates a branch at a revision (default: the head of the default branch)."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo, Param("branch", required = true, "new branch"),
    Param("from_ref", required = false, "revision to branch from; default: the default branch"))
  override protected def run(e: Engine, a: Args): Ref = e.refs.createBranch(a("repository"), a("branch"), a.revision("from_ref"))
}
