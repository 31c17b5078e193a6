package versioned.spark.diff

import scala.collection.mutable.ArrayBuffer
import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.expressions.{And, BoundReference, EqualNullSafe, Expression, GenericInternalRow,
  JoinedRow, Literal, UnsafeProjection}
import org.apache.spark.sql.types.{DataType, StructType}
import org.apache.spark.sql.vectorized.ColumnarBatch
import org.apache.spark.unsafe.types.UTF8String
import versioned.core.ChangeKind
import versioned.spark.read.{Conflation, KeyComparator, ObjectFile, ObjectFiles}

/** One fragment of a fast diff: the objects of the common prefix, and the extra DIFFs of each side (oldest first). */
private[diff] final case class FragmentTask(prefixSnap: Option[ObjectFile], prefixDiffs: Seq[ObjectFile],
                                            extraFrom: Seq[ObjectFile], extraTo: Seq[ObjectFile])

/**
 * Parquet readers prepared on the driver for [[FragmentDiff]]; rows lead with the key columns, then
 * the value columns (`rowSchema`), DIFF rows add the change kind.
 *
 * @param diffRows DIFF rows, whole objects (the extra DIFFs)
 * @param diffLookup DIFF rows of the prefix, with the changed keys pushed down as a filter (pages skipped)
 * @param snapLookup SNAP rows of the prefix with the same filter, as column batches when `snapBatches`
 */
private[diff] final case class FragmentDiffReaders(
    rowSchema: StructType,
    keyCount: Int,
    userKeyOrdinals: Seq[Int],
    diffRows: ObjectFiles.Reader,
    diffLookup: Option[ObjectFiles.Reader],
    snapLookup: Option[ObjectFiles.Reader],
    snapBatches: Boolean,
    resultSchema: StructType,
    hadoopConf: org.apache.spark.broadcast.Broadcast[org.apache.spark.util.SerializableConfiguration])

/**
 * Executor side of the fast diff of one fragment whose two chains are a common prefix P followed by
 * extra DIFFs EA (from) and EB (to). EA and EB are read whole and conflated; a key in both has its
 * before and after rows there; a key in only one of them has, on the other side, its row in P, which is
 * looked up for those keys only: P's DIFFs and SNAP are read with the keys pushed down to Parquet (row
 * groups and pages that cannot hold them are skipped) and merged against the sorted keys. Rows whose
 * before and after values are the same (an upsert of equal values, a delete of a missing key) are no change.
 */
