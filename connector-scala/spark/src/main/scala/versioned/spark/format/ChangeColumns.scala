package versioned.spark.format

import org.apache.spark.sql.Column
import org.apache.spark.sql.functions.{lit, when}
import org.apache.spark.sql.types.ByteType
import versioned.core.format.ChangeRule

/** The kernel's change rule ([[ChangeRule]]) as a column, for changes computed by distributed joins. */
private[versioned] object ChangeColumns {
  /** A change kind as a column of the DIFF layout's type. */
  def kind(k: Byte): Column = lit(k).cast(ByteType)

  /**
   * The change kind of a key from whether it has a row `before`, one `after`, and whether their values are
   * the `same` (all boolean columns); null when nothing changed. Built from [[ChangeRule.decisions]], in order.
   */
  def change(before: Column, after: Column, same: Column): Column = {
    def holds(c: ChangeRule.Case): Column = c match {
      case ChangeRule.Removed => before && !after
      case ChangeRule.Added => !before && after
      case ChangeRule.Changed => before && after && !same
    }
    val (first, k) = ChangeRule.decisions.head
    ChangeRule.decisions.tail.foldLeft(when(holds(first), kind(k))) { case (acc, (c, kk)) => acc.when(holds(c), kind(kk)) }
  }
}
