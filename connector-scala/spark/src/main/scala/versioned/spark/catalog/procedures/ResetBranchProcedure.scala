package versioned.spark.catalog.procedures

import versioned.core.{Engine, Ref, Revision}

/**
 * `reset_branch(repository, branch, ref, expected => NULL)`: moves a branch to the image `ref` resolves to.
 * With `expected` (a revision), the move happens only if the branch is still there.
 */
private[procedures] final class ResetBranchProcedure(engine: () => Engine) extends RefProcedure(engine) {
  override def name(): String = "reset_branch"
  override def description(): String = "Moves a branch to another revision (history is kept)."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo, Param("branch", required = true, "branch to move"),
    Param("ref", required = true, "revision to move it to"),
    Param("expected", required = false, "revision the branch must be at; default: no check"))
  override protected def run(e: Engine, a: Args): Ref = {
    val repo = a("repository")
    val expected = a.opt("expected").filter(_.trim.nonEmpty).map(x => e.resolve(repo, Revision.Spec(x.trim)).hash)
    e.refs.resetBranch(repo, a("branch"), Revision.Spec(a("ref")), expected)
  }
}
