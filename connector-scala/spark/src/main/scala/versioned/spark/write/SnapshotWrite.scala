package versioned.spark.write

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.distributions.{Distribution, Distributions}
import org.apache.spark.sql.connector.expressions.{Expressions, NamedReference, NullOrdering, SortDirection, SortOrder}
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType
import versioned.core.{DataValidationException, Fragment, ObjectKind, ObjectMeta, TableVersion}
import versioned.spark.{TableLayout, VersionedTable, Warehouses}

/** What one write task of a [[SnapshotWrite]] wrote (its fragments in key order) and the key problem it found, if any. */
private[versioned] final case class SnapshotPart(partition: Int, objects: Seq[WrittenObject], rows: Long,
                                                 nullKey: Boolean, duplicate: Option[(Seq[Any], Long)])
  extends WriterCommitMessage

/**
 * DSv2 write of data that becomes a new SNAP (a new table, or an overwrite that changes the schema or
 * key, with an explicit primary key): Spark range-partitions the rows by key and sorts each partition
 * ([[RequiresDistributionAndOrdering]]), so the write tasks write the final SNAP fragments directly, one
 * pass: content hash, statistics and checksums in [[ObjectWriter]], fragments cut at
 * `spark.versioned.fragment.targetRows` rows, and the key rule of [[Validation]] checked on the sorted
 * rows. Nothing is staged and nothing is read back. On commit the driver hands the written fragments to
 * [[CommitPlanner]] (the one commit path), which raises a key problem the tasks found, or, when the branch
 * moved so that the write no longer makes a SNAP, plans it from the written objects as staged rows.
 *
 * Fragments follow the range partitions: each task cuts its sorted rows every `targetRows` rows, so a
 * fragment holds at most `targetRows` rows and each task ends with at most one smaller fragment. With
 * adaptive execution the shuffle's partitions are coalesced to about the bytes of `targetRows` rows.
 */
private[versioned] final class SnapshotWrite(table: VersionedTable, req: WriteRequest, layout: TableLayout)
  extends Write with RequiresDistributionAndOrdering with BatchWrite {
  private val lease = new WriteLease(table, req.ident.repo, "write")
  private val fragmentRows = Warehouses.fragmentRows(SparkSession.active)
  private val order: Array[SortOrder] = layout.keyColumns.map { k =>
    Expressions.sort(SnapshotWrite.column(k), SortDirection.ASCENDING, NullOrdering.NULLS_FIRST)
  }.toArray
  private val adaptive = {
    val conf = SparkSession.active.conf
    Seq(SQLConf.ADAPTIVE_EXECUTION_ENABLED.key, SQLConf.COALESCE_PARTITIONS_ENABLED.key)
      .forall(k => conf.get(k, "true").trim.equalsIgnoreCase("true"))
  }

  override def description(): String = s"versioned SNAP write of ${req.ident}"
  override def requiredDistribution(): Distribution = Distributions.ordered(order)
  override def requiredOrdering(): Array[SortOrder] = order
  // coalesced adjacent range partitions keep the key order; split partitions would overlap
  override def distributionStrictlyRequired(): Boolean = true
  override def requiredNumPartitions(): Int =
    if (adaptive) 0 else math.max(1, SparkSession.active.sparkContext.defaultParallelism)
  override def advisoryPartitionSizeInBytes(): Long =
    if (!adaptive) 0L else math.max(1L << 20, fragmentRows * SnapshotWrite.shuffleRowBytes(layout.physicalSchema))

  override def toBatch: BatchWrite = this

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory = {
    val spark = SparkSession.active
    val sink = ParquetSink.forObjects(spark, layout.physicalSchema, ObjectKind.Snap)
    new SnapshotWriterFactory(sink, ObjectTarget(table.engine.config, lease.get.id), layout, fragmentRows)
  }

  override def commit(messages: Array[WriterCommitMessage]): Unit = try {
    val parts = messages.collect { case p: SnapshotPart => p }.sortBy(_.partition).toIndexedSeq
    val problem: Option[DataValidationException] =
      if (parts.exists(_.nullKey)) Some(Validation.nullKey(layout.primaryKey, None))
      else parts.flatMap(_.duplicate).headOption.map { case (v, n) => Validation.duplicateKey(layout.primaryKey, n, v, None) }
    val written = parts.flatMap(_.objects.sortBy(_.fragment))
    val snapshot = PrewrittenSnapshot(layout, written, problem, table.engine.config)
    Commits.record(CommitPlanner.commit(table.engine, req, StagedInput.prewritten(snapshot), Some(lease.get)))
  } finally lease.close()

  override def abort(messages: Array[WriterCommitMessage]): Unit = lease.close()
}

