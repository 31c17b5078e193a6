package versioned.spark.write

import java.security.MessageDigest
import java.util.UUID
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Expression, GenericInternalRow, InterpretedUnsafeProjection,
  UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String
import versioned.core.{Errors, Hashing, ObjectChecksum, ObjectMeta, WarehouseConfig, WarehouseStore}
import versioned.spark.format.Values

/**
 * Writes one object (rows already sorted by key) on an executor: Parquet through Spark's writer (with
 * page checksums), a SHA-256 content hash over the rows, per-column min/max/null-count statistics, and
 * the file's [[ObjectChecksum]]. On close the file is moved to its content-addressed name; identical
 * content yields the identical object. When the object is stored already, or the target is `held`, the
 * new file is kept in the lease's staging area until the commit has checked that the stored one is still
 * there (or moved it into place).
 *
 * `overlap` (the driver writing a large object, [[LocalCommit]]): the content hash and the statistics are
 * computed on a second thread ([[versioned.spark.session.Jobs.InOrder]]) while this one encodes the Parquet
 * file, over copies of the rows handed over in chunks of [[ObjectWriter.OverlapChunk]], in the order written:
 * the same object (id, bytes, statistics) as without it, in about the time of the Parquet encoding alone.
 * `expectedRows` (the driver writing rows it holds): how many rows it will write, when known ([[ObjectWriter.projection]]).
 */
