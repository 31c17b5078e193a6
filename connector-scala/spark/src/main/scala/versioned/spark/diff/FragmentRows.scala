package versioned.spark.diff

import versioned.spark.format.SparkKeys

import scala.collection.mutable.ArrayBuffer
import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.expressions.{And, BoundReference, EqualNullSafe, Expression, GenericInternalRow,
  JoinedRow, Literal, UnsafeProjection}
import org.apache.spark.sql.types.{DataType, StructType}
import org.apache.spark.sql.vectorized.ColumnarBatch
import org.apache.spark.unsafe.types.UTF8String
import versioned.core.ChangeKind
import versioned.spark.read.{Conflation, ObjectFile, ObjectFiles}

/**
 * What the executor side of a fast diff does with the rows of one fragment, shared by the diff and the
 * merge inputs: read and conflate DIFFs, pair two sides' keys in order, look up the prefix's rows for some
 * keys, classify a change and build a result row.
 */
private[diff] final class FragmentRows(r: FragmentDiffReaders) {
  private val conf = r.hadoopConf.value.value
  private val width = r.rowSchema.length
  private val types = r.rowSchema.fields.map(_.dataType)
  private val keys = SparkKeys.order(types.take(r.keyCount).toSeq)
  private val copyDiff = FragmentRows.identity(r.rowSchema.add("change", org.apache.spark.sql.types.ByteType, nullable = false))
  private val copyWhole = FragmentRows.identity(r.diffSchema)
  // copies of rows a reader reuses (each use copies its output at once, so one projection per thread serves all)
  private val trim = FragmentRows.identity(r.rowSchema)
  private val same = FragmentRows.sameValues(r.rowSchema, r.keyCount)
  private val values = (r.keyCount until width).toArray
  private lazy val toRow = CatalystTypeConverters.createToScalaConverter(r.outputSchema)

  /** The DIFF rows of `files` (oldest first), conflated: one row per key, in key order. */
  def conflated(files: Seq[ObjectFile], read: ObjectFiles.Reader): Array[InternalRow] =
    if (files.isEmpty) Array.empty
    else Conflation(files.map(ObjectFiles.load(read, _, copyDiff, conf)).toArray, types.take(r.keyCount).toSeq)

  /**
   * One side's extra DIFFs (oldest first): their rows conflated, and, when they `recorded` before-images
   * ([[PriorImages]]), each key's row in the prefix (Some(null): absent there) from the oldest DIFF that has it;
   * None for a key without one.
   */
  def side(files: Seq[ObjectFile], recorded: Boolean): (Array[InternalRow], InternalRow => Option[InternalRow]) =
    if (files.isEmpty) (Array.empty, _ => None)
    else {
      val loaded = files.map(f => r.shared.fold(ObjectFiles.load(r.diffRows, f, copyWhole, conf))(
        _.load(r.diffRows, f, copyWhole, conf))).toArray
      val rows = Conflation(loaded, types.take(r.keyCount).toSeq)
      if (!recorded) (rows, _ => None)
      else {
        val first = new java.util.TreeMap[InternalRow, InternalRow]((a: InternalRow, b: InternalRow) => keys.compare(a, b))
        loaded.reverseIterator.foreach(_.foreach(d => first.put(d, prior(d))))
        (rows, k => if (first.containsKey(k)) Some(first.get(k)) else None)
      }
    }

  /** The before-image of DIFF row `d` as a row (key, then values), null when the key was absent. */
  private def prior(d: InternalRow): InternalRow =
    if (d.isNullAt(r.priorOrdinal)) null
    else {
      val values = d.getStruct(r.priorOrdinal, width - r.keyCount)
      val out = new Array[Any](width)
      var i = 0
      while (i < width) { out(i) = if (i < r.keyCount) d.get(i, types(i)) else values.get(i - r.keyCount, types(i)); i += 1 }
      new GenericInternalRow(out)
    }

  /**
   * The prefix's rows of sorted keys (rows leading with the key), null where absent: as recorded where a
   * before-image gives it, the others looked up ([[lookup]]).
   */
  def prefixRows(t: FragmentTask, keysAndRecorded: Seq[(InternalRow, Option[InternalRow])]): Array[InternalRow] = {
    val out = new Array[InternalRow](keysAndRecorded.size)
    keysAndRecorded.indices.foreach(i => keysAndRecorded(i)._2.foreach(out(i) = _))
    val missing = keysAndRecorded.indices.filter(i => keysAndRecorded(i)._2.isEmpty)
    if (missing.nonEmpty) lookup(t, missing.map(i => keysAndRecorded(i)._1).toArray).zip(missing).foreach { case (v, i) => out(i) = v }
    out
  }

  /** A DIFF row as the row it leaves (null: the key is deleted). */
  def live(d: InternalRow): InternalRow = if (d.getByte(width) == ChangeKind.Delete) null else trim(d).copy()

  /** The keys of two key-ordered row arrays in order, each with its row on each side (null: absent there). */
  def pair(a: Array[InternalRow], b: Array[InternalRow]): ArrayBuffer[(InternalRow, InternalRow)] = {
    val pairs = ArrayBuffer.empty[(InternalRow, InternalRow)]
    var i = 0; var j = 0
    while (i < a.length || j < b.length) {
      val c = if (i >= a.length) 1 else if (j >= b.length) -1 else keys.compare(a(i), b(j))
      if (c < 0) { pairs += ((a(i), null)); i += 1 }
      else if (c > 0) { pairs += ((null, b(j))); j += 1 }
      else { pairs += ((a(i), b(j))); i += 1; j += 1 }
    }
    pairs
  }

  /**
   * The change from row `before` to row `after` (null: absent): insert, delete, update, or none when
   * both are absent or their values are the same (Spark's `<=>`).
   */
  def change(before: InternalRow, after: InternalRow): Option[String] =
    if (before == null && after == null) None
    else if (before == null) Some("insert")
    else if (after == null) Some("delete")
    else if (!same(before, after)) Some("update")
    else None

  /**
   * A diff row ([[TableDiff]]'s layout): the change, the key (of `after`, else `before`, else `keyRow`: a
   * row that leads with the key), then before/after of every value.
   */
  def row(change: String, before: InternalRow, after: InternalRow, keyRow: InternalRow = null): Row = {
    val out = new Array[Any](1 + r.userKeyOrdinals.size + 2 * values.length)
    out(0) = UTF8String.fromString(change)
    var k = key(out, 1, if (after != null) after else if (before != null) before else keyRow)
    values.foreach { o => out(k) = value(before, o); out(k + 1) = value(after, o); k += 2 }
    toRow(new GenericInternalRow(out)).asInstanceOf[Row]
  }

  /**
   * A row of a merge's joined sides (`ThreeWay.joinedSchema`): the key (of `keyRow`), base and theirs of
   * every value, theirs' change, ours of every value, ours' change (null: ours did not change the key).
   */
  def joinedRow(keyRow: InternalRow, base: InternalRow, theirs: InternalRow, theirsChange: String, ours: InternalRow,
                oursChange: String): Row = {
    val out = new Array[Any](r.userKeyOrdinals.size + 3 * values.length + 2)
    var k = key(out, 0, keyRow)
    values.foreach { o => out(k) = value(base, o); out(k + 1) = value(theirs, o); k += 2 }
    out(k) = UTF8String.fromString(theirsChange); k += 1
    values.foreach { o => out(k) = value(ours, o); k += 1 }
    out(k) = if (oursChange == null) null else UTF8String.fromString(oursChange)
    toRow(new GenericInternalRow(out)).asInstanceOf[Row]
  }

  /** Copies the user key columns of `row` into `out` from `at`; returns the next position. */
  private def key(out: Array[Any], at: Int, row: InternalRow): Int = {
    var k = at
    r.userKeyOrdinals.foreach { o => out(k) = row.get(o, types(o)); k += 1 }
    k
  }

  private def value(row: InternalRow, o: Int): Any = if (row == null) null else row.get(o, types(o))

  /** The prefix's rows of the `wanted` keys (sorted; rows whose leading columns are the key), null where absent. */
  def lookup(t: FragmentTask, wanted: Array[InternalRow]): Array[InternalRow] = {
    val out = new Array[InternalRow](wanted.length)
    val decided = new Array[Boolean](wanted.length)
    if (wanted.isEmpty || (t.prefixSnap.isEmpty && t.prefixDiffs.isEmpty)) return out
    val pd = conflated(t.prefixDiffs, r.diffLookup.getOrElse(r.diffRows))
    var i = 0; var j = 0
    while (i < wanted.length && j < pd.length) {
      val c = keys.compare(wanted(i), pd(j))
      if (c == 0) { out(i) = live(pd(j)); decided(i) = true; i += 1; j += 1 }
      else if (c < 0) i += 1 else j += 1
    }
    val rest = wanted.indices.filterNot(decided).toArray
    t.prefixSnap.filter(_ => rest.nonEmpty).foreach { snap =>
      val copy = trim
      val it = ObjectFiles.open(r.snapLookup.get, snap, conf)
      try {
        var next = 0 // index into rest of the first key not passed yet
        def found(row: InternalRow): Unit = { out(rest(next)) = copy(row).copy(); next += 1 }
        if (r.snapBatches) {
          val batches = it.asInstanceOf[Iterator[Any]].map(_.asInstanceOf[ColumnarBatch])
          while (next < rest.length && batches.hasNext) {
            val b = batches.next()
            val n = b.numRows()
            FragmentDiff.snapRowsRead.addAndGet(n)
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
            FragmentDiff.snapRowsRead.incrementAndGet()
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

private[diff] object FragmentRows {
  /**
   * The identity projection of `schema` ([[ObjectFiles.identity]]) of this thread: generating one costs about a
   * millisecond, and a diff needs several for each fragment. Its output is reused, so users copy it at once.
   */
  def identity(schema: StructType): UnsafeProjection = {
    val cache = projections.get()
    if (cache.size > 32) cache.clear()
    cache.computeIfAbsent(schema, s => ObjectFiles.identity(s))
  }
  private val projections = ThreadLocal.withInitial[java.util.HashMap[StructType, UnsafeProjection]](() => new java.util.HashMap())

  /** Null-safe equality of the value columns of two rows (Spark's `<=>`: NaN equals NaN, -0.0 equals 0.0). */
  def sameValues(schema: StructType, keyCount: Int): (InternalRow, InternalRow) => Boolean = {
    val w = schema.length
    val expr: Expression = (keyCount until w).map { o =>
      val dt: DataType = schema(o).dataType
      EqualNullSafe(BoundReference(o, dt, nullable = true), BoundReference(w + o, dt, nullable = true)): Expression
    }.reduceOption(And(_, _)).getOrElse(Literal(true))
    val joined = new JoinedRow()
    (a, b) => expr.eval(joined(a, b)).asInstanceOf[Boolean]
  }
}
