package versioned.spark.write

import org.apache.spark.sql.Column
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.functions.{col => _, _}
import versioned.core.Fragment
import versioned.spark.Columns.col
import versioned.spark.{TableLayout, Values}
import versioned.spark.read.KeyComparator

/**
 * Maps a key to its fragment: the last fragment whose lower bound is <= the key (fragments after the
 * first have ascending lower bounds). As a column for DataFrames, and on the driver for small writes.
 */
private[versioned] object Routing {
  def fragmentOf(frags: Seq[Fragment], layout: TableLayout): Column = {
    val keyFields = layout.keyFields
    def keyCol: Column =
      if (keyFields.size == 1) col(keyFields.head.name)
      else struct(keyFields.map(f => col(f.name)): _*)
    def bound(values: Seq[Any]): Column =
      if (keyFields.size == 1) lit(Values.toExternal(values.head, keyFields.head.dataType)).cast(keyFields.head.dataType)
      else struct(keyFields.zip(values).map { case (f, v) => lit(Values.toExternal(v, f.dataType)).cast(f.dataType).as(f.name) }: _*)
    frags.zipWithIndex.foldLeft(lit(0)) {
      case (acc, (Fragment(Some(lower), _), i)) => when(keyCol >= bound(lower), lit(i)).otherwise(acc)
      case (acc, _) => acc
    }
  }

  /** A driver-side router over `frags`: key rows (key columns only, internal values) to fragment indexes. */
  def local(frags: Seq[Fragment], layout: TableLayout): InternalRow => Int = {
    val types = layout.keyTypes
    val cmp = new KeyComparator(types)
    val bounds = frags.zipWithIndex.collect { case (Fragment(Some(lower), _), i) => (Values.internalRow(lower, types), i) }.toArray
    key => {
      // binary search for the last bound <= key; none: fragment 0
      var lo = 0
      var hi = bounds.length
      while (lo < hi) {
        val mid = (lo + hi) >>> 1
        if (cmp.compare(bounds(mid)._1, key) <= 0) lo = mid + 1 else hi = mid
      }
      if (lo == 0) 0 else bounds(lo - 1)._2
    }
  }
}