private[versioned] final class ObjectWriter(sink: ParquetSink, target: ObjectTarget, kind: String,
                                            overlap: Boolean = false, expectedRows: Long = -1) {
  private val config = target.config
  private val schema = sink.schema
  private val tmp = target.stagingUri(s"objects/${UUID.randomUUID()}.parquet")
  private val out = sink.open(tmp)
  // every column read as nullable, as `UnsafeProjection.create(schema)` did before the interpreted form was added
  private val unsafe = ObjectWriter.projection(schema.fields.toSeq.zipWithIndex.map { case (f, i) =>
    BoundReference(i, f.dataType, nullable = true) }, expectedRows)
  private val md = MessageDigest.getInstance("SHA-256")
  md.update((kind + "\u0000" + schema.json).getBytes("UTF-8"))
  private val statCols = schema.fields.indices.filter(i => Values.supported(schema(i).dataType)).toArray
  // min/max of long-, int- and double-backed columns kept as primitives (no boxing per row), of the others as values
  private val kinds: Array[Int] = schema.fields.map(_.dataType match {
    case LongType | TimestampType | TimestampNTZType => ObjectWriter.LongStat
    case IntegerType | DateType => ObjectWriter.IntStat
    case DoubleType => ObjectWriter.DoubleStat
    case _ => ObjectWriter.ValueStat
  })
  private val (primitiveCols, valueCols) = statCols.partition(kinds(_) != ObjectWriter.ValueStat)
  private val seen = new Array[Boolean](schema.length)
  private val lmin, lmax = new Array[Long](schema.length)
  private val dmin, dmax = new Array[Double](schema.length)
  private val mins = new Array[Any](schema.length)
  private val maxs = new Array[Any](schema.length)
  private val nulls = new Array[Long](schema.length)
  private var rows = 0L
  private val sizeBuf = new Array[Byte](4)
  private var firstKey: InternalRow = _

  /** The rows handed to the second thread next (`overlap`), and that thread's work so far, in order. */
  private var chunk = if (overlap) new Array[UnsafeRow](ObjectWriter.OverlapChunk) else null
  private var chunked = 0
  private val accounting = if (overlap) new versioned.spark.session.Jobs.InOrder else null

  def write(row: InternalRow): Unit = {
    val projected = unsafe(row)
    if (rows == 0) firstKey = projected.copy()
    if (overlap) {
      val u = projected.copy() // the projection reuses its row; the second thread reads this one later
      chunk(chunked) = u
      chunked += 1
      if (chunked == chunk.length) handOver()
      out.write(u)
    } else {
      account(projected)
      out.write(projected)
    }
    rows += 1
  }

  /** The rows copied since the last hand-over, to the second thread (which takes them after the ones before). */
  private def handOver(): Unit = if (chunked > 0) {
    val (rs, n) = (chunk, chunked)
    accounting.submit { () => var i = 0; while (i < n) { account(rs(i)); i += 1 } }
    chunk = new Array[UnsafeRow](ObjectWriter.OverlapChunk)
    chunked = 0
  }

  /** The row's bytes into the content hash, its values into the statistics. */
  private def account(u: UnsafeRow): Unit = {
    val size = u.getSizeInBytes
    sizeBuf(0) = (size >>> 24).toByte; sizeBuf(1) = (size >>> 16).toByte; sizeBuf(2) = (size >>> 8).toByte; sizeBuf(3) = size.toByte
    md.update(sizeBuf)
    u.getBaseObject match {
      case a: Array[Byte] => md.update(a, (u.getBaseOffset - Platform.BYTE_ARRAY_OFFSET).toInt, size)
      case _ => md.update(u.getBytes)
    }
    var j = 0
    while (j < primitiveCols.length) {
      val i = primitiveCols(j)
      if (u.isNullAt(i)) nulls(i) += 1
      else kinds(i) match {
        case ObjectWriter.LongStat => track(i, u.getLong(i))
        case ObjectWriter.IntStat => track(i, u.getInt(i).toLong)
        case _ =>
          val v = u.getDouble(i) // ordered as java.lang.Double.compare (-0.0 below 0.0, NaN above all), as before
          if (!seen(i)) { dmin(i) = v; dmax(i) = v; seen(i) = true }
          else {
            if (java.lang.Double.compare(v, dmin(i)) < 0) dmin(i) = v
            if (java.lang.Double.compare(dmax(i), v) < 0) dmax(i) = v
          }
      }
      j += 1
    }
    j = 0
    while (j < valueCols.length) {
      val i = valueCols(j)
      if (u.isNullAt(i)) nulls(i) += 1
      else {
        val v = u.get(i, schema(i).dataType)
        if (mins(i) == null || less(v, mins(i))) mins(i) = own(v)
        if (maxs(i) == null || less(maxs(i), v)) maxs(i) = own(v)
      }
      j += 1
    }
  }

  /** The first row written (a copy), used for fragment lower bounds. */
  def firstRow: InternalRow = firstKey
  def rowCount: Long = rows

  private def track(i: Int, v: Long): Unit =
    if (!seen(i)) { lmin(i) = v; lmax(i) = v; seen(i) = true }
    else { if (v < lmin(i)) lmin(i) = v; if (v > lmax(i)) lmax(i) = v }

  /** The primitive minima and maxima as the internal values the other columns hold. */
  private def primitiveStats(): Unit = primitiveCols.filter(seen(_)).foreach { i =>
    kinds(i) match {
      case ObjectWriter.LongStat => mins(i) = java.lang.Long.valueOf(lmin(i)); maxs(i) = java.lang.Long.valueOf(lmax(i))
      case ObjectWriter.IntStat => mins(i) = Integer.valueOf(lmin(i).toInt); maxs(i) = Integer.valueOf(lmax(i).toInt)
      case _ => mins(i) = java.lang.Double.valueOf(dmin(i)); maxs(i) = java.lang.Double.valueOf(dmax(i))
    }
  }

  private def own(v: Any): Any = v match { case s: UTF8String => s.clone(); case o => o }

  private def less(a: Any, b: Any): Boolean = (a, b) match {
    case (x: UTF8String, y: UTF8String) => x.binaryCompare(y) < 0
    case (x: Decimal, y: Decimal) => x.compare(y) < 0
    case (x: java.lang.Double, y: java.lang.Double) => x.compareTo(y) < 0
    case (x: java.lang.Float, y: java.lang.Float) => x.compareTo(y) < 0
    case (x: Comparable[Any] @unchecked, y) => x.compareTo(y) < 0
  }

  def close(): ObjectMeta = {
    if (overlap) { handOver(); accounting.await() }
    out.close()
    primitiveStats()
    val id = Hashing.hex(md.digest())
    try {
      val src = new Path(tmp)
      val fs = src.getFileSystem(sink.hadoopConf)
      val (size, checksum) = ObjectChecksum.compute(fs, src, ObjectWriter.dataEnd(src, sink.hadoopConf))
      val dst = new Path(config.objectUri(id))
      def keep(): Unit = {
        val copy = new Path(target.reusedUri(id))
        fs.mkdirs(copy.getParent)
        if (!fs.rename(src, copy)) fs.delete(src, false)
      }
      if (target.held || fs.exists(dst)) keep()
      else {
        fs.mkdirs(dst.getParent)
        if (!fs.rename(src, dst)) { if (fs.exists(dst)) keep() else throw new java.io.IOException(s"rename $src -> $dst failed") }
      }
      def canon(arr: Array[Any]): Map[String, Any] = statCols.filter(arr(_) != null).map { i =>
        schema(i).name -> Values.fromInternal(new GenericInternalRow(Array(arr(i))), 0, schema(i).dataType)
      }.toMap
      ObjectMeta(id, kind, Seq.empty, rows, size, "parquet", canon(mins), canon(maxs),
        statCols.map(i => schema(i).name -> nulls(i)).toMap, checksum.encode)
    } catch {
      case e: java.io.IOException => throw Errors.storage(s"Could not store object $id under ${config.warehouse}: ${e.getMessage}", e)
    }
  }

  def abort(): Unit = try { if (overlap) accounting.cancel(); out.close() } finally {
    val p = new Path(tmp); p.getFileSystem(sink.hadoopConf).delete(p, false)
  }
}

