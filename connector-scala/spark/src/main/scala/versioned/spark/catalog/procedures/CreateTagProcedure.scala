package versioned.spark.catalog.procedures

import versioned.core.{Engine, Ref}

/** `create_tag(repository, tag, ref => NULL)`: an immutable tag at `ref` (default: the default branch head). */
private[procedures] final class CreateTagProcedure(engine: () => Engine) extends RefProcedure(engine) {
  override def name(): String = "create_tag"
  override def description(): String = "Tags a revision (default: the head of the default branch). Tags never move."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo, Param("tag", required = true, "new tag"),
    Param("ref", required = false, "revision to tag; default: the default branch"))
  override protected def run(e: Engine, a: Args): Ref = e.refs.createTag(a("repository"), a("tag"), a.revision("ref"))
}
