package versioned.core.format

/**
 * Column names the format reserves: columns of objects (`_vchange`, `_vdup`, the before-image columns),
 * metadata columns of scans (`_vrowid`, `_vbefore`) and engine temporaries. User tables may not have
 * columns of these names (case-insensitively).
 */
object Reserved {
  /** The change kind of a DIFF row (`versioned.core.ChangeKind`). */
  val Change = "_vchange"
  /** The duplicate ordinal of a key-less table's row: the row plus it is the row's identity. */
  val Dup = "_vdup"
  /** A before-image DIFF's chain: a hash of the object ids the DIFF was written on, the same in every row. */
  val PriorChain = "_vprior_chain"
  /** A before-image DIFF's prior row: a struct of the key's non-key columns in that chain (null: absent). */
  val Prior = "_vprior"
  /** Metadata column of key-less tables: a struct of all user columns and `_vdup` (their row id). */
  val RowId = "_vrowid"
  /** Metadata column of keyed tables: a struct of the row's non-key columns as the scan read them. */
  val Before = "_vbefore"

  /** Every reserved name: the columns above and the temporaries of the engine's plans. */
  val All: Set[String] = Set(Dup, Change, "_vfrag", RowId, "_vexists", "_vrn", "_vbase",
    "_vnc", "_voc", "_vmax", "_vi", "_vo", "_vn", "_vnull", "_vcount", Before, Prior, PriorChain)

  /** Whether a user column name is reserved. */
  def isReserved(column: String): Boolean = All.contains(column.toLowerCase)

  /**
   * Columns the product adds to the rows it returns: a diff's `_change`, the change feed's `_change_type`,
   * `_commit_version` and `_commit_timestamp`, blame's `_commit_hash`, `_commit_author` and `_commit_message`. A user
   * column of one of these names would be returned twice (as Delta Lake refuses its change feed's names), so new
   * tables may not have them either (case-insensitively).
   */
  val Generated: Set[String] = Set("_change", "_change_type", "_commit_version", "_commit_timestamp", "_commit_hash",
    "_commit_author", "_commit_message")

  /** Whether a user column name is one the product's results add. */
  def isGenerated(column: String): Boolean = Generated.contains(column.toLowerCase)

  /**
   * Key columns named like the before or after column a diff gives a non-key column (`<c>_before`, `<c>_after`,
   * case-insensitively): a diff's rows would have two columns of that name. `(key column, non-key column)` pairs.
   */
  def diffClashes(keyColumns: Seq[String], nonKeyColumns: Seq[String]): Seq[(String, String)] = for {
    k <- keyColumns
    v <- nonKeyColumns
    if k.equalsIgnoreCase(v + "_before") || k.equalsIgnoreCase(v + "_after")
  } yield (k, v)
}
