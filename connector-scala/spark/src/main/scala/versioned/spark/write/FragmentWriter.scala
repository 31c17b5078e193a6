package versioned.spark.write

import scala.collection.mutable.ArrayBuffer
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection}
import org.apache.spark.sql.types.StructType
import versioned.core.{ObjectMeta, WarehouseConfig}
import versioned.spark.Values

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
   * @param fragmentOf given a task's partition id and the current row's fragment column value, the
   *                   fragment index; `None` means read the fragment from column [[FragColumn]]
   */
  def write(df: DataFrame, objectSchema: StructType, keyColumns: Seq[String], kind: String,
            config: WarehouseConfig, fragmentByPartition: Option[Array[Int]] = None): Seq[WrittenObject] = {
    val spark = SparkSession.active
    val sink = ParquetSink.prepare(spark, objectSchema)
    val inSchema = df.schema
    val fragOrdinal = if (fragmentByPartition.isEmpty) inSchema.fieldIndex(FragColumn) else -1
    val ordinals = objectSchema.fieldNames.map(inSchema.fieldIndex)
    val keyOrdinals = keyColumns.map(objectSchema.fieldIndex)
    val keyTypes = keyColumns.map(objectSchema(_).dataType)
    val rdd = df.asInstanceOf[org.apache.spark.sql.classic.Dataset[Row]].queryExecution.toRdd
    rdd.mapPartitionsWithIndex { (pid, it) =>
      val project = UnsafeProjection.create(ordinals.toSeq.zip(objectSchema.fields).map { case (o, f) =>
        BoundReference(o, f.dataType, f.nullable)
      })
      val out = ArrayBuffer.empty[WrittenObject]
      var current = Int.MinValue
      var writer: ObjectWriter = null
      def finish(): Unit = if (writer != null) {
        val first = writer.firstRow
        val key = keyOrdinals.zip(keyTypes).map { case (o, dt) => Values.fromInternal(first, o, dt) }
        out += WrittenObject(current, writer.close(), key)
        writer = null
      }
      try {
        while (it.hasNext) {
          val row = it.next()
          val frag = fragmentByPartition.map(_(pid)).getOrElse(row.getInt(fragOrdinal))
          if (frag != current || writer == null) {
            finish()
            current = frag
            writer = new ObjectWriter(sink, config, kind)
          }
          writer.write(project(row))
        }
        finish()
      } catch { case e: Throwable => if (writer != null) writer.abort(); throw e }
      out.iterator
    }.collect().toSeq.sortBy(_.fragment)
  }
}