private[diff] object FragmentDiff {
  /** SNAP rows the lookups decoded (after Parquet skipped row groups and pages), in this JVM (for tests). */
  private[versioned] val snapRowsRead = new java.util.concurrent.atomic.AtomicLong()

  def rows(r: FragmentDiffReaders, t: FragmentTask): Iterator[Row] = {
    val conf = r.hadoopConf.value.value
    val width = r.rowSchema.length
    val types = r.rowSchema.fields.map(_.dataType)
    val keys = new KeyComparator(types.take(r.keyCount).toSeq)
    val diffSchema = r.rowSchema.add("change", org.apache.spark.sql.types.ByteType, nullable = false)
    val copyDiff = ObjectFiles.identity(diffSchema)
    val trim = UnsafeProjection.create(r.rowSchema.fields.toSeq.zipWithIndex.map { case (f, i) => BoundReference(i, f.dataType, f.nullable) })
    def conflated(files: Seq[ObjectFile], read: ObjectFiles.Reader): Array[InternalRow] =
      if (files.isEmpty) Array.empty
      else Conflation(files.map(ObjectFiles.load(read, _, copyDiff, conf)).toArray, types.take(r.keyCount).toSeq)
    /** A DIFF row as the row it leaves (null: the key is deleted). */
    def live(d: InternalRow): InternalRow = if (d.getByte(width) == ChangeKind.Delete) null else trim(d).copy()

    val ea = conflated(t.extraFrom, r.diffRows)
    val eb = conflated(t.extraTo, r.diffRows)
    // keys of EA and EB in order, each with its DIFF rows (null: not in that side's extra DIFFs)
    val pairs = ArrayBuffer.empty[(InternalRow, InternalRow)]
    var i = 0; var j = 0
    while (i < ea.length || j < eb.length) {
      val c = if (i >= ea.length) 1 else if (j >= eb.length) -1 else keys.compare(ea(i), eb(j))
      if (c < 0) { pairs += ((ea(i), null)); i += 1 }
      else if (c > 0) { pairs += ((null, eb(j))); j += 1 }
      else { pairs += ((ea(i), eb(j))); i += 1; j += 1 }
    }
    val oneSided = pairs.indices.filter(p => pairs(p)._1 == null || pairs(p)._2 == null)
    val wanted = oneSided.map { p => val (a, b) = pairs(p); if (a != null) a else b }.toArray
    val base = if (t.prefixSnap.isEmpty && t.prefixDiffs.isEmpty) new Array[InternalRow](wanted.length)
      else lookup(r, t, wanted, keys, conflated, live, conf)
    val baseOf = oneSided.zipWithIndex.toMap

    val same = sameValues(r.rowSchema, r.keyCount)
    val toRow = CatalystTypeConverters.createToScalaConverter(r.resultSchema)
    val values = (r.keyCount until width).toArray
    pairs.indices.iterator.flatMap { p =>
      val (a, b) = pairs(p)
      val before = if (a != null) live(a) else base(baseOf(p))
      val after = if (b != null) live(b) else base(baseOf(p))
      val change =
        if (before == null && after == null) null
        else if (before == null) "insert"
        else if (after == null) "delete"
        else if (!same(before, after)) "update"
        else null
      Option(change).map { c =>
        val row = if (after != null) after else before
        val out = new Array[Any](1 + r.userKeyOrdinals.size + 2 * values.length)
        out(0) = UTF8String.fromString(c)
        var k = 1
        r.userKeyOrdinals.foreach { o => out(k) = row.get(o, types(o)); k += 1 }
        values.foreach { o =>
          out(k) = if (before == null) null else before.get(o, types(o))
          out(k + 1) = if (after == null) null else after.get(o, types(o))
          k += 2
        }
        toRow(new GenericInternalRow(out)).asInstanceOf[Row]
      }
    }
  }

  /** Null-safe equality of the value columns of two rows (Spark's `<=>`: NaN equals NaN, -0.0 equals 0.0). */
  private def sameValues(schema: StructType, keyCount: Int): (InternalRow, InternalRow) => Boolean = {
    val w = schema.length
    val expr: Expression = (keyCount until w).map { o =>
      val dt: DataType = schema(o).dataType
      EqualNullSafe(BoundReference(o, dt, nullable = true), BoundReference(w + o, dt, nullable = true)): Expression
    }.reduceOption(And(_, _)).getOrElse(Literal(true))
    val joined = new JoinedRow()
    (a, b) => expr.eval(joined(a, b)).asInstanceOf[Boolean]
  }

  /** The prefix's rows of the `wanted` keys (sorted; rows whose leading columns are the key), null where absent. */
  private def lookup(r: FragmentDiffReaders, t: FragmentTask, wanted: Array[InternalRow], keys: KeyComparator,
                     conflated: (Seq[ObjectFile], ObjectFiles.Reader) => Array[InternalRow],
                     live: InternalRow => InternalRow, conf: org.apache.hadoop.conf.Configuration): Array[InternalRow] = {
    val out = new Array[InternalRow](wanted.length)
    val decided = new Array[Boolean](wanted.length)
    if (wanted.isEmpty) return out
    val pd = conflated(t.prefixDiffs, r.diffLookup.getOrElse(r.diffRows))
    var i = 0; var j = 0
    while (i < wanted.length && j < pd.length) {
      val c = keys.compare(wanted(i), pd(j))
      if (c == 0) { out(i) = live(pd(j)); decided(i) = true; i += 1; j += 1 }
      else if (c < 0) i += 1 else j += 1
    }
    val rest = wanted.indices.filterNot(decided).toArray
    t.prefixSnap.filter(_ => rest.nonEmpty).foreach { snap =>
      val copy = ObjectFiles.identity(r.rowSchema)
      val it = ObjectFiles.open(r.snapLookup.get, snap, conf)
      try {
        var next = 0 // index into rest of the first key not passed yet
        def found(row: InternalRow): Unit = { out(rest(next)) = copy(row).copy(); next += 1 }
        if (r.snapBatches) {
          val batches = it.asInstanceOf[Iterator[Any]].map(_.asInstanceOf[ColumnarBatch])
          while (next < rest.length && batches.hasNext) {
            val b = batches.next()
            val n = b.numRows()
            snapRowsRead.addAndGet(n)
            var lo = 0
            // keys before this batch's first row are not in the SNAP (pages skipped hold none of them)
            while (next < rest.length && n > 0 && keys.compare(wanted(rest(next)), b.getRow(n - 1)) <= 0) {
              var hi = n - 1
              val k = wanted(rest(next))
              while (lo < hi) { val mid = (lo + hi) >>> 1; if (keys.compare(b.getRow(mid), k) < 0) lo = mid + 1 else hi = mid }
              if (keys.compare(b.getRow(lo), k) == 0) found(b.getRow(lo)) else next += 1
            }
          }
        } else {
          while (next < rest.length && it.hasNext) {
            val row = it.next()
            snapRowsRead.incrementAndGet()
            var c = keys.compare(wanted(rest(next)), row)
            while (c < 0 && next < rest.length - 1) { next += 1; c = keys.compare(wanted(rest(next)), row) }
            if (c == 0) found(row) else if (c < 0) next += 1
          }
        }
      } finally ObjectFiles.close(Seq(it))
    }
    out
  }
}
