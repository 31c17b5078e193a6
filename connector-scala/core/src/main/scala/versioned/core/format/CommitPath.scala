package versioned.core.format

/**
 * The choice of a write's path, as one function of the request and of the table it builds on. Made twice
 * per write with the same rules: when the write is built ([[write]]: which tasks run) and when it commits
 * ([[step]]: how the driver turns what the tasks produced into a table version), the second time on the
 * head the commit builds on.
 */
object CommitPath {
  /**
   * What the path depends on in a request: its mode, `upsert`, whether it names a primary key, has a
   * delete-marker column, expects a head (compare-and-swap on a given commit), is part of a transaction, or replaces
   * the rows matching a condition (`replaceWhere`: a delete and an append in one commit).
   */
  final case class Request(mode: WriteMode, upsert: Boolean, keyGiven: Boolean, deleteColumn: Boolean,
                           expectedHead: Boolean, inTransaction: Boolean, replaceWhere: Boolean = false)

  /**
   * The table on the head: whether it exists, whether it has the data's columns and the key the write
   * implies (`sameShape`), and whether it has a primary key.
   */
  final case class Target(exists: Boolean, sameShape: Boolean, keyed: Boolean)

  /** The write's tasks. */
  sealed trait Write
  /** Tasks sort their rows by key and write a new SNAP in one pass (a new table, or a new shape by overwrite). */
  case object OnePassSnapshot extends Write
  /** Tasks compare their sorted rows with the current rows of their key range and write only changed rows. */
  case object OnePassOverwrite extends Write
  /** Tasks stage their rows (a small upsert's rows stay in memory); the driver plans the commit. */
  case object Staged extends Write

  /** Whether the write's tasks may depend on the table (else they always stage: no need to look it up). */
  def dependsOnTable(r: Request): Boolean =
    !(r.deleteColumn || r.expectedHead || r.inTransaction || r.replaceWhere || r.mode == WriteMode.Changes)

  /** Whether the write makes a new SNAP of keyed data: a new table, or a new shape by overwrite, with a key given. */
  def newSnapshot(r: Request, t: Target): Boolean =
    r.keyGiven && r.mode != WriteMode.Changes && (!t.exists || (r.mode == WriteMode.Overwrite && !t.sameShape))

  def write(r: Request, t: Target): Write =
    if (!dependsOnTable(r)) Staged
    else if (newSnapshot(r, t)) OnePassSnapshot
    else if (r.mode == WriteMode.Overwrite && t.exists && t.keyed && t.sameShape) OnePassOverwrite
    else Staged

  /**
   * What the tasks of a write handed to the driver: rows kept in memory (`localRows`), and whether the driver
   * can check those rows' keys against the committed table (`keysCheckable`: few keys to look up, a key that takes lookups),
   * DIFFs over the head (`overwriteDiffs`), SNAP objects (`snapshotObjects`), and whether rows kept in memory fit
   * one fragment of a new SNAP (`oneFragment`).
   */
  final case class Produced(localRows: Boolean, overwriteDiffs: Boolean, snapshotObjects: Boolean,
                            keysCheckable: Boolean = false, oneFragment: Boolean = false)

  /** How the driver commits. */
  sealed trait Step
  /**
   * A small append to a keyed table whose rows are on the driver: the driver writes the DIFFs. An upsert's changes
   * follow from its rows; an insert's once the driver has looked its keys up in the table (each must be new).
   */
  case object LocalAppend extends Step
  /**
   * A new SNAP of keyed rows on the driver that fit one fragment (a new table, or a new shape by overwrite, of a
   * write whose tasks staged: a transaction's, or one that expects a head): the driver validates, sorts and writes it.
   */
  case object LocalSnapshot extends Step
  /** Computed changes already on the driver: the driver writes them. */
  case object LocalChanges extends Step
  /** Computed changes as a distributed frame: counted, then written by the driver or by jobs. */
  case object ComputedChanges extends Step
  /** The DIFFs the overwrite's tasks wrote over the version on the head (planned from their rows if unusable). */
  case object TaskDiffs extends Step
  /** The SNAP objects the tasks wrote (planned from their rows if unusable). */
  case object TaskSnapshot extends Step
  /** Validation, change computation and object writing as Spark jobs. */
  case object Distributed extends Step

  def step(r: Request, t: Target, p: Produced): Step = {
    val onShape = t.exists && t.sameShape
    if (p.localRows && onShape && r.mode == WriteMode.Append && t.keyed && (r.upsert || p.keysCheckable)) LocalAppend
    else if (p.localRows && onShape && r.mode == WriteMode.Changes) LocalChanges
    else if (p.localRows && p.oneFragment && newSnapshot(r, t) && !r.deleteColumn) LocalSnapshot
    else if (p.localRows) Distributed
    else if (onShape && r.mode == WriteMode.Changes) ComputedChanges
    else if (onShape && p.overwriteDiffs && r.mode == WriteMode.Overwrite) TaskDiffs
    else if (p.snapshotObjects) TaskSnapshot
    else Distributed
  }

  /**
   * Whether a driver commit writes its change set of `rows` rows, which touches `touched` fragments, as **one**
   * shared DIFF listed by each touched fragment's chain (format version 2, docs/FORMAT.md) rather than one DIFF per
   * fragment: when it touches more than one fragment, has at most `maxRows` rows (`sharedDiffMaxRows`; 0: never) and
   * records no before-images (whose chain hash names one chain).
   */
  def sharedDiff(rows: Long, touched: Int, beforeImages: Boolean, maxRows: Long): Boolean =
    !beforeImages && touched > 1 && rows <= maxRows

  /**
   * How a change set written by Spark tasks (too large for the driver) is cut into DIFFs: each task, holding the
   * changes of some fragments grouped by fragment in key order, writes them on into one object across its
   * fragments until the object holds at least the returned number of rows, then starts the next at its next
   * fragment. An object listed by several fragments is a shared DIFF (format version 2). A commit then writes
   * about max(tasks, rows / `maxRows`) objects, not one per touched fragment, and no object holds more than
   * `maxRows` rows plus one fragment's changes. 0 (`sharedDiffMaxRows` = 0, or before-images, whose chain hash
   * names one chain): one DIFF per touched fragment.
   */
  def taskDiffSpan(beforeImages: Boolean, maxRows: Long): Long = if (beforeImages) 0L else maxRows
}
