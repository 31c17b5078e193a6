package versioned.spark.write

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, GenericInternalRow, UnsafeProjection}
import org.apache.spark.sql.execution.datasources.FileFormat
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.types.StructType
import versioned.core.{ChangeKind, ObjectKind, ObjectMeta}
import versioned.spark.{TableSnapshot, Values, VersionedOptions}
import versioned.spark.read.{Conflation, KeyComparator, ObjectFile, ObjectFiles}

/**
 * Minor compaction, one executor task per fragment: merges DIFFs into one conflated DIFF (newest
 * change per key, deletes kept). Only changed rows are rewritten, so chains stay short without
 * copying the SNAP; the merged objects become the new objects' parents.
 *
 * With a [[DiffConsolidation.Split]] (append-heavy fragments) the merged rows keyed above the SNAP's
 * largest key leave the DIFF and become a SNAP of their own, the first object of a new fragment: a
 * table that grows at its end gets a new fragment instead of a rewrite of its last one.
 */
private[versioned] object DiffConsolidation {

  /**
   * @param snapMax     canonical key of the fragment SNAP's largest row
   * @param maxBodyRows when more merged rows than this stay at or below `snapMax`, nothing is written
   *                    and the fragment needs a SNAP rewrite instead ([[Result.rewrite]])
   */
  final case class Split(snapMax: Any, maxBodyRows: Long)

  /** One fragment's work: merge `diffs` (consecutive, oldest first), optionally splitting off the tail. */
  final case class Task(fragment: Int, diffs: Seq[String], split: Option[Split] = None)

  /** The merged DIFF (absent when a split left no change at or below the SNAP) and the tail SNAP. */
  final case class Result(fragment: Int, diff: Option[ObjectMeta], tail: Option[WrittenObject], rewrite: Boolean)

  /** One Spark job, one task per fragment. */
  def run(spark: SparkSession, snap: TableSnapshot, tasks: Seq[Task], target: ObjectTarget): Map[Int, Result] = {
    val layout = snap.layout
    val keyCols = layout.keyColumns
    // DIFF rows are read key columns first (what Conflation compares), then written back in object order.
    val readSchema = layout.diffRead(layout.nonKeyColumns)
    def back(to: StructType) = UnsafeProjection.create(to.fields.toSeq.map { f =>
      BoundReference(readSchema.fieldIndex(f.name), f.dataType, f.nullable)
    })
    val conf = ObjectFiles.verifying(spark.sparkContext.hadoopConfiguration)
    val verifyConf = ObjectFiles.verifyingBroadcast(spark.sparkContext)
    val read = new ParquetFileFormat().buildReaderWithPartitionValues(spark, layout.diffSchema, new StructType(), readSchema,
      Nil, Map(FileFormat.OPTION_RETURNING_BATCH -> "false"), conf)
    val diffSink = ParquetSink.forObjects(spark, layout.diffSchema, ObjectKind.Diff)
    val snapSink = if (tasks.exists(_.split.isDefined)) Some(ParquetSink.forObjects(spark, layout.physicalSchema, ObjectKind.Snap)) else None
    val config = snap.config
    val keyTypes = layout.keyTypes
    val physical = layout.physicalSchema
    val change = readSchema.fieldIndex(VersionedOptions.ChangeColumn)
    val plans = tasks.sortBy(_.fragment).map(t => (t, t.diffs.map(id => ObjectFile.of(config, snap.objects(id)))))
    val results = spark.sparkContext.parallelize(plans, math.max(1, plans.size)).map { case (task, files) =>
      val sources = files.map(ObjectFiles.load(read, _, ObjectFiles.identity(readSchema), verifyConf.value.value)).toArray
      val rows = Conflation(sources, keyTypes)
      val cut = task.split.fold(rows.length)(s => firstAbove(rows, Values.toInternal(s.snapMax, keyTypes.head), keyTypes))
      if (task.split.exists(cut > _.maxBodyRows)) Result(task.fragment, None, None, rewrite = true)
      else {
        val diff = Option.when(task.split.isEmpty || cut > 0) {
          val toDiff = back(layout.diffSchema)
          val writer = new ObjectWriter(diffSink, target, ObjectKind.Diff)
          try { var i = 0; while (i < cut) { writer.write(toDiff(rows(i))); i += 1 } }
          catch { case e: Throwable => writer.abort(); throw e }
          writer.close().copy(parents = task.diffs)
        }
        val tail = if (task.split.isEmpty) None else snapSink.flatMap { sink =>
          val toSnap = back(physical)
          val runs = new ObjectRuns(sink, target, ObjectKind.Snap, keyCols)
          try (cut until rows.length).foreach(i => if (rows(i).getByte(change) != ChangeKind.Delete) runs.write(task.fragment, toSnap(rows(i))))
          catch { case e: Throwable => runs.abort(); throw e }
          runs.close().headOption.map(w => w.copy(meta = w.meta.copy(parents = task.diffs)))
        }
        Result(task.fragment, diff, tail, rewrite = false)
      }
    }.collect()
    results.map(r => r.fragment -> r).toMap
  }

  /** Index of the first row (sorted by its single leading key) whose key is above `max`. */
  private def firstAbove(rows: Array[InternalRow], max: Any, keyTypes: Seq[org.apache.spark.sql.types.DataType]): Int = {
    val cmp = new KeyComparator(keyTypes)
    val bound = new GenericInternalRow(Array(max))
    var lo = 0
    var hi = rows.length
    while (lo < hi) {
      val mid = (lo + hi) >>> 1
      if (cmp.compare(rows(mid), bound) <= 0) lo = mid + 1 else hi = mid
    }
    lo
  }
}
