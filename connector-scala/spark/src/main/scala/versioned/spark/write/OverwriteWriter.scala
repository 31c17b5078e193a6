package versioned.spark.write

import versioned.spark.format.SparkKeys

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Expression, GenericInternalRow, JoinedRow, UnsafeProjection}
import org.apache.spark.sql.connector.write.{DataWriter, DataWriterFactory, WriterCommitMessage}
import versioned.core.Fragment
import versioned.spark.format.{TableLayout, Values}
import versioned.spark.read.ChainRows

/**
 * What one task of an [[OverwriteWrite]] wrote: its DIFF objects (held, one per touched fragment, in key
 * order) and, when its keys were valid, its first and last keys, whether the current version has rows
 * below its first key in the fragment that key falls in (`before`) and the first current key after its
 * last key (`after`): what the driver needs to find current keys no task saw. Bad keys: `nullKey` (nothing
 * else is reported), or `repeated` keys (the first few) with the rows each had beyond its first: only the
 * first row of a key is compared, so the DIFFs still give back the task's distinct keys.
 */
private[versioned] final case class OverwritePart(partition: Int, objects: Seq[WrittenObject], rows: Long,
                                                  firstKey: Option[Seq[Any]], lastKey: Option[Seq[Any]],
                                                  before: Boolean, after: Option[Seq[Any]], nullKey: Boolean,
                                                  repeated: Seq[(Seq[Any], Long)]) extends WriterCommitMessage

/**
 * The DIFF rows of an overwrite for a current row and a new row (either absent), evaluated row by row: the
 * expressions of [[ChangeSets.overwriteChanges]] (the rule the distributed overwrite applies after its
 * join), taken from the analyzed plan over an empty relation of [[ChangeSets.overwriteJoinedSchema]] and
 * bound to the pair. `change` alone tells whether there is a DIFF row at all (null: unchanged).
 */
private[versioned] final case class OverwriteRules(width: Int, change: Expression, row: Seq[Expression]) {
  /** One evaluator per thread: projections reuse their output rows. */
  def evaluator(): OverwriteRules.Eval = new OverwriteRules.Eval(this)
}

private[versioned] object OverwriteRules {
  def of(spark: SparkSession, layout: TableLayout): OverwriteRules = {
    val bound = LocalRules.projection(spark, ChangeSets.overwriteJoinedSchema(layout), "an overwrite")(
      ChangeSets.overwriteChanges(_, layout))
    OverwriteRules(layout.keyColumns.size + layout.nonKeyColumns.size, bound.last, bound)
  }

  /** Rows are in the key-first layout ([[TableLayout.keyFirst]] of the other columns); null: absent. */
  final class Eval(r: OverwriteRules) {
    private val change = UnsafeProjection.create(Seq(r.change))
    private val full = UnsafeProjection.create(r.row)
    private val nulls = new GenericInternalRow(r.width)
    private val present = new GenericInternalRow(Array[Any](true))
    private val absent = new GenericInternalRow(Array[Any](null))
    private val (oldSide, newSide, pair) = (new JoinedRow(), new JoinedRow(), new JoinedRow())

    /** The DIFF row (in the DIFF object layout, reused) from `before` to `after`, or null when unchanged. */
    def apply(before: InternalRow, after: InternalRow): InternalRow = {
      oldSide(if (before == null) nulls else before, if (before == null) absent else present)
      newSide(if (after == null) nulls else after, if (after == null) absent else present)
      pair(oldSide, newSide)
      if (change(pair).isNullAt(0)) null else full(pair)
    }
  }
}

/** What every task of an [[OverwriteWrite]] needs: where and how to write, and the version it replaces. */
private[versioned] final case class OverwriteTask(sink: ParquetSink, target: ObjectTarget, layout: TableLayout,
                                                  fragments: Seq[Fragment], chain: ChainRows, rules: OverwriteRules)

private[versioned] object OverwriteWriter {
  /** Repeated keys a task counts (the error names one of them). */
  val MaxRepeated = 1000
}

private[versioned] final class OverwriteWriterFactory(t: OverwriteTask) extends DataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] = new OverwriteWriter(t, partitionId)
}

