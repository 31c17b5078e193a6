package versioned.spark.catalog.procedures

import versioned.core.{Engine, Ref}

/** `delete_tag(repository, tag)`. */
private[procedures] final class DeleteTagProcedure(engine: () => Engine) extends RefProcedure(engine) {
  override def name(): String = "delete_tag"
  override def description(): String = "Deletes a tag."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo, Param("tag", required = true, "tag to delete"))
  override protected def run(e: Engine, a: Args): Ref = {
    val ref = existing(e, a("repository"), Ref.tag(a("tag")), s"Tag '${a("tag")}'")
    e.refs.deleteTag(a("repository"), a("tag"))
    ref
  }
}
