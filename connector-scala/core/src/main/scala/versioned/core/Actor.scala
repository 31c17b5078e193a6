package versioned.core

/**
 * Who did an operation (docs/AUDIT.md): the user (`spark.versioned.user`, else Spark's user, else the JVM's),
 * the application (Spark's application id) and the client it came through, one of [[Actor.Clients]]. Every ref
 * movement records it in the reflog ([[Reflog]]).
 */
final case class Actor(user: String, appId: String, client: String)

object Actor {
  val Python = "python"
  val Sql = "sql"
  val Cli = "cli"
  val Connect = "connect"
  val Scala = "scala"
  /** The clients an operation can come through. */
  val Clients: Seq[String] = Seq(Python, Sql, Cli, Connect, Scala)

  /** This process without a Spark session: the JVM's user, no application id, the Scala client. */
  val process: Actor = Actor(System.getProperty("user.name", "unknown"), "", Scala)
}

/**
 * Why a ref moves: the operation (one of [[Cause]]'s names), who did it, and a free-text detail (the other name
 * of a rename, the rule of a protection change). Every metastore function that moves a ref takes one and appends
 * the reflog entry in the same transaction ([[Reflog.append]]).
 */
final case class Cause(operation: String, actor: Actor, detail: String = "")

object Cause {
  val Commit = "commit"
  val Merge = "merge"
  val Reset = "reset"
  val Create = "create"
  val Delete = "delete"
  val Rename = "rename"
  val DefaultBranch = "default-branch"
  val Protect = "protect"
  val Unprotect = "unprotect"
  /** A retention policy set or replaced (the detail says the policy), and one removed: on `retention/<pattern>`. */
  val Retain = "retain"
  val Unretain = "unretain"
  val Push = "push"
  val Fetch = "fetch"
  /** A pull's move of its local branch (created, fast-forwarded or merged; the detail says which and from where). */
  val Pull = "pull"
  val Clone = "clone"
  val RemoveRemote = "remove-remote"
  /** Garbage collection deleting a branch a retention policy expired (the detail says which policy). */
  val Expire = "expire"
}
