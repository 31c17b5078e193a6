package versioned.spark.write

import scala.collection.mutable.ArrayBuffer
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection}
import org.apache.spark.sql.types.StructType
import versioned.core.ObjectMeta
import versioned.spark.format.Values

/**
 * An object written for fragment `fragment`, with the canonical key of its first row; `also`: the later fragments
 * whose changes it holds too (a shared DIFF written by a task, [[ObjectRuns]]' `spanRows`), empty otherwise.
 */
private[versioned] final case class WrittenObject(fragment: Int, meta: ObjectMeta, firstKey: Seq[Any],
                                                  also: Seq[Int] = Nil) {
  /** The fragments whose chains list the object, in order. */
  def fragments: Seq[Int] = fragment +: also
}

/**
 * Writes objects from a DataFrame whose rows are already grouped by fragment and sorted by key inside
 * each task: one object per run of equal fragment ids, or with `spanRows` > 0 objects that go on across
 * fragments ([[ObjectRuns]]). Only the small per-object summaries come back to the driver.
 */
private[versioned] object FragmentWriter {
  val FragColumn = "_vfrag"

  /**
   * @param fragmentByPartition the fragment index of each task's partition id; `None` means read the
   *                            fragment from column [[FragColumn]]
   * @param spanRows            DIFFs only: see [[ObjectRuns]] (0: one object per fragment)
   */
  def write(df: DataFrame, objectSchema: StructType, keyColumns: Seq[String], kind: String,
            target: ObjectTarget, fragmentByPartition: Option[Array[Int]] = None, spanRows: Long = 0): Seq[WrittenObject] = {
    val spark = SparkSession.active
    val sink = if (spanRows > 0) ParquetSink.forSharedDiffs(spark, objectSchema) else ParquetSink.forObjects(spark, objectSchema, kind)
    val inSchema = df.schema
    val fragOrdinal = if (fragmentByPartition.isEmpty) inSchema.fieldIndex(FragColumn) else -1
    val ordinals = objectSchema.fieldNames.map(inSchema.fieldIndex)
    val rdd = df.asInstanceOf[org.apache.spark.sql.classic.Dataset[Row]].queryExecution.toRdd
    rdd.mapPartitionsWithIndex { (pid, it) =>
      val project = UnsafeProjection.create(ordinals.toSeq.zip(objectSchema.fields).map { case (o, f) =>
        BoundReference(o, f.dataType, f.nullable)
      })
      new ObjectRuns(sink, target, kind, keyColumns, spanRows = spanRows).writing(runs =>
        it.foreach(row => runs.write(fragmentByPartition.map(_(pid)).getOrElse(row.getInt(fragOrdinal)), project(row))))
        .iterator
    }.collect().toSeq.sortBy(_.fragment)
  }
}

/**
 * Writes rows (in the sink's schema) that arrive grouped by fragment and sorted by key: one object per
 * run of equal fragment ids. Used by executor tasks and, for small writes, by the driver (`overlap`: each
 * object's hash and statistics on a second thread; `expectedRows`: the rows it holds, [[ObjectWriter]]).
 * With `spanRows` > 0 (a task's DIFFs, the kernel's `CommitPath.taskDiffSpan`), an object goes on into the
 * next fragment's rows until it holds at least `spanRows` rows; the sink should then be the shared DIFFs' one.
 */
private[versioned] final class ObjectRuns(sink: ParquetSink, target: ObjectTarget, kind: String,
                                          keyColumns: Seq[String], overlap: Boolean = false, expectedRows: Long = -1,
                                          spanRows: Long = 0) {
  private val keyOrdinals = keyColumns.map(sink.schema.fieldIndex)
  private val keyTypes = keyColumns.map(sink.schema(_).dataType)
  private val out = ArrayBuffer.empty[WrittenObject]
  private var current = Int.MinValue
  private var writer: ObjectWriter = null
  private var start = Int.MinValue // the fragment the object being written started at
  private val also = ArrayBuffer.empty[Int] // the fragments it went on into
  private var rows = 0L

  def write(frag: Int, row: InternalRow): Unit = {
    if (writer == null || (frag != current && (spanRows <= 0 || rows >= spanRows))) {
      finish()
      start = frag
      writer = new ObjectWriter(sink, target, kind, overlap, expectedRows)
    } else if (frag != current) also += frag
    current = frag
    writer.write(row)
    rows += 1
  }

  /** Closes the last object; returns every object written, in order. */
  def close(): Seq[WrittenObject] = { finish(); out.toSeq }

  /** Drops the object being written (after a failure). */
  def abort(): Unit = if (writer != null) { writer.abort(); writer = null; also.clear(); rows = 0 }

  /**
   * Runs `body` (which writes rows through this), then closes the last object and returns every object written;
   * when `body` fails, the object being written is dropped and the failure rethrown.
   */
  def writing(body: ObjectRuns => Unit): Seq[WrittenObject] = {
    try body(this) catch { case e: Throwable => abort(); throw e }
    close()
  }

  private def finish(): Unit = if (writer != null) {
    val first = writer.firstRow
    val key = keyOrdinals.zip(keyTypes).map { case (o, dt) => Values.fromInternal(first, o, dt) }
    out += WrittenObject(start, writer.close(), key, also.toList)
    writer = null
    also.clear()
    rows = 0
  }
}
