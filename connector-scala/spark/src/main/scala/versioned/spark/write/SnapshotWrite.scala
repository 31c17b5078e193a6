package versioned.spark.write

import versioned.core.format.WriteMode

import versioned.spark.format.SparkKeys
import versioned.core.format.KeyOrder

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.distributions.{Distribution, Distributions}
import org.apache.spark.sql.connector.expressions.{Expressions, NamedReference, NullOrdering, SortDirection, SortOrder}
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.types.StructType
import versioned.core.{Fragment, ObjectKind, ObjectMeta, TableVersion}
import versioned.spark.session.TableHandle
import versioned.spark.session.Warehouses
import versioned.spark.format.{TableLayout, Values}

/**
 * What one write task of a [[SnapshotWrite]] wrote: its objects in key order, its row count and the
 * canonical key of its last row, present when its keys were non-null and strictly ascending.
 */
private[versioned] final case class SnapshotPart(partition: Int, objects: Seq[WrittenObject], rows: Long,
                                                 lastKey: Option[Seq[Any]]) extends WriterCommitMessage

/**
 * DSv2 write of data that becomes a new SNAP (a new table, or an overwrite that changes the schema or
 * key, with an explicit primary key). Spark sorts each write task's rows by key
 * ([[RequiresDistributionAndOrdering]]: an ordering, no distribution, so no shuffle), and each task
 * writes its sorted rows as SNAP objects in one pass: content hash, statistics and checksums in
 * [[ObjectWriter]], a new object every `spark.versioned.fragment.targetRows` rows, the key rule of
 * [[Validation]] checked on the sorted rows ([[Validation.SortedKeys]]). The objects are `held` in the
 * write lease's staging area: only a commit that references them moves them into the store, so a write
 * that fails or falls back leaves nothing there.
 *
 * On commit the driver orders the tasks' runs by their first keys. When every task's keys were valid,
 * the runs do not overlap (data that arrives clustered by key: a range, a sorted file set, another
 * table's scan) and every object but the last holds at least half the target rows (each task's last
 * object is short unless the task's rows are close to a multiple of the target), the objects are the
 * new table's fragments: keys are then unique and non-null, sizes as the staged path cuts them. Otherwise the objects are the write's staged
 * rows and are planned as before ([[Validation.keys]] raises a null or duplicate key with the same
 * error, or the rows are range-partitioned into fragments and written again; the first pass's objects
 * are then read as staged files and removed with the lease). Either way the commit
 * goes through [[CommitPlanner.commit]], the one commit path, which also plans from the objects as
 * staged rows when the branch moved so that the write no longer makes a SNAP.
 */
private[versioned] final class SnapshotWrite(table: TableHandle, req: WriteRequest, layout: TableLayout)
  extends Write with RequiresDistributionAndOrdering with BatchWrite {
  private val lease = new WriteLease(table, req.ident.repo, "write")
  private val fragmentRows = Warehouses.fragmentRows(SparkSession.active)
  // held: the objects stay in the lease's staging area until a commit that references them stores them
  private lazy val target = ObjectTarget(table.engine.config, lease.get.id, held = true)
  private val order: Array[SortOrder] = SnapshotWrite.keyOrder(layout)

  override def description(): String = s"versioned SNAP write of ${req.ident}"
  override def requiredDistribution(): Distribution = Distributions.unspecified()
  override def requiredOrdering(): Array[SortOrder] = order

  override def toBatch: BatchWrite = lease.batch(this)

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory = {
    val spark = SparkSession.active
    val sink = ParquetSink.forObjects(spark, layout.physicalSchema, ObjectKind.Snap)
    new SnapshotWriterFactory(sink, target, layout, fragmentRows)
  }

  override def commit(messages: Array[WriterCommitMessage]): Unit = try {
    val parts = messages.collect { case p: SnapshotPart => p }.sortBy(_.partition).toIndexedSeq
    val runs = if (parts.exists(p => p.rows > 0 && p.lastKey.isEmpty)) None else SnapshotWrite.ordered(layout, parts)
    // fragments as the staged path cuts them: all but the last hold between half the target and the target
    val direct = runs.exists(r => r.dropRight(1).forall(_.meta.rowCount >= (fragmentRows + 1) / 2))
    val written = if (direct) runs.get else parts.flatMap(_.objects)
    val snapshot = PrewrittenSnapshot(layout, written, target, direct)
    Commits.record(CommitPlanner.commit(table.engine, req, StagedInput.prewritten(snapshot), Some(lease.get)), req.writeId)
  } finally lease.close()

  override def abort(messages: Array[WriterCommitMessage]): Unit = lease.close()
}

