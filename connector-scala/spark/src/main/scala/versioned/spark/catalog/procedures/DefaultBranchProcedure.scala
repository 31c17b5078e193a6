package versioned.spark.catalog.procedures

import versioned.core.{Engine, Ref, RefKind}

/**
 * `default_branch(repository, branch => NULL)`: the repository's default branch (what reads and writes that
 * name no branch use); with `branch`, makes that existing branch the default first. The result row is the
 * default branch after the call.
 */
private[procedures] final class DefaultBranchProcedure(engine: () => Engine) extends RefProcedure(engine) {
  override def name(): String = "default_branch"
  override def description(): String =
    "Returns the repository's default branch; with branch => '<name>', makes that branch the default first."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("branch", required = false, "an existing branch to make the default (NULL: only report the default)"))
  override protected def run(e: Engine, a: Args): Ref = {
    val repo = a("repository")
    a.opt("branch") match {
      case Some(b) => e.refs.setDefaultBranch(repo, b.trim)
      case None =>
        // a repository with no commit yet has a default branch but no ref: its row has an empty image
        val b = e.defaultBranch(repo)
        e.refs.all(repo).find(_.fullName == Ref.branch(b)).getOrElse(Ref(Ref.branch(b), RefKind.Branch, "", 0L))
    }
  }
}
