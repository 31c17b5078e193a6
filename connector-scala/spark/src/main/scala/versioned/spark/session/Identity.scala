package versioned.spark.session

import org.apache.spark.sql.SparkSession
import versioned.core.{Actor, Engine}

/**
 * Who an engine operation is for (docs/AUDIT.md): the active session's `spark.versioned.user` (else Spark's user),
 * its application id, and its client. The client is the transport's (`spark.versioned.client`: the Python package
 * says `python` or `connect`, the CLI `cli`); a SQL procedure says `sql` unless the session came through Spark
 * Connect or the CLI (whose calls are procedures too); else `scala`.
 */
private[versioned] object Identity {
  private val calledAs = new ThreadLocal[Option[String]] { override def initialValue(): Option[String] = None }

  /** Runs `f` as a call of `client` (a SQL procedure's). */
  def as[T](client: String)(f: => T): T = {
    val before = calledAs.get
    calledAs.set(Some(client))
    try f finally calledAs.set(before)
  }

  /** The actor of the calling thread's active session (else the default session); the process's when there is none. */
  def current(): Actor = SparkSession.getActiveSession.orElse(SparkSession.getDefaultSession) match {
    case None => Actor.process.copy(client = calledAs.get.getOrElse(Actor.Scala))
    case Some(s) =>
      val settings = Settings.of(s)
      val declared = settings.client
      val client = declared.filter(c => c == Actor.Connect || c == Actor.Cli).orElse(calledAs.get).orElse(declared)
        .getOrElse(Actor.Scala)
      Actor(settings.user.getOrElse(s.sparkContext.sparkUser), s.sparkContext.applicationId, client)
  }

  private val source: () => Actor = () => current()

  /** Makes `engine` ask this session layer who acts (once per engine). */
  def install(engine: Engine): Engine = { if (engine.actors ne source) engine.actors = source; engine }
}