private[versioned] object SnapshotWrite {
  /**
   * Whether a write of `schema` to `table` makes a new SNAP, judged on the branch head now: a keyed
   * write (explicit, non-empty `primaryKey`), not part of a transaction, without `deleteColumn`, to a
   * table that does not exist, or an overwrite that changes its columns or key. Anything that cannot be
   * decided here (a bad key, a tag) stays with [[StagedWrite]], which raises the same errors as before.
   * The decision is taken again at commit, on the head the commit builds on.
   */
  def layoutFor(table: VersionedTable, req: WriteRequest, schema: StructType): Option[TableLayout] = try {
    val pk = req.primaryKey.filter(_.nonEmpty)
    if (pk.isEmpty || req.deleteColumn.isDefined || req.expectedHead.isDefined || req.mode == WriteMode.Changes ||
      DeferredWrites.of(req.options).isDefined) return None
    val layout = TableLayout.create(StagedWrite.nullable(schema).asInstanceOf[StructType], pk.get)
    val engine = table.engine
    val branch = req.branch.getOrElse(engine.defaultBranchOrConfig(req.ident.repo))
    val current = engine.writableHead(req.ident.repo, branch)
      .flatMap(h => engine.tableOption(req.ident.repo, h.hash, req.ident.table))
    val snap = current match {
      case None => true
      case Some(c) => req.mode == WriteMode.Overwrite &&
        !(TableLayout.sameColumns(TableLayout.of(c).schema, layout.schema) && c.primaryKey == layout.primaryKey)
    }
    if (snap) Some(layout) else None
  } catch { case scala.util.control.NonFatal(_) => None }

  /** A column by its exact name (quoted, so a dot in it is not a path). */
  def column(name: String): NamedReference = Expressions.column("`" + name.replace("`", "``") + "`")

  /** About the bytes a row takes in the shuffle (compressed UnsafeRows), for the advisory partition size. */
  def shuffleRowBytes(schema: StructType): Long = math.max(8L, schema.defaultSize.toLong * 3 / 4)
}

/** The SNAP fragments a [[SnapshotWrite]]'s tasks wrote, in key order, and the key problem they found. */
private[versioned] final case class PrewrittenSnapshot(layout: TableLayout, written: Seq[WrittenObject],
                                                       problem: Option[DataValidationException],
                                                       config: versioned.core.WarehouseConfig) {
  def version(table: String): (TableVersion, Seq[ObjectMeta]) = {
    val fragments = written.zipWithIndex.map { case (w, i) => Fragment(if (i == 0) None else Some(w.firstKey), Seq(w.meta.id)) }
    (TableVersion(table, layout.schemaJson, layout.primaryKey, layout.hidden, fragments), written.map(_.meta))
  }
  /** The object files holding the rows (for a commit that must plan them as staged rows after all). */
  def paths: Seq[String] = written.map(w => config.objectUri(w.meta.id))
}

private[versioned] final class SnapshotWriterFactory(sink: ParquetSink, target: ObjectTarget, layout: TableLayout,
                                                     fragmentRows: Long) extends DataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
    new SnapshotWriter(sink, target, layout, fragmentRows, partitionId)
}

/** Writes one range partition's sorted rows as SNAP objects of at most `fragmentRows` rows each. */
private[versioned] final class SnapshotWriter(sink: ParquetSink, target: ObjectTarget, layout: TableLayout,
                                              fragmentRows: Long, partition: Int) extends DataWriter[InternalRow] {
  private val keyOrdinals = layout.keyColumns.map(layout.physicalSchema.fieldIndex)
  private val check = new Validation.SortedKeys(keyOrdinals, layout.keyTypes)
  private val runs = new ObjectRuns(sink, target, ObjectKind.Snap, layout.keyColumns)
  private var valid = true
  private var fragment = 0
  private var inFragment = 0L
  private var rows = 0L

  override def write(row: InternalRow): Unit = {
    rows += 1
    if (!check.add(row)) {
      // the write fails at commit with Validation's error: stop writing objects
      if (valid) { runs.abort(); valid = false }
    } else if (valid) {
      if (inFragment == fragmentRows) { fragment += 1; inFragment = 0 }
      runs.write(fragment, row)
      inFragment += 1
    }
  }

  override def commit(): WriterCommitMessage = {
    val (nullKey, duplicate) = check.problem
    val objects = if (valid) runs.close() else Seq.empty
    SnapshotPart(partition, objects, rows, nullKey, duplicate)
  }

  override def abort(): Unit = runs.abort()
  override def close(): Unit = ()
}
