package versioned.core.format

import versioned.core.{Fragment, ObjectKind, ObjectMeta}

/**
 * Appends past the last key (docs/FORMAT.md, "Appends past the last key"): an append whose keys all lie above every
 * key the table's last fragment may hold is written as a **new last fragment**, one SNAP of the appended rows whose
 * `lower` is their smallest key, instead of a DIFF on the last fragment. That is the layout a tail split of the
 * compaction policy ([[CompactionPolicy]]) gives such a DIFF later, reached without rewriting anything: a stream of
 * ascending ids leaves nothing to compact.
 *
 * Guard against small fragments: only when the append and the last fragment's SNAP each hold at least half the
 * target fragment size ([[minRows]], the tail split's own threshold), so a write never leaves a fragment smaller than
 * a compaction would; smaller appends stay DIFFs on the last fragment, for the policy to consolidate or split.
 */
object TailFragment {
  /** The fewest rows of an append, and of the last fragment's SNAP, for the rule: half the target fragment size. */
  def minRows(fragmentRows: Long): Long = math.max(1L, fragmentRows / 2)

  /**
   * Whether an append (no deletes) of `rows` rows whose smallest key's first column is `smallest` (canonical, of
   * type `first`, the table's first key column `keyColumn`) is written as a new last fragment of the table version
   * whose effective fragments are `frags` (their objects' records by `objects`): the last fragment's chain starts
   * with a SNAP of at least [[minRows]] rows, the append has as many, and `smallest` is above the last fragment's
   * lower bound and above the largest first key column value (`max_values`) of every non-empty object of its chain.
   * The fragments before the last hold keys below its lower bound (the read rule), so the appended keys are above
   * every key of the table; as they are compared by the first column only, they are strictly above every stored key
   * tuple, whatever the other key columns. False when a statistic it needs is missing.
   */
  def applies(first: KeyType, keyColumn: String, rows: Long, smallest: Any, frags: Seq[Fragment],
              objects: String => ObjectMeta, fragmentRows: Long): Boolean = {
    val min = minRows(fragmentRows)
    def below(v: Any): Boolean = v != null && KeyOrder.compareCanonical(first, v, smallest) < 0
    rows >= min && smallest != null && frags.lastOption.exists { last =>
      val chain = last.objects.map(objects)
      chain.headOption.exists(s => s.kind == ObjectKind.Snap && s.rowCount >= min) &&
        last.lower.forall(l => below(l.head)) &&
        chain.forall(m => m.rowCount == 0 || m.maxValues.get(keyColumn).exists(below))
    }
  }

  /** `frags` followed by the new last fragment: bound `lower` (the appended rows' smallest key, canonical), chain `snap`. */
  def appended(frags: Seq[Fragment], lower: Seq[Any], snap: String): Seq[Fragment] = frags :+ Fragment(Some(lower), Seq(snap))
}