private[versioned] object ObjectWriter {
  /**
   * Rows under which the driver's writers project rows interpreted: for a few hundred rows, generating a projection's
   * code (tens of milliseconds the first times, several after) costs more than projecting them without it.
   */
  val InterpretedMaxRows = 2048

  /**
   * A projection of `exprs` for a writer of `rows` rows (negative: not known): interpreted under [[InterpretedMaxRows]],
   * generated code for more or an unknown number.
   */
  def projection(exprs: Seq[Expression], rows: Long): UnsafeProjection =
    if (rows >= 0 && rows < InterpretedMaxRows) InterpretedUnsafeProjection.createProjection(exprs) else UnsafeProjection.create(exprs)

  /** Rows per hand-over to the second thread of an `overlap` writer. */
  val OverlapChunk = 4096
  /** Rows from which the driver writes an object with `overlap` (below, the second thread costs more than it saves). */
  val OverlapMinRows = 16384

  /** How a column's min/max is tracked: a primitive long, int or double, or the value itself. */
  private final val LongStat = 1
  private final val IntStat = 2
  private final val DoubleStat = 3
  private final val ValueStat = 0

  /**
   * Where a Parquet file's column data ends: page indexes, bloom filters and the footer follow (the
   * tail its checksum covers separately).
   */
  def dataEnd(path: Path, conf: org.apache.hadoop.conf.Configuration): Long = {
    // read options from `conf`: the options' default constructor loads a new Hadoop Configuration (its XML
    // resources parsed again) for every object written
    val reader = org.apache.parquet.hadoop.ParquetFileReader.open(
      org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(path, conf),
      org.apache.parquet.HadoopReadOptions.builder(conf, path).build())
    try {
      val ends = for {
        block <- scala.jdk.CollectionConverters.ListHasAsScala(reader.getFooter.getBlocks).asScala
        col <- scala.jdk.CollectionConverters.ListHasAsScala(block.getColumns).asScala
      } yield col.getStartingPos + col.getTotalSize
      if (ends.isEmpty) 4L else ends.max // after the leading magic bytes
    } finally reader.close()
  }
}
