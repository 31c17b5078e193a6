package versioned.spark.catalog.procedures

import versioned.core.{Engine, Ref}

/** `create_lock(repository, namespace, name, ref => NULL)`: pins a revision as `namespace:name` (immutable). */
private[procedures] final class CreateLockProcedure(engine: () => Engine) extends RefProcedure(engine) {
  override def name(): String = "create_lock"
  override def description(): String = "Pins a revision under namespace:name (default: the default branch head)."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo, Param("namespace", required = true, "lock namespace"),
    Param("name", required = true, "lock name"), Param("ref", required = false, "revision to pin; default: the default branch"))
  override protected def run(e: Engine, a: Args): Ref =
    e.refs.createLock(a("repository"), a("namespace"), a("name"), a.revision("ref"))
}
