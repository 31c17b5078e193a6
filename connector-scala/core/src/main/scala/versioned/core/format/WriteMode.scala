package versioned.core.format

/** How a write relates to the table's current content. */
sealed trait WriteMode

object WriteMode {
  /** The rows are added (with `upsert`, applied by key). */
  case object Append extends WriteMode
  /** The rows are the table's new content. */
  case object Overwrite extends WriteMode
  /** Pre-computed changes in the DIFF layout (row-level DELETE/UPDATE/MERGE, deleteWhere, merges). */
  case object Changes extends WriteMode
}
