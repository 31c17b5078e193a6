package versioned.spark.write

/**
 * Writes whose staged rows go to a handler instead of a commit: the operations of a transaction
 * (`tx.Transaction`) are ordinary DSv2 writes, with their option checks, staging and small-write path, that the
 * transaction plans on its own uncommitted view. The handler is part of the table value the write targets
 * (`VersionedTable.deferred`, a relation the transaction builds): nothing a user can name reaches it, and no
 * registry holds it.
 */
private[versioned] object DeferredWrites {
  /** Receives a write's request and staged rows on the driver, in place of [[CommitPlanner.commit]]. */
  type Handler = (WriteRequest, StagedInput) => Unit
}
