package versioned.spark.rowlevel

import versioned.core.format.WriteMode

import scala.jdk.CollectionConverters._
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.types.{BooleanType, ByteType, StructField, StructType}
import org.apache.spark.storage.StorageLevel
import versioned.core.{Actor, CommitResult}
import versioned.spark.session.TableHandle
import versioned.spark.session.{TableSnapshot, VersionedOptions, Warehouses}
import versioned.spark.read.{KeyLookup, LocalLookup}
import versioned.spark.write._

/**
 * The write of a DELETE / UPDATE / MERGE. Tasks stage the delta rows Spark sends (delete, update,
 * insert, each with the old row id) as Parquet, or keep them in memory when the operation may be small
 * enough to commit from the driver ([[commitLocally]]); on commit the driver turns them into conflated DIFF
 * rows ([[DeltaChanges]]), validates them, and hands them to [[CommitPlanner]] in `Changes` mode: one
 * DIFF object per touched fragment, one image whose parent must be the image the operation read.
 * Only changed rows are written; an operation that changes nothing records no image. Staging files
 * are removed whatever the outcome.
 */
private[rowlevel] final class StagedDeltaWrite(
    table: TableHandle,
    snapshot: TableSnapshot,
    cmd: RowLevelOperation.Command,
    info: LogicalWriteInfo) extends DeltaWrite with DeltaBatchWrite {

  /** Built (and the options and settings validated) before any row is staged. */
  private val req = WriteRequest.from(table, table.options ++ info.options().asCaseSensitiveMap().asScala, WriteMode.Changes)
  private val lease = new WriteLease(table, table.ident.repo, "row-level write")
  private def stagingDir = lease.stagingDir
  private val idSchema: StructType = info.rowIdSchema().orElse(new StructType())
  /** Every user column is staged; a DELETE's rows carry none of them (they stay null). */
  private val rowSchema: StructType = snapshot.layout.schema
  private val rowOrdinals: Array[Int] = {
    val passed = Option(info.schema()).getOrElse(new StructType())
    rowSchema.fieldNames.map(n => passed.fieldNames.indexOf(n))
  }

  /** Where Spark passes `_vbefore` (UPDATE and MERGE of keyed tables) in the metadata of updates and deletes, and its type. */
  private val before: Option[(Int, StructType)] = for {
    meta <- Option(info.metadataSchema()).flatMap(o => if (o.isPresent) Some(o.get) else None)
    i = meta.fieldNames.indexOf(VersionedOptions.BeforeColumn) if i >= 0
    t <- Some(meta(i).dataType).collect { case st: StructType => st }
  } yield (i, t)

  /**
   * Schema of the staged delta rows: operation, old row id (prefixed `o_`), new row (prefixed `n_`), and with
   * [[before]] whether the old values are known and the old non-key values (prefixed `b_`).
   */
  private val stagedSchema: StructType = StructType(
    StructField(DeltaChanges.OpColumn, ByteType, nullable = false) +:
      (idSchema.fields.map(f => StructField(DeltaChanges.Old + f.name, f.dataType, nullable = true)) ++
        rowSchema.fields.map(f => StructField(DeltaChanges.New + f.name, f.dataType, nullable = true)) ++
        before.toSeq.flatMap { case (_, t) => StructField(DeltaChanges.KnownColumn, BooleanType, nullable = false) +:
          t.fields.map(f => StructField(DeltaChanges.Before + f.name, f.dataType, nullable = true)).toSeq }).toSeq)

  override def description(): String = s"versioned $cmd on ${table.ident}"
  override def toBatch: DeltaBatchWrite = lease.batch(this)

  private lazy val sink = ParquetSink.prepare(SparkSession.active, stagedSchema)
  /** Whether few staged rows are committed from the driver ([[commitLocally]]): UPDATE and MERGE of keyed tables. */
  private val localKind = cmd != RowLevelOperation.Command.DELETE && !snapshot.layout.hidden &&
    versioned.spark.read.KeyLookup.keyField(snapshot.layout).isDefined

  override def createBatchWriterFactory(pinfo: PhysicalWriteInfo): DeltaWriterFactory = {
    val spark = SparkSession.active
    // tasks of an operation that may be committed from the driver keep their share of its rows in memory
    val tasks = math.max(1, pinfo.numPartitions())
    val maxRows = if (localKind) (Warehouses.localCommitMaxRows(spark) + tasks - 1) / tasks else 0L
    new StagingDeltaWriterFactory(sink, stagingDir, idSchema, rowSchema, rowOrdinals, before, maxRows,
      Warehouses.localCommitMaxBytes(spark) / tasks)
  }

  // SQL DML: the commit is the `sql` client's (docs/AUDIT.md), unless the session came through Connect or the CLI
  override def commit(messages: Array[WriterCommitMessage]): Unit = versioned.spark.session.Identity.as(Actor.Sql)(commitAll(messages))

  private def commitAll(messages: Array[WriterCommitMessage]): Unit = try {
    val spark = SparkSession.active
    val kept = messages.collect { case r: StagedRows => r }.toIndexedSeq
    val stagedRows = messages.collect { case f: StagedFile => f.rows; case r: StagedRows => r.rows.toLong }.sum
    val local = localKind && stagedRows <= Warehouses.localCommitMaxRows(spark)
    val files = messages.collect { case f: StagedFile if f.rows > 0 => f.path }.toIndexedSeq
    val layout = snapshot.layout
    if (stagedRows > 0 && local) commitLocally(spark, kept, files)
    else if (stagedRows > 0) {
      // rows kept in memory go to a staging file for the distributed path
      val all = files ++ StagedRows.stage(kept, sink, s"$stagingDir/driver-${java.util.UUID.randomUUID()}.parquet")
      val staged = spark.read.schema(stagedSchema).parquet(all: _*).persist(StorageLevel.MEMORY_AND_DISK)
      // The operation's rows name their keys: only what may hold them is read (a key lookup).
      val keys = if (cmd == RowLevelOperation.Command.DELETE || stagedRows > StagedDeltaWrite.LookupRows) None
        else DeltaChanges.stagedKeys(staged, layout)
      val table0 = versioned.spark.read.PinnedRead.table(spark, req.locationOptions, table.ident, snapshot.image.hash,
        keys = keys)
      lazy val current = DeltaChanges.touchedRows(staged, table0, layout,
        stagedRows <= StagedDeltaWrite.BroadcastRows).persist(StorageLevel.MEMORY_AND_DISK)
      // Few partitions for the (usually small) change set: actions over a cached plan keep its partitioning.
      val parts = math.max(1L, math.min(spark.sparkContext.defaultParallelism.toLong,
        stagedRows / StagedDeltaWrite.RowsPerPartition + 1)).toInt
      val changes = DeltaChanges.compute(staged, current, layout, cmd).coalesce(parts)
        .persist(StorageLevel.MEMORY_AND_DISK)
      try {
        if (!changes.isEmpty) record(req, StagedInput(changes))
      } finally { changes.unpersist(); if (cmd != RowLevelOperation.Command.DELETE) current.unpersist(); staged.unpersist() }
    }
  } finally lease.close()

  /**
   * Few staged rows of a keyed table (at most `localCommitMaxRows`): they and the table rows of the keys whose
   * old values they do not carry (a key lookup, then the exact keys; none when every changed key was read by
   * the operation, see [[DeltaChanges.unknownKeys]]) are collected, and [[DeltaChanges.computeLocal]] computes the
   * changes from those local rows on the driver (the same rules and errors, no Spark job; key types it cannot
   * pair by value go through [[DeltaChanges.compute]] over the table rows of every staged key), committed as local
   * rows (written by the driver, [[LocalCommit]]).
   */
  private def commitLocally(spark: SparkSession, kept: Seq[StagedRows], files: Seq[String]): Unit = {
    val layout = snapshot.layout
    val toRow = org.apache.spark.sql.catalyst.CatalystTypeConverters.createToScalaConverter(stagedSchema)
    val stagedRows = kept.flatMap(_.unsafeRows(stagedSchema.length)).map(toRow(_).asInstanceOf[Row]) ++
      (if (files.isEmpty) Seq.empty else spark.read.schema(stagedSchema).parquet(files: _*).collect().toSeq)
    val first = layout.keyFields.head
    val localRules = DeltaChanges.local(layout)
    val firstKeys = (if (localRules) DeltaChanges.unknownKeys(stagedRows, layout) else stagedRows.flatMap { r =>
      Seq(r.getAs[Any](DeltaChanges.Old + first.name), r.getAs[Any](DeltaChanges.New + first.name))
    }).filter(_ != null).distinct
    val canonical = firstKeys.map(versioned.spark.format.Values.fromFilter(_, first.dataType))
    val lookup = Option.when(canonical.forall(_.isDefined))(canonical.flatten)
    // planned only when some key must be read (a MERGE or UPDATE of existing rows in place reads none)
    lazy val rows = versioned.spark.read.PinnedRead.table(spark, req.locationOptions, table.ident, snapshot.image.hash, keys = lookup)
    val currentRows = if (firstKeys.isEmpty) Seq.empty[Row] else lookup.filter(_.size <= LocalLookup.MaxKeys && localRules) match {
      // few keys: read on the driver (LocalLookup), then the exact keys
      case Some(keys) => LocalLookup.exactRows(snapshot.lookingUp(keys), layout.physicalSchema, KeyLookup.of(first, keys))
      case None =>
        // integral keys: the readers keep only the looked-up keys' rows; others are filtered by Spark before the collect
        (if (lookup.isDefined && versioned.spark.read.LookupReaders.supports(first.dataType)) rows
         else rows.filter(org.apache.spark.sql.functions.col("`" + first.name.replace("`", "``") + "`").isInCollection(firstKeys)))
          .collect().toSeq
    }
    val changes =
      if (localRules) DeltaChanges.computeLocal(spark, stagedRows, stagedSchema, currentRows, layout, cmd)
      else {
        val df = DeltaChanges.compute(spark.createDataFrame(stagedRows.asJava, stagedSchema),
          spark.createDataFrame(currentRows.asJava, rows.schema), layout, cmd)
        // a frame of local rows: collected by the planner, without a job
        StagedInput(df, Some(LocalCommit.collect(df)))
      }
    if (changes.localRows.exists(_.nonEmpty)) record(req, changes)
  }

  /** One DIFF commit through the shared commit path, moving the branch only from the image that was read. */
  private def record(req: WriteRequest, changes: StagedInput): CommitResult = {
    val message = req.options.collectFirst { case (k, v) if k.equalsIgnoreCase(VersionedOptions.Message) => v }
      .getOrElse(s"${DeltaChanges.verb(cmd)} ${table.ident.table}")
    CommitPlanner.commit(table.engine, req.copy(message = message, expectedHead = Some(snapshot.image.hash)),
      changes, Some(lease.get))
  }

  override def abort(messages: Array[WriterCommitMessage]): Unit = lease.close()
}

private[rowlevel] object StagedDeltaWrite {
  /** Up to this many staged rows, the table is read by a key lookup of their keys. */
  val LookupRows = 100000L
  /** Up to this many staged rows, their keys are broadcast to pick the table rows they concern. */
  val BroadcastRows = 500000L
  /** Staged rows per partition of the change set. */
  val RowsPerPartition = 200000L
}