private[versioned] object SnapshotWrite {
  /**
   * The tasks' objects in key order when the tasks' runs do not overlap (each task's objects are in key
   * order already): tasks ordered by their first keys, each ending below the next one's first key.
   */
  def ordered(layout: TableLayout, parts: Seq[SnapshotPart]): Option[Seq[WrittenObject]] = {
    val types = layout.keyTypes
    val cmp = SparkKeys.order(types)
    def row(values: Seq[Any]): InternalRow = Values.internalRow(values, types)
    val runs = parts.filter(_.objects.nonEmpty).map(p => (row(p.objects.head.firstKey), row(p.lastKey.get), p))
      .sortWith((a, b) => cmp.compare(a._1, b._1) < 0)
    if (disjoint(runs, cmp)(_._1, _._2)) Some(runs.flatMap(_._3.objects.sortBy(_.fragment))) else None
  }

  /**
   * Whether runs of keys in the order of their `first` keys do not overlap: each ends (`last`, inclusive)
   * below the next one's first key.
   */
  def disjoint[R](runs: Seq[R], cmp: KeyOrder[InternalRow])(first: R => InternalRow, last: R => InternalRow): Boolean =
    runs.zip(runs.drop(1)).forall { case (a, b) => cmp.compare(last(a), first(b)) < 0 }

  /** Ascending by the key columns, nulls first: how Spark sorts each write task's rows for a one-pass write. */
  def keyOrder(layout: TableLayout): Array[SortOrder] = layout.keyColumns.map { k =>
    Expressions.sort(column(k), SortDirection.ASCENDING, NullOrdering.NULLS_FIRST)
  }.toArray

  /** A column by its exact name (quoted, so a dot in it is not a path). */
  def column(name: String): NamedReference = Expressions.column("`" + name.replace("`", "``") + "`")
}

/**
 * The SNAP objects a [[SnapshotWrite]]'s tasks wrote. `fragments`: they are the new table's fragments,
 * in key order, with unique non-null keys; otherwise they hold the write's rows, to be planned as staged rows.
 */
private[versioned] final case class PrewrittenSnapshot(layout: TableLayout, written: Seq[WrittenObject],
                                                       target: ObjectTarget, fragments: Boolean) {
  def version(table: String): (TableVersion, Seq[ObjectMeta]) = {
    val fragments = written.zipWithIndex.map { case (w, i) => Fragment(if (i == 0) None else Some(w.firstKey), Seq(w.meta.id)) }
    (TableVersion(table, layout.schemaJson, layout.primaryKey, layout.hidden, fragments), written.map(_.meta))
  }
  /**
   * The files holding the rows, in the lease's staging area (for a commit that must plan them as staged
   * rows after all: they never reach the store, and go with the lease).
   */
  def paths: Seq[String] = written.map(w => target.reusedUri(w.meta.id))
}

private[versioned] final class SnapshotWriterFactory(sink: ParquetSink, target: ObjectTarget, layout: TableLayout,
                                                     fragmentRows: Long) extends DataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
    new SnapshotWriter(sink, target, layout, fragmentRows, partitionId)
}

/** Writes one task's sorted rows as SNAP objects of at most `fragmentRows` rows each. */
private[versioned] final class SnapshotWriter(sink: ParquetSink, target: ObjectTarget, layout: TableLayout,
                                              fragmentRows: Long, partition: Int) extends DataWriter[InternalRow] {
  private val keyOrdinals = layout.keyColumns.map(layout.physicalSchema.fieldIndex)
  private val check = new Validation.SortedKeys(keyOrdinals, layout.keyTypes)
  private val runs = new ObjectRuns(sink, target, ObjectKind.Snap, layout.keyColumns)
  private var fragment = 0
  private var inFragment = 0L
  private var rows = 0L

  override def write(row: InternalRow): Unit = {
    rows += 1
    check.add(row) // rows that break the key rule are written all the same: they are then the staged rows
    if (inFragment == fragmentRows) { fragment += 1; inFragment = 0 }
    runs.write(fragment, row)
    inFragment += 1
  }

  override def commit(): WriterCommitMessage = {
    val objects = runs.close()
    val last = check.lastKey.map(Values.canonical(_, layout.keyTypes))
    SnapshotPart(partition, objects, rows, last)
  }

  override def abort(): Unit = runs.abort()
  override def close(): Unit = ()
}
