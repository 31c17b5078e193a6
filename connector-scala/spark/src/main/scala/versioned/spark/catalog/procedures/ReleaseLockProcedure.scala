package versioned.spark.catalog.procedures

import versioned.core.{Engine, Ref}

/** `release_lock(repository, namespace, name)`. */
private[procedures] final class ReleaseLockProcedure(engine: () => Engine) extends RefProcedure(engine) {
  override def name(): String = "release_lock"
  override def description(): String = "Releases (deletes) a lock."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo, Param("namespace", required = true, "lock namespace"),
    Param("name", required = true, "lock name"))
  override protected def run(e: Engine, a: Args): Ref = {
    val ref = existing(e, a("repository"), Ref.lock(a("namespace"), a("name")), s"Lock '${a("namespace")}:${a("name")}'")
    e.refs.releaseLock(a("repository"), a("namespace"), a("name"))
    ref
  }
}
