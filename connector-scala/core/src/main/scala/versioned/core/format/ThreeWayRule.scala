package versioned.core.format

/**
 * The three-way merge rule of a keyed table, for a key both sides changed since the merge base
 * (docs/MERGE.md). A key only one side changed takes that side, whole.
 *  - one side deleted the row and the other did not: a row conflict ([[rowConflict]]); both deleted it: agreed;
 *  - otherwise cell by cell: a cell both sides set to different values conflicts when both inserted the key,
 *    or when neither side kept the base value ([[cellConflict]]); a cell one side left at its base value
 *    takes the other side's value, and an agreeing cell takes either ([[takesTheirs]]);
 *  - a conflicting cell or row is settled by the merge's strategy: ours, theirs, or not at all (the merge
 *    then reports its conflicts and commits nothing).
 * A column only one side has (a schema change) never conflicts: the side without it left it unchanged.
 *
 * Defined over [[Logic]], so that a driver evaluates it on booleans and a distributed plan on columns.
 */
object ThreeWayRule {
  /** Whether the row conflicts, given whether each side deleted it (both sides changed it). */
  def rowConflict[B](oursDeleted: B, theirsDeleted: B)(implicit l: Logic[B]): B =
    l.or(l.and(oursDeleted, l.not(theirsDeleted)), l.and(l.not(oursDeleted), theirsDeleted))

  /**
   * Whether a cell conflicts, both sides having kept the row: `bothInserted` (the key is new on both sides),
   * and null-safe equalities of the cell's base, ours and theirs values.
   */
  def cellConflict[B](bothInserted: B, baseIsOurs: B, baseIsTheirs: B, oursIsTheirs: B)(implicit l: Logic[B]): B =
    l.and(l.not(oursIsTheirs), l.or(bothInserted, l.and(l.not(baseIsOurs), l.not(baseIsTheirs))))

  /**
   * Whether the merged cell takes theirs' value (else ours'): a conflicting cell as the strategy says
   * (`strategyTheirs`), another cell when ours kept the base value.
   */
  def takesTheirs[B](conflict: B, baseIsOurs: B, strategyTheirs: Boolean)(implicit l: Logic[B]): B =
    l.or(l.and(conflict, l.constant(strategyTheirs)), l.and(l.not(conflict), baseIsOurs))
}
