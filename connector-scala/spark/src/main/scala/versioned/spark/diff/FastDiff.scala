package versioned.spark.diff

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.expressions.RowOrdering
import org.apache.spark.sql.execution.datasources.FileFormat
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types._
import versioned.core.{ObjectKind, ObjectMeta, WarehouseConfig}
import versioned.spark.{TableLayout, VersionedOptions}
import versioned.spark.read.{ObjectFile, ObjectFiles}

/**
 * The driver side of the diff that follows the change: one Spark task per few fragments of
 * [[DiffPlan.Fast]] runs [[FragmentDiff]]; before-values are looked up with the changed keys pushed
 * down to Parquet ([[KeyFilter]]).
 */
private[versioned] object FastDiff {
  /** Whether the fast path can compare values of this shape (every value type supports equality). */
  def supports(shape: DiffShape): Boolean = shape.exact && shape.values.forall(f => RowOrdering.isOrderable(f.dataType))

  /**
   * The diff rows of `fast`. When the DIFF rows both sides added are at most `localCommitMaxRows`, they
   * are computed now, on the driver ([[runOnDriver]]: a small diff costs less than a job's scheduling),
   * and the frame holds them; otherwise it is computed by Spark tasks when it is used.
   */
  def frame(spark: SparkSession, config: WarehouseConfig, layout: TableLayout, shape: DiffShape, fast: Seq[DiffPlan.Fast],
            metas: Map[String, ObjectMeta]): DataFrame = {
    val bound = fast.flatMap(f => f.extraFrom ++ f.extraTo).map(id => metas(id).rowCount).sum
    if (bound <= versioned.spark.Settings.of(spark).localCommitMaxRows)
      spark.createDataFrame(scala.jdk.CollectionConverters.SeqHasAsJava(
        runOnDriver(spark, config, layout, shape.resultSchema, fast, fast, metas)(FragmentDiff.rows)).asJava, shape.resultSchema)
    else run(spark, config, layout, shape.resultSchema, fast, fast, metas)(FragmentDiff.rows)
  }

  /**
   * One Spark task per few fragments of `fast` runs `rows` over [[FragmentDiffReaders]] built here; the
   * before-value lookups push down a [[KeyFilter]] of the changed keys of `lookedUp` (those of `fast` whose
   * keys can be looked up); `schema` is the rows' (TableDiff's for a diff).
   */
  def run(spark: SparkSession, config: WarehouseConfig, layout: TableLayout, schema: StructType,
          fast: Seq[DiffPlan.Fast], lookedUp: Seq[DiffPlan.Fast], metas: Map[String, ObjectMeta])(
      rows: (FragmentDiffReaders, FragmentTask) => Iterator[org.apache.spark.sql.Row]): DataFrame = {
    val (readers, tasks) = prepare(spark, config, layout, schema, fast, lookedUp, metas)
    val slices = math.max(1, math.min(tasks.size, 4 * spark.sparkContext.defaultParallelism))
    val rdd = spark.sparkContext.parallelize(tasks, slices).mapPartitions(_.flatMap(rows(readers, _)))
    spark.createDataFrame(rdd, schema)
  }

  /**
   * The same rows as [[run]], computed on the driver (a few fragment tasks at a time, no Spark job): for a
   * diff known to be small, whose job would cost more to schedule than its work.
   */
  def runOnDriver(spark: SparkSession, config: WarehouseConfig, layout: TableLayout, schema: StructType,
                  fast: Seq[DiffPlan.Fast], lookedUp: Seq[DiffPlan.Fast], metas: Map[String, ObjectMeta])(
      rows: (FragmentDiffReaders, FragmentTask) => Iterator[org.apache.spark.sql.Row]): Seq[org.apache.spark.sql.Row] = {
    val (readers, tasks) = prepare(spark, config, layout, schema, fast, lookedUp, metas)
    versioned.spark.Jobs.onDriver(tasks)(t => rows(readers, t).toVector).flatten
  }

  /** The readers and the per-fragment tasks of a diff. */
  private def prepare(spark: SparkSession, config: WarehouseConfig, layout: TableLayout, schema: StructType,
                      fast: Seq[DiffPlan.Fast], lookedUp: Seq[DiffPlan.Fast],
                      metas: Map[String, ObjectMeta]): (FragmentDiffReaders, Seq[FragmentTask]) = {
    val nonKey = layout.nonKeyColumns
    val rowSchema = layout.keyFirst(nonKey)
    val conf = ObjectFiles.verifying(spark.sparkContext.hadoopConfiguration)
    val format = new ParquetFileFormat()
    def file(id: String) = ObjectFile.of(config, metas(id))
    // each reader gets its own configuration: building one sets the requested schema in the one it is given
    def reader(data: StructType, read: StructType, fs: Seq[Filter], batch: Boolean): ObjectFiles.Reader =
      format.buildReaderWithPartitionValues(spark, data, new StructType(), read, fs,
        Map(FileFormat.OPTION_RETURNING_BATCH -> batch.toString), ObjectFiles.verifying(spark.sparkContext.hadoopConfiguration))
    val tasks = fast.map { f =>
      val (snap, diffs) = f.prefix.partition(id => metas(id).kind == ObjectKind.Snap)
      FragmentTask(snap.headOption.map(file), diffs.map(file), f.extraFrom.map(file), f.extraTo.map(file))
    }
    val lookups = tasks.filter(t => t.prefixSnap.isDefined || t.prefixDiffs.nonEmpty)
    val filter = if (lookups.isEmpty) None else KeyFilter(layout, lookedUp.filter(_.prefix.nonEmpty), metas, file,
      reader(layout.diffSchema, StructType(Seq(layout.keyFields.head)), Nil, batch = false), conf)
    val diffRead = layout.diffRead(nonKey)
    val snapBatches = format.supportBatch(spark, rowSchema)
    val readers = FragmentDiffReaders(
      rowSchema, layout.keyColumns.size,
      layout.keyColumns.indices.filterNot(i => layout.keyColumns(i) == VersionedOptions.DupColumn),
      reader(layout.diffSchema, diffRead, Nil, batch = false),
      Option.when(lookups.exists(_.prefixDiffs.nonEmpty))(reader(layout.diffSchema, diffRead, filter.toSeq, batch = false)),
      Option.when(lookups.exists(_.prefixSnap.isDefined))(reader(layout.physicalSchema, rowSchema, filter.toSeq, snapBatches)),
      snapBatches, schema,
      ObjectFiles.verifyingBroadcast(spark.sparkContext))
    (readers, tasks)
  }
}
