package versioned.spark.diff

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.expressions.RowOrdering
import org.apache.spark.sql.execution.datasources.FileFormat
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types._
import versioned.core.{ObjectKind, ObjectMeta, WarehouseConfig}
import versioned.spark.session.VersionedOptions
import versioned.spark.format.TableLayout
import versioned.spark.read.{FragmentBounds, ObjectFile, ObjectFiles}

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
            metas: Map[String, ObjectMeta]): DataFrame =
    onDriver(spark, config, layout, shape, fast, metas) match {
      case Some(rows) => spark.createDataFrame(scala.jdk.CollectionConverters.SeqHasAsJava(rows).asJava, shape.resultSchema)
      case None => run(spark, config, layout, shape.resultSchema, fast, fast, metas)(FragmentDiff.rows)
    }

  /** The diff rows of `fast` computed now, on the driver, when the DIFF rows both sides added are at most `localCommitMaxRows`. */
  def onDriver(spark: SparkSession, config: WarehouseConfig, layout: TableLayout, shape: DiffShape, fast: Seq[DiffPlan.Fast],
               metas: Map[String, ObjectMeta], cache: Option[ReaderCache] = None): Option[Seq[org.apache.spark.sql.Row]] = {
    val bound = fast.flatMap(f => f.extraFrom ++ f.extraTo).map(id => metas(id).rowCount).sum
    Option.when(bound <= versioned.spark.session.Settings.of(spark).localCommitMaxRows)(
      runOnDriver(spark, config, layout, shape.resultSchema, fast, fast, metas, cache)(FragmentDiff.rows))
  }

  /**
   * The Parquet readers of a batch of diffs on the driver (many tables of a merge), each built once per shape and
   * reused: building one copies the Hadoop configuration and broadcasts it, which costs more than a small diff. In a
   * batch, a fragment whose prefix objects each hold at most one page is looked up without a [[KeyFilter]] (it could
   * skip nothing a read of that page costs), so small tables of one layout share their readers.
   */
  final class ReaderCache {
    private val built = scala.collection.mutable.Map.empty[(StructType, StructType, Seq[Filter], Boolean), ObjectFiles.Reader]
    def apply(data: StructType, read: StructType, fs: Seq[Filter], batch: Boolean)(build: => ObjectFiles.Reader): ObjectFiles.Reader =
      synchronized(built.getOrElseUpdate((data, read, fs, batch), build))
    private var conf: Option[org.apache.spark.broadcast.Broadcast[org.apache.spark.util.SerializableConfiguration]] = None
    /** The readers' verifying configuration, as broadcast (compared with the session's once per batch). */
    def configuration(sc: org.apache.spark.SparkContext): org.apache.spark.broadcast.Broadcast[org.apache.spark.util.SerializableConfiguration] =
      synchronized { if (conf.isEmpty) conf = Some(ObjectFiles.verifyingBroadcast(sc)); conf.get }
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
                  fast: Seq[DiffPlan.Fast], lookedUp: Seq[DiffPlan.Fast], metas: Map[String, ObjectMeta],
                  cache: Option[ReaderCache] = None)(
      rows: (FragmentDiffReaders, FragmentTask) => Iterator[org.apache.spark.sql.Row]): Seq[org.apache.spark.sql.Row] = {
    val (prepared, tasks) = prepare(spark, config, layout, schema, fast, lookedUp, metas, cache)
    // the extra DIFFs one commit wrote for many fragments are read once (ObjectFiles.SharedLoads)
    val readers = prepared.copy(shared = Some(new ObjectFiles.SharedLoads(versioned.spark.session.Warehouses.localCommitMaxRows(spark))))
    versioned.spark.session.Jobs.onDriver(tasks)(t => rows(readers, t).toVector).flatten
  }

  /** The readers and the per-fragment tasks of a diff. */
  private def prepare(spark: SparkSession, config: WarehouseConfig, layout: TableLayout, schema: StructType,
                      fast: Seq[DiffPlan.Fast], lookedUp: Seq[DiffPlan.Fast], metas: Map[String, ObjectMeta],
                      cache: Option[ReaderCache] = None): (FragmentDiffReaders, Seq[FragmentTask]) = {
    // the changed keys' first column, to push down (a superset is harmless: objects read whole)
    def file(id: String) = ObjectFile.of(config, metas(id))
    // before-images are only read from the DIFFs of a layout that can hold them
    def recorded(prefix: Seq[String], extra: Seq[String]) = PriorImages.supported(layout) && this.recorded(prefix, extra, metas)
    val tasks = fast.map { f =>
      // the read rule: the fragment's objects within its bounds
      def file(id: String) = FragmentBounds(layout.keyColumns, layout.keyTypes, f.lower, f.upper).file(config, metas(id))
      FragmentTask.onPrefix(f.prefix, metas, file).copy(extraFrom = f.extraFrom.map(file), extraTo = f.extraTo.map(file),
        recordedFrom = recorded(f.prefix, f.extraFrom), recordedTo = recorded(f.prefix, f.extraTo))
    }
    PriorImages.recordedSides.addAndGet(tasks.map(t => (if (t.recordedFrom && t.extraFrom.nonEmpty) 1 else 0) +
      (if (t.recordedTo && t.extraTo.nonEmpty) 1 else 0)).sum)
    // fragments with a key whose row in the prefix is not recorded by a before-image
    val looking = fast.zip(tasks).filter { case (_, t) => (t.prefixSnap.isDefined || t.prefixDiffs.nonEmpty) &&
      !(t.recordedFrom && t.recordedTo) }.map(_._1)
    val lookingIds = looking.map(_.index).toSet
    val prefixes = looking.flatMap(_.prefix).map(metas)
    val onePage = cache.isDefined && prefixes.forall(_.rowCount <= versioned.core.format.ObjectShape.PageRows)
    val filter = if (looking.isEmpty || onePage) None else KeyFilter(layout, lookedUp.filter(f => f.prefix.nonEmpty && lookingIds(f.index)), metas, file,
      reader(spark, layout.diffSchema, StructType(Seq(layout.keyFields.head)), Nil, batch = false), ObjectFiles.verifying(spark.sparkContext.hadoopConfiguration))
    val readers = this.readers(spark, layout, schema, filter, diffLookup = prefixes.exists(_.kind == ObjectKind.Diff),
      snapLookup = prefixes.exists(_.kind == ObjectKind.Snap), cache)
    (readers, tasks)
  }

  /**
   * Whether every DIFF of `extra` (one side's DIFFs after the common `prefix`) records before-images of the chain
   * before it, by its statistics (the chain hash is the same in every row: min = max): then no key that side changed
   * needs a lookup in the prefix.
   */
  private def recorded(prefix: Seq[String], extra: Seq[String], metas: Map[String, ObjectMeta]): Boolean =
    extra.indices.forall { i =>
      val m = metas(extra(i))
      val chain = PriorImages.chainHash(prefix ++ extra.take(i))
      m.minValues.get(VersionedOptions.PriorChainColumn).contains(chain) && m.maxValues.get(VersionedOptions.PriorChainColumn).contains(chain)
    }

  /**
   * A Parquet reader of objects whose columns are `data`, returning `read` (as batches: `batch`); each gets its own
   * configuration. One that pushes no filter down is the same for every diff of a layout ([[Unfiltered]]).
   */
  private def reader(spark: SparkSession, data: StructType, read: StructType, fs: Seq[Filter], batch: Boolean): ObjectFiles.Reader = {
    def build = {
      readersBuilt.incrementAndGet()
      new ParquetFileFormat().buildReaderWithPartitionValues(spark, data, new StructType(), read, fs,
        Map(FileFormat.OPTION_RETURNING_BATCH -> batch.toString), (if (fs.isEmpty) ObjectFiles.verifyingUnfiltered _
          else ObjectFiles.verifying _)(spark.sparkContext.hadoopConfiguration))
    }
    if (fs.isEmpty) Unfiltered(spark, data, read, batch)(build) else build
  }

  /** Parquet readers built in this JVM (for tests). */
  private[versioned] val readersBuilt = new java.util.concurrent.atomic.AtomicLong()

  /**
   * Readers that push no filter down (whole DIFFs, the changed keys' column), kept for the diffs that follow: building
   * one copies the Hadoop configuration and broadcasts it, a few milliseconds of a small diff. A reader is what its
   * session, schemas, the session's SQL settings and the SparkContext's Hadoop configuration made it, so that is its
   * key: the configuration by its verifying broadcast ([[ObjectFiles.verifyingBroadcast]], a new one when the
   * content changed, or the context restarted). The most recently used few of each session are kept, and none
   * keeps its session alive (a session no longer used takes its readers with it).
   */
  private object Unfiltered {
    private val Kept = 16
    private type Key = (AnyRef, Map[String, String], StructType, StructType, Boolean)
    private val bySession = new java.util.WeakHashMap[SparkSession, java.util.LinkedHashMap[Key, ObjectFiles.Reader]]()
    private def kept(spark: SparkSession) = bySession.computeIfAbsent(spark, _ =>
      new java.util.LinkedHashMap[Key, ObjectFiles.Reader](Kept, 0.75f, true) {
        override def removeEldestEntry(e: java.util.Map.Entry[Key, ObjectFiles.Reader]): Boolean = size() > Kept
      })
    def apply(spark: SparkSession, data: StructType, read: StructType, batch: Boolean)(build: => ObjectFiles.Reader): ObjectFiles.Reader = {
      val key: Key = (ObjectFiles.verifyingBroadcast(spark.sparkContext), spark.conf.getAll, data, read, batch)
      synchronized(Option(kept(spark).get(key))).getOrElse {
        val r = build
        synchronized(kept(spark).put(key, r))
        r
      }
    }
  }

  /**
   * Readers of a fragment's objects for [[FragmentRows]] (result rows in `schema`): DIFFs whole (with their
   * before-images when the layout has them), and, as requested, the prefix's DIFFs and SNAP with `filter` (the
   * keys looked up) pushed down to Parquet.
   */
  def readers(spark: SparkSession, layout: TableLayout, schema: StructType, filter: Option[Filter], diffLookup: Boolean,
              snapLookup: Boolean, cache: Option[ReaderCache] = None): FragmentDiffReaders = {
    def reader(data: StructType, read: StructType, fs: Seq[Filter], batch: Boolean) =
      cache.fold(this.reader(spark, data, read, fs, batch))(_.apply(data, read, fs, batch)(this.reader(spark, data, read, fs, batch)))
    val nonKey = layout.nonKeyColumns
    val rowSchema = layout.keyFirst(nonKey)
    val diffRead = layout.diffRead(nonKey)
    val withPriors = PriorImages.supported(layout)
    // DIFFs written without before-images read them as nulls (so they are read as nullable)
    val (diffData, diffWhole) = if (withPriors) {
      val priors = PriorImages.diffSchema(layout).fields.takeRight(2).map(_.copy(nullable = true))
      (StructType(layout.diffSchema.fields ++ priors), StructType(diffRead.fields ++ priors))
    } else (layout.diffSchema, diffRead)
    val snapBatches = new ParquetFileFormat().supportBatch(spark, rowSchema)
    FragmentDiffReaders(
      rowSchema, layout.keyColumns.size,
      layout.keyColumns.indices.filterNot(i => layout.keyColumns(i) == VersionedOptions.DupColumn),
      diffWhole, if (withPriors) diffRead.length + 1 else -1,
      reader(diffData, diffWhole, Nil, batch = false),
      Option.when(diffLookup)(reader(layout.diffSchema, diffRead, filter.toSeq, batch = false)),
      Option.when(snapLookup)(reader(layout.physicalSchema, rowSchema, filter.toSeq, snapBatches)),
      snapBatches, schema,
      cache.fold(ObjectFiles.verifyingBroadcast(spark.sparkContext))(_.configuration(spark.sparkContext)))
  }
}
