package versioned.spark.write

import java.util.UUID
import java.util.concurrent.ConcurrentHashMap
import versioned.core.Errors
import versioned.spark.session.VersionedOptions

/**
 * Writes whose staged rows go to a handler instead of a commit: the operations of a transaction
 * (`tx.Transaction`) are ordinary DSv2 writes, with their option checks, staging and small-write path,
 * that the transaction plans on its own uncommitted view. Such a write carries only an unguessable token
 * ([[VersionedOptions.Deferred]]) naming a handler registered in this JVM; an unknown token is refused, so
 * a user cannot redirect a write.
 */
private[versioned] object DeferredWrites {
  /** Receives a write's request and staged rows on the driver, in place of [[CommitPlanner.commit]]. */
  type Handler = (WriteRequest, StagedInput) => Unit

  private val handlers = new ConcurrentHashMap[String, Handler]()

  /** Registers `handler` until [[unregister]]; returns the token a write passes as option [[VersionedOptions.Deferred]]. */
  def register(handler: Handler): String = {
    val token = UUID.randomUUID().toString
    handlers.put(token, handler)
    token
  }

  def unregister(token: String): Unit = handlers.remove(token)

  /** The handler named by a write's options, if they name one; an unknown token is INVALID_OPTION. */
  def of(options: Map[String, String]): Option[Handler] =
    options.collectFirst { case (k, v) if k.equalsIgnoreCase(VersionedOptions.Deferred) => v }.map { token =>
      Option(handlers.get(token)).getOrElse(throw Errors.invalidOption(s"Option '${VersionedOptions.Deferred}' is " +
        "internal to versioned and cannot be set by a write (or the transaction it names has ended)."))
    }
}
