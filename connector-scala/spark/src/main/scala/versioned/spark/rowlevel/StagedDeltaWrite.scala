package versioned.spark.rowlevel

import java.util.UUID
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.types.{ByteType, StructField, StructType}
import org.apache.spark.storage.StorageLevel
import versioned.core.{CommitResult, TableUpdate}
import versioned.spark.{TableSnapshot, VersionedTable, Warehouses}
import versioned.spark.write._

/**
 * The write of a DELETE / UPDATE / MERGE. Tasks stage the delta rows Spark sends (delete, update,
 * insert, each with the old row id) as Parquet; on commit the driver turns them into conflated DIFF
 * rows ([[DeltaChanges]]), validates them, writes one DIFF object per touched fragment and records one
 * image whose parent is the image the operation read. Only changed rows are written; an operation that
 * changes nothing records no image. Staging files are removed whatever the outcome.
 */
private[rowlevel] final class StagedDeltaWrite(
    table: VersionedTable,
    snapshot: TableSnapshot,
    cmd: RowLevelOperation.Command,
    info: LogicalWriteInfo) extends DeltaWrite with DeltaBatchWrite {

  private val stagingDir = table.config.stagingUri(s"writes/${UUID.randomUUID()}")
  private val idSchema: StructType = info.rowIdSchema().orElse(new StructType())
  /** Every user column is staged; a DELETE's rows carry none of them (they stay null). */
  private val rowSchema: StructType = snapshot.layout.schema
  private val rowOrdinals: Array[Int] = {
    val passed = Option(info.schema()).getOrElse(new StructType())
    rowSchema.fieldNames.map(n => passed.fieldNames.indexOf(n))
  }

  /** Schema of the staged delta rows: operation, old row id (prefixed `o_`), new row (prefixed `n_`). */
  private val stagedSchema: StructType = StructType(
    StructField(DeltaChanges.OpColumn, ByteType, nullable = false) +:
      (idSchema.fields.map(f => StructField(DeltaChanges.Old + f.name, f.dataType, nullable = true)) ++
        rowSchema.fields.map(f => StructField(DeltaChanges.New + f.name, f.dataType, nullable = true))).toSeq)

  @volatile private var lastResult: Option[CommitResult] = None

  override def description(): String = s"versioned $cmd on ${table.ident}"
  override def toBatch: DeltaBatchWrite = this

  override def createBatchWriterFactory(pinfo: PhysicalWriteInfo): DeltaWriterFactory =
    new StagingDeltaWriterFactory(ParquetSink.prepare(SparkSession.active, stagedSchema), stagingDir, idSchema, rowSchema,
      rowOrdinals)

  override def commit(messages: Array[WriterCommitMessage]): Unit = try {
    val spark = SparkSession.active
    val files = messages.collect { case f: StagedFile if f.rows > 0 => f.path }
    if (files.nonEmpty) {
      val staged = spark.read.schema(stagedSchema).parquet(files.toIndexedSeq: _*)
      val options = table.options ++ scala.jdk.CollectionConverters.MapHasAsScala(info.options().asCaseSensitiveMap()).asScala
      val req = WriteRequests.from(table, options, WriteMode.Changes)
      val current = spark.read.format("versioned").options(req.locationOptions)
        .option(versioned.spark.VersionedOptions.Image, snapshot.image.hash)
        .option(versioned.spark.VersionedOptions.IncludeHidden, "true")
        .load(table.ident.toString)
      val changes = DeltaChanges.compute(staged, current, snapshot.layout, cmd).persist(StorageLevel.MEMORY_AND_DISK)
      try {
        if (!changes.isEmpty) lastResult = Some(record(spark, req, changes))
      } finally changes.unpersist()
    }
  } finally cleanup()

  private def record(spark: SparkSession, req: WriteRequest, changes: org.apache.spark.sql.DataFrame): CommitResult = {
    val engine = table.engine
    val repo = table.ident.repo
    val branch = req.branch.getOrElse(engine.defaultBranch(repo))
    val (version, objects) = CommitPlanner.writeDiffs(engine.config, snapshot.layout, snapshot.version, changes)
    val message = req.options.collectFirst { case (k, v) if k.equalsIgnoreCase(versioned.spark.VersionedOptions.Message) => v }
      .getOrElse(s"${DeltaChanges.verb(cmd)} ${table.ident.table}")
    val result = engine.commit(repo, branch, Some(snapshot.image.hash),
      Map(table.ident.table -> TableUpdate.Put(version, objects)), req.author, message)
    Compactor.maybeCompact(spark, engine, req, result.image, Warehouses.maxChain(spark))
    result
  }

  override def abort(messages: Array[WriterCommitMessage]): Unit = cleanup()

  private def cleanup(): Unit = StagedWrite.delete(table.config, stagingDir)
}
