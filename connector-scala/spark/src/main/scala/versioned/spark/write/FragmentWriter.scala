package versioned.spark.write

import scala.collection.mutable.ArrayBuffer
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection}
import org.apache.spark.sql.types.StructType
import versioned.core.ObjectMeta
import versioned.spark.format.Values

/** An object written by an executor for fragment `fragment`, with the canonical key of its first row. */
private[versioned] final case class WrittenObject(fragment: Int, meta: ObjectMeta, firstKey: Seq[Any])

/**
 * Writes objects from a DataFrame whose rows are already grouped by fragment and sorted by key inside
 * each task: one object per run of equal fragment ids. Only the small per-object summaries come back
 * to the driver.
 */
private[versioned] object FragmentWriter {
  val FragColumn = "_vfrag"

  /**
   * @param fragmentByPartition the fragment index of each task's partition id; `None` means read the
   *                            fragment from column [[FragColumn]]
   */
  def write(df: DataFrame, objectSchema: StructType, keyColumns: Seq[String], kind: String,
            target: ObjectTarget, fragmentByPartition: Option[Array[Int]] = None): Seq[WrittenObject] = {
    val spark = SparkSession.active
    val sink = ParquetSink.forObjects(spark, objectSchema, kind)
    val inSchema = df.schema
    val fragOrdinal = if (fragmentByPartition.isEmpty) inSchema.fieldIndex(FragColumn) else -1
    val ordinals = objectSchema.fieldNames.map(inSchema.fieldIndex)
    val rdd = df.asInstanceOf[org.apache.spark.sql.classic.Dataset[Row]].queryExecution.toRdd
    rdd.mapPartitionsWithIndex { (pid, it) =>
      val project = UnsafeProjection.create(ordinals.toSeq.zip(objectSchema.fields).map { case (o, f) =>
        BoundReference(o, f.dataType, f.nullable)
      })
      new ObjectRuns(sink, target, kind, keyColumns).writing(runs =>
        it.foreach(row => runs.write(fragmentByPartition.map(_(pid)).getOrElse(row.getInt(fragOrdinal)), project(row))))
        .iterator
    }.collect().toSeq.sortBy(_.fragment)
  }
}

/**
 * Writes rows (in the sink's schema) that arrive grouped by fragment and sorted by key: one object per
 * run of equal fragment ids. Used by executor tasks and, for small writes, by the driver (`overlap`: each
 * object's hash and statistics on a second thread; `expectedRows`: the rows it holds, [[ObjectWriter]]).
 */
private[versioned] final class ObjectRuns(sink: ParquetSink, target: ObjectTarget, kind: String,
                                          keyColumns: Seq[String], overlap: Boolean = false, expectedRows: Long = -1) {
  private val keyOrdinals = keyColumns.map(sink.schema.fieldIndex)
  private val keyTypes = keyColumns.map(sink.schema(_).dataType)
  private val out = ArrayBuffer.empty[WrittenObject]
  private var current = Int.MinValue
  private var writer: ObjectWriter = null

  def write(frag: Int, row: InternalRow): Unit = {
    if (frag != current || writer == null) {
      finish()
      current = frag
      writer = new ObjectWriter(sink, target, kind, overlap, expectedRows)
    }
    writer.write(row)
  }

  /** Closes the last object; returns every object written, in order. */
  def close(): Seq[WrittenObject] = { finish(); out.toSeq }

  /** Drops the object being written (after a failure). */
  def abort(): Unit = if (writer != null) { writer.abort(); writer = null }

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
    out += WrittenObject(current, writer.close(), key)
    writer = null
  }
}
