package versioned.spark.write

import versioned.spark.format.SparkKeys

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, GenericInternalRow, UnsafeProjection}
import org.apache.spark.sql.execution.datasources.FileFormat
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.types.StructType
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.util.SerializableConfiguration
import versioned.core.{ChangeKind, ObjectKind, ObjectMeta}
import versioned.spark.session.{TableSnapshot, VersionedOptions}
import versioned.spark.format.{TableLayout, Values}
import versioned.spark.read.{Conflation, FragmentBounds, ObjectFile, ObjectFiles}

/**
 * Minor compaction, one executor task per fragment (on the driver when the DIFFs hold few rows): merges
 * DIFFs into one conflated DIFF (newest change per key, deletes kept). Only changed rows are rewritten, so
 * chains stay short without copying the SNAP; the merged objects become the new objects' parents.
 *
 * With a [[DiffConsolidation.Split]] (append-heavy fragments) the merged rows keyed above the SNAP's
 * largest key leave the DIFF and become a SNAP of their own, the first object of a new fragment: a
 * table that grows at its end gets a new fragment instead of a rewrite of its last one.
 */
private[versioned] object DiffConsolidation {

  /**
   * A tail split ([[versioned.core.format.CompactionPolicy.Split]]): when more merged rows than `maxBodyRows`
   * stay at or below `snapMax`, nothing is written and the fragment needs a SNAP rewrite instead
   * ([[Result.rewrite]]).
   */
  type Split = versioned.core.format.CompactionPolicy.Split

  /** One fragment's work: merge `diffs` (consecutive, oldest first), optionally splitting off the tail. */
  final case class Task(fragment: Int, diffs: Seq[String], split: Option[Split] = None)

  /** The merged DIFF (absent when a split left no change at or below the SNAP) and the tail SNAP. */
  final case class Result(fragment: Int, diff: Option[ObjectMeta], tail: Option[WrittenObject], rewrite: Boolean)

  /**
   * The readers and writers of one compaction's consolidations, made once and shared by its jobs (building a
   * Parquet reader broadcasts a configuration; the sinks carry theirs into every task); with `splits` the
   * tail SNAP writer too. [[apply]] is one fragment's work, in a Spark task or on the driver.
   */
  final class Work private (read: ObjectFiles.Reader, verify: Broadcast[SerializableConfiguration], diffSink: ParquetSink,
                            snapSink: Option[ParquetSink], layout: TableLayout, target: ObjectTarget,
                            sharedMaxRows: Long) extends Serializable {
    // DIFF rows are read key columns first (what Conflation compares), then written back in object order.
    private val readSchema = layout.diffRead(layout.nonKeyColumns)
    private def back(to: StructType) = UnsafeProjection.create(to.fields.toSeq.map { f =>
      BoundReference(readSchema.fieldIndex(f.name), f.dataType, f.nullable)
    })

    /**
     * On the driver, the shared DIFFs this compaction read, each loaded whole once (verified as any read) for all the
     * fragments of the compaction listing it, when it holds at most `sharedMaxRows` rows (`localCommitMaxRows`, as a
     * diff's shared loads). A task merges one fragment: it reads a shared DIFF within that fragment's bounds only.
     */
    @transient private lazy val shared = new ObjectFiles.SharedLoads(sharedMaxRows)

    private def conflated(files: Seq[ObjectFile]): Array[InternalRow] = {
      val copy = ObjectFiles.identity(readSchema) // one projection (generated code) for all of them, in this thread
      val conf = verify.value.value
      val onDriver = org.apache.spark.TaskContext.get() == null
      Conflation(files.map(f => if (onDriver) shared.load(read, f, copy, conf) else ObjectFiles.load(read, f, copy, conf)).toArray,
        layout.keyTypes)
    }

    /** One DIFF of `rows` (in the read layout, key order) with `parents`. */
    private def diffOf(rows: Iterator[InternalRow], parents: Seq[String]): ObjectMeta = {
      val toDiff = back(layout.diffSchema)
      val writer = new ObjectWriter(diffSink, target, ObjectKind.Diff)
      try rows.foreach(r => writer.write(toDiff(r))) catch { case e: Throwable => writer.abort(); throw e }
      writer.close().copy(parents = parents)
    }

    /**
     * The DIFFs `files` (consecutive, oldest first) merged and divided at `bounds` (ascending first-key values, the
     * lower bounds of the second and later parts): one DIFF per part, None for a part without rows.
     */
    def divide(files: Seq[ObjectFile], ids: Seq[String], bounds: Seq[Any]): Seq[Option[ObjectMeta]] = {
      val rows = conflated(files)
      val cuts = 0 +: bounds.map(b => firstFrom(rows, b, layout.keyTypes, orEqual = true)) :+ rows.length
      cuts.sliding(2).map { case Seq(from, until) =>
        Option.when(until > from)(diffOf(rows.iterator.slice(from, until), ids))
      }.toSeq
    }

    def apply(task: Task, files: Seq[ObjectFile]): Result = {
      val keyTypes = layout.keyTypes
      val change = readSchema.fieldIndex(VersionedOptions.ChangeColumn)
      val rows = conflated(files)
      val cut = task.split.fold(rows.length)(s => firstFrom(rows, Values.toInternal(s.snapMax, keyTypes.head), keyTypes, orEqual = false))
      if (task.split.exists(cut > _.maxBodyRows)) Result(task.fragment, None, None, rewrite = true)
      else {
        val diff = Option.when(task.split.isEmpty || cut > 0)(diffOf(rows.iterator.take(cut), task.diffs))
        val tail = if (task.split.isEmpty) None else snapSink.flatMap { sink =>
          val toSnap = back(layout.physicalSchema)
          new ObjectRuns(sink, target, ObjectKind.Snap, layout.keyColumns).writing(runs =>
            (cut until rows.length).foreach(i => if (rows(i).getByte(change) != ChangeKind.Delete) runs.write(task.fragment, toSnap(rows(i)))))
            .headOption.map(w => w.copy(meta = w.meta.copy(parents = task.diffs)))
        }
        Result(task.fragment, diff, tail, rewrite = false)
      }
    }
  }

  object Work {
    def apply(spark: SparkSession, layout: TableLayout, target: ObjectTarget, splits: Boolean): Work = {
      val conf = ObjectFiles.verifying(spark.sparkContext.hadoopConfiguration)
      val read = new ParquetFileFormat().buildReaderWithPartitionValues(spark, layout.diffSchema, new StructType(),
        layout.diffRead(layout.nonKeyColumns), Nil, Map(FileFormat.OPTION_RETURNING_BATCH -> "false"), conf)
      new Work(read, ObjectFiles.verifyingBroadcast(spark.sparkContext),
        ParquetSink.forObjects(spark, layout.diffSchema, ObjectKind.Diff),
        Option.when(splits)(ParquetSink.forObjects(spark, layout.physicalSchema, ObjectKind.Snap)), layout, target,
        versioned.spark.session.Warehouses.localCommitMaxRows(spark))
    }
  }

  /** Each task with its DIFFs, read within its fragment's bounds (the read rule: a shared DIFF is pushed down). */
  private def planned(snap: TableSnapshot, tasks: Seq[Task]): Seq[(Task, Seq[ObjectFile])] = {
    val bounds = FragmentBounds.of(snap.layout, snap.version.effectiveFragments)
    tasks.sortBy(_.fragment).map(t => (t, t.diffs.map(id => bounds(t.fragment).file(snap.config, snap.objects(id)))))
  }

  /** One Spark job, one task per fragment. */
  def run(spark: SparkSession, snap: TableSnapshot, tasks: Seq[Task], work: Work): Map[Int, Result] = {
    val plans = planned(snap, tasks)
    spark.sparkContext.parallelize(plans, math.max(1, plans.size)).map { case (task, files) => work(task, files) }
      .collect().map(r => r.fragment -> r).toMap
  }

  /**
   * The same work on the driver (no Spark job), at most `threads` fragments at a time: for DIFFs with few rows,
   * whose job would cost more to schedule than its work, and in local mode (where a task would run in this JVM
   * too, but take a task slot from the commits).
   */
  def runOnDriver(snap: TableSnapshot, tasks: Seq[Task], work: Work, threads: Int): Map[Int, Result] =
    versioned.spark.session.Jobs.onDriver(planned(snap, tasks), threads) { case (task, files) => work(task, files) }
      .map(r => r.fragment -> r).toMap

  /**
   * Index of the first row (sorted by its single leading key) whose key is above `bound`, or at or above it with
   * `orEqual`; `rows.length` when there is none.
   */
  private def firstFrom(rows: Array[InternalRow], bound: Any, keyTypes: Seq[org.apache.spark.sql.types.DataType],
                        orEqual: Boolean): Int = {
    val cmp = SparkKeys.order(keyTypes)
    val b = new GenericInternalRow(Array(bound))
    var lo = 0
    var hi = rows.length
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      val c = cmp.compare(rows(mid), b)
      if (c < 0 || (c == 0 && !orEqual)) lo = mid + 1 else hi = mid
    }
    lo
  }
}
