package versioned.spark.write

import java.security.MessageDigest
import java.util.UUID
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, UnsafeProjection}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String
import versioned.core.{Errors, Hashing, ObjectMeta, WarehouseConfig}
import versioned.spark.Values

/**
 * Writes one object (rows already sorted by key) on an executor: Parquet through Spark's writer, a
 * SHA-256 content hash over the rows, and per-column min/max/null-count statistics. On close the
 * file is moved to its content-addressed name; identical content yields the identical object.
 */
private[versioned] final class ObjectWriter(sink: ParquetSink, config: WarehouseConfig, kind: String) {
  private val schema = sink.schema
  private val tmp = config.stagingUri(s"objects/${UUID.randomUUID()}.parquet")
  private val out = sink.open(tmp)
  private val unsafe = UnsafeProjection.create(schema)
  private val md = MessageDigest.getInstance("SHA-256")
  md.update((kind + "\u0000" + schema.json).getBytes("UTF-8"))
  private val statCols = schema.fields.indices.filter(i => Values.supported(schema(i).dataType)).toArray
  private val mins = new Array[Any](schema.length)
  private val maxs = new Array[Any](schema.length)
  private val nulls = new Array[Long](schema.length)
  private var rows = 0L
  private val sizeBuf = new Array[Byte](4)
  private var firstKey: InternalRow = _

  def write(row: InternalRow): Unit = {
    val u = unsafe(row)
    if (rows == 0) firstKey = u.copy()
    val size = u.getSizeInBytes
    sizeBuf(0) = (size >>> 24).toByte; sizeBuf(1) = (size >>> 16).toByte; sizeBuf(2) = (size >>> 8).toByte; sizeBuf(3) = size.toByte
    md.update(sizeBuf)
    u.getBaseObject match {
      case a: Array[Byte] => md.update(a, (u.getBaseOffset - Platform.BYTE_ARRAY_OFFSET).toInt, size)
      case _ => md.update(u.getBytes)
    }
    var j = 0
    while (j < statCols.length) {
      val i = statCols(j)
      if (u.isNullAt(i)) nulls(i) += 1
      else {
        val v = u.get(i, schema(i).dataType)
        if (mins(i) == null || less(v, mins(i))) mins(i) = own(v)
        if (maxs(i) == null || less(maxs(i), v)) maxs(i) = own(v)
      }
      j += 1
    }
    out.write(u)
    rows += 1
  }

  /** The first row written (a copy), used for fragment lower bounds. */
  def firstRow: InternalRow = firstKey
  def rowCount: Long = rows

  private def own(v: Any): Any = v match { case s: UTF8String => s.clone(); case o => o }

  private def less(a: Any, b: Any): Boolean = (a, b) match {
    case (x: UTF8String, y: UTF8String) => x.binaryCompare(y) < 0
    case (x: Decimal, y: Decimal) => x.compare(y) < 0
    case (x: java.lang.Double, y: java.lang.Double) => x.compareTo(y) < 0
    case (x: java.lang.Float, y: java.lang.Float) => x.compareTo(y) < 0
    case (x: Comparable[Any] @unchecked, y) => x.compareTo(y) < 0
  }

  def close(): ObjectMeta = {
    out.close()
    val id = Hashing.hex(md.digest())
    try {
      val src = new Path(tmp)
      val fs = src.getFileSystem(sink.hadoopConf)
      val size = fs.getFileStatus(src).getLen
      val dst = new Path(config.objectUri(id))
      if (fs.exists(dst)) fs.delete(src, false)
      else {
        fs.mkdirs(dst.getParent)
        if (!fs.rename(src, dst) && !fs.exists(dst)) throw new java.io.IOException(s"rename $src -> $dst failed")
      }
      def canon(arr: Array[Any]): Map[String, Any] = statCols.filter(arr(_) != null).map { i =>
        schema(i).name -> Values.fromInternal(new GenericInternalRow(Array(arr(i))), 0, schema(i).dataType)
      }.toMap
      ObjectMeta(id, kind, Seq.empty, rows, size, "parquet", canon(mins), canon(maxs),
        statCols.map(i => schema(i).name -> nulls(i)).toMap)
    } catch {
      case e: java.io.IOException => throw Errors.storage(s"Could not store object $id under ${config.warehouse}: ${e.getMessage}", e)
    }
  }

  def abort(): Unit = try out.close() finally {
    val p = new Path(tmp); p.getFileSystem(sink.hadoopConf).delete(p, false)
  }
}
