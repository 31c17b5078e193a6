package versioned.spark.catalog.procedures

import versioned.core.{Engine, Ref}

/** `rename_branch(repository, branch, new_name)`: renames a branch (the default branch stays the default). */
private[procedures] final class RenameBranchProcedure(engine: () => Engine) extends RefProcedure(engine) {
  override def name(): String = "rename_branch"
  override def description(): String = "Renames a branch; renaming the default branch makes the new name the default."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo, Param("branch", required = true, "branch to rename"),
    Param("new_name", required = true, "its new name"))
  override protected def run(e: Engine, a: Args): Ref = {
    val repo = a("repository")
    e.refs.renameBranch(repo, a("branch"), a("new_name"))
    existing(e, repo, s"heads/${a("new_name")}", s"Branch '${a("new_name")}'")
  }
}
