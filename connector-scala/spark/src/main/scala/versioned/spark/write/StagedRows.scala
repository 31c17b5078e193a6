package versioned.spark.write

import java.io.{ByteArrayOutputStream, DataOutputStream}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.connector.write.WriterCommitMessage
import org.apache.spark.sql.types.StructType
import org.apache.spark.unsafe.Platform

/**
 * Rows a staging task kept in memory instead of writing a staging file (small writes): UnsafeRow
 * bytes, each preceded by its size as a long so every row stays 8-byte aligned.
 */
private[versioned] final case class StagedRows(bytes: Array[Byte], rows: Int) extends WriterCommitMessage {
  /** The rows, as views over `bytes`. */
  def unsafeRows(numFields: Int): IndexedSeq[UnsafeRow] = {
    val sizes = java.nio.ByteBuffer.wrap(bytes) // big-endian, as DataOutputStream wrote them
    val out = new Array[UnsafeRow](rows)
    var offset = 0
    var i = 0
    while (i < rows) {
      val size = sizes.getLong(offset).toInt
      val row = new UnsafeRow(numFields)
      row.pointTo(bytes, Platform.BYTE_ARRAY_OFFSET + offset + 8, size)
      out(i) = row
      offset += 8 + size
      i += 1
    }
    scala.collection.immutable.ArraySeq.unsafeWrapArray(out)
  }
}

private[versioned] object StagedRows {
  /**
   * Writes the rows tasks kept in memory to one staging file at `path` (on the driver, through `sink`), for
   * a write that plans from staged files after all; the path, if there were rows.
   */
  def stage(kept: Seq[StagedRows], sink: ParquetSink, path: String): Option[String] =
    if (kept.forall(_.rows == 0)) None
    else {
      val out = sink.open(path)
      try kept.foreach(_.unsafeRows(sink.schema.length).foreach(out.write)) finally out.close()
      Some(path)
    }
}

/** Accumulates rows of `schema` up to `maxRows` rows and `maxBytes` bytes, as one [[StagedRows]] message. */
private[versioned] final class RowBuffer(schema: StructType, maxRows: Long, maxBytes: Long) {
  private lazy val unsafe = UnsafeProjection.create(schema)
  private val buffer = new ByteArrayOutputStream()
  private val out = new DataOutputStream(buffer)
  private val copyBuffer = new Array[Byte](4096)
  private var rows = 0

  /** Adds `row` if it fits within both limits; false (and nothing added) if not. */
  def add(row: InternalRow): Boolean = {
    val u = row match { case u: UnsafeRow => u; case other => unsafe(other) }
    val size = u.getSizeInBytes
    if (rows + 1L > maxRows || buffer.size.toLong + 8 + size > maxBytes) return false
    out.writeLong(size)
    u.writeToStream(out, copyBuffer)
    rows += 1
    true
  }

  def message: StagedRows = { out.flush(); StagedRows(buffer.toByteArray, rows) }
}

/**
 * What one staging task does with its rows: keeps them in memory ([[RowBuffer]], up to `maxRows` rows and
 * `maxBytes` bytes; 0 rows: none) and returns them in its commit message, or, once over that share, writes
 * every row (the ones kept so far first) to one Parquet file at `path` through `sink`.
 */
private[versioned] final class TaskStaging(sink: ParquetSink, path: String, maxRows: Long, maxBytes: Long) {
  private lazy val out = sink.open(path)
  private var kept = if (maxRows > 0) new RowBuffer(sink.schema, maxRows, maxBytes) else null
  private var rows = 0L

  def write(row: InternalRow): Unit = {
    if (kept != null && !kept.add(row)) {
      // over the in-memory share: stage everything in the file from now on
      kept.message.unsafeRows(sink.schema.length).foreach(out.write)
      kept = null
    }
    if (kept == null) out.write(row)
    rows += 1
  }

  /** The kept rows ([[StagedRows]]), or the staged file ([[StagedFile]], closed when it has rows). */
  def commit(): WriterCommitMessage =
    if (kept != null) kept.message
    else { if (rows > 0) out.close(); StagedFile(path, rows) }

  def abort(): Unit = if (kept == null && rows > 0) out.close()
}
