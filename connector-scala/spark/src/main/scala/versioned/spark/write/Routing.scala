package versioned.spark.write

import versioned.spark.format.SparkKeys

import org.apache.spark.sql.Column
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.functions.{col => _, _}
import versioned.core.Fragment
import versioned.spark.format.Columns.col
import versioned.spark.format.{TableLayout, Values}

/**
 * Maps a key to its fragment by the kernel's routing rule ([[versioned.core.format.FragmentRouter]]: the
 * last fragment whose lower bound is <= the key, else the first). On the driver, the kernel's router
 * itself; for DataFrames, the same binary search over the same bounds unrolled into a column expression
 * (Spark compares keys in the key order), so that it runs in generated code. `RoutingSuite` checks
 * that both route every key alike.
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
    val bounds = frags.zipWithIndex.collect { case (Fragment(Some(lower), _), i) => (lower, i) }.toIndexedSeq
    // bounds(0 until lo) are <= the key and bounds(hi until n) above it
    def search(lo: Int, hi: Int): Column =
      if (lo == hi) lit(if (lo == 0) 0 else bounds(lo - 1)._2)
      else { val mid = (lo + hi) >>> 1; when(keyCol >= bound(bounds(mid)._1), search(mid + 1, hi)).otherwise(search(lo, mid)) }
    search(0, bounds.size)
  }

  /** A driver-side router over `frags` ([[versioned.core.format.FragmentRouter]]): key rows (key columns only, internal values) to fragment indexes. */
  def local(frags: Seq[Fragment], layout: TableLayout): InternalRow => Int = SparkKeys.router(frags, layout.keyTypes).apply
}
