package versioned.core.format

import versioned.core.ChangeKind

/**
 * The change rule: what a DIFF row records for a key, given whether the key had a row before, has one
 * after, and whether the values are the same. The one definition behind an overwrite's changes, a
 * row-level operation's changes and a driver-side commit's changes; engines evaluate it as [[decisions]]
 * says, in order (the Spark module builds its distributed form from that list).
 *
 *  - a row before, none after: `Delete` (a tombstone: the key and null values);
 *  - none before, a row after: `Insert`;
 *  - rows on both sides with a value not the same (null-safe equality): `Update`;
 *  - otherwise no change, and no DIFF row.
 *
 * `Upsert` rows are written without reading the table (their cost follows the change): on read an upsert
 * acts as an insert or an update of its key. On read, a winning `Delete` hides its key ([[hides]]).
 */
object ChangeRule {
  /** What holds for a key before and after a change. */
  sealed trait Case
  /** The key has a row before and none after. */
  case object Removed extends Case
  /** The key has no row before and one after. */
  case object Added extends Case
  /** The key has a row on both sides and some value differs. */
  case object Changed extends Case

  /** The change each case records, in the order they are tested. */
  val decisions: Seq[(Case, Byte)] = Seq(Removed -> ChangeKind.Delete, Added -> ChangeKind.Insert, Changed -> ChangeKind.Update)

  /** The change of one key; None when nothing changed. */
  def change(before: Boolean, after: Boolean, same: => Boolean): Option[Byte] =
    decisions.collectFirst { case (c, k) if holds(c, before, after, same) => k }

  private def holds(c: Case, before: Boolean, after: Boolean, same: => Boolean): Boolean = c match {
    case Removed => before && !after
    case Added => !before && after
    case Changed => before && after && !same
  }

  /** Whether a winning change of this kind hides its key from reads. */
  def hides(kind: Byte): Boolean = kind == ChangeKind.Delete

  /** Whether a change of this kind leaves a row for its key. */
  def keeps(kind: Byte): Boolean = !hides(kind)
}
