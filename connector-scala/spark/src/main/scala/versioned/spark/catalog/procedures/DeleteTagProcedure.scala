package versioned.spark.catalog.procedures

import versioned.core.{Engine, Ref}

/** `delete_tag(repo, name)`. */
private[procedures] final class DeleteTagProcedure(engine: () => Engine) extends RefProcedure(engine) {
  override def name(): String = "delete_tag"
  override def description(): String = "Deletes a tag."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo, Param("name", required = true, "tag to delete"))
  override protected def run(e: Engine, a: Args): Ref = {
    val ref = existing(e, a("repo"), Ref.tag(a("name")), s"Tag '${a("name")}'")
    e.refs.deleteTag(a("repo"), a("name"))
    ref
  }
}