/**
 * One task of a keyed overwrite: its rows arrive sorted by key; in one pass they are checked
 * ([[Validation.SortedKeys]]) and merge-compared with the current version's merged rows from the
 * fragment of the task's first key on ([[ChainRows]]). Changed rows (inserts, updates, deletes of current
 * keys between the task's first and last keys that it does not have) are written as DIFF rows routed to
 * the fragment holding their key ([[Routing.local]]), one held object per fragment.
 */
private[versioned] final class OverwriteWriter(t: OverwriteTask, partition: Int) extends DataWriter[InternalRow] {
  private val layout = t.layout
  private val merged = layout.keyFirst(layout.nonKeyColumns)
  private val keyCount = layout.keyColumns.size
  private val types = layout.keyTypes
  private val toMerged = UnsafeProjection.create(merged.fields.toSeq.map { f =>
    BoundReference(layout.physicalSchema.fieldIndex(f.name), f.dataType, nullable = true) })
  private val check = new Validation.SortedKeys(0 until keyCount, types)
  private val cmp = SparkKeys.order(types)
  private val route = Routing.local(t.fragments, layout)
  private val diff = t.rules.evaluator()
  private val runs = new ObjectRuns(t.sink, t.target, versioned.core.ObjectKind.Diff, layout.keyColumns)
  private var rows = 0L
  private var first: InternalRow = _
  private var before = false
  private var nullKey = false
  // after the first repeated key (the check then fails for good): the previous key, and the rows each repeated key had beyond its first
  private var prev: InternalRow = _
  private val repeated = scala.collection.mutable.LinkedHashMap.empty[InternalRow, Long]
  // the current version's rows from the first key's fragment on: `head` is the next one not passed yet
  private var fragment = 0
  private var source: Iterator[InternalRow] = Iterator.empty
  private var head: InternalRow = _

  private def advance(): Unit = {
    while (!source.hasNext && fragment < t.fragments.size - 1) { fragment += 1; source = t.chain.rows(fragment) }
    head = if (source.hasNext) source.next() else null
  }

  private def emit(before: InternalRow, after: InternalRow): Unit = {
    val row = diff(before, after)
    if (row != null) runs.write(route(if (after != null) after else before), row)
  }

  override def write(row: InternalRow): Unit = {
    rows += 1
    if (nullKey) return
    val n = toMerged(row)
    if (!check.add(n)) {
      if ((0 until keyCount).exists(n.isNullAt)) { nullKey = true; runs.abort(); close(); return }
      // rows arrive sorted: a key that is not above the previous one repeats it (only its first row is compared)
      if (prev == null || cmp.compare(prev, n) == 0) {
        if (prev == null) prev = n.copy()
        if (repeated.size < OverwriteWriter.MaxRepeated || repeated.contains(prev)) repeated(prev) = repeated.getOrElse(prev, 0L) + 1
        return
      }
      prev = n.copy()
    }
    if (first == null) {
      first = n.copy()
      fragment = route(n)
      source = t.chain.rows(fragment)
      advance()
      while (head != null && cmp.compare(head, n) < 0) { before = true; advance() }
    }
    while (head != null && cmp.compare(head, n) < 0) { emit(head, null); advance() }
    if (head != null && cmp.compare(head, n) == 0) { emit(head, n); advance() }
    else emit(null, n)
  }

  private def canonical(k: InternalRow): Seq[Any] = Values.canonical(k, types)

  override def commit(): WriterCommitMessage = {
    if (nullKey) return OverwritePart(partition, Nil, rows, None, None, before = false, None, nullKey = true, Nil)
    val objects = runs.close()
    val after = Option(head).map(canonical)
    close()
    val last = if (prev != null) Some(prev) else check.lastKey
    OverwritePart(partition, objects, rows, Option(first).map(canonical), last.map(canonical), before, after,
      nullKey = false, repeated.toSeq.map { case (k, n) => (canonical(k), n) })
  }

  override def abort(): Unit = { runs.abort(); close() }
  override def close(): Unit = { source match { case c: AutoCloseable => c.close(); case _ => () }; source = Iterator.empty }
}
