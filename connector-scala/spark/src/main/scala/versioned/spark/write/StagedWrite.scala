package versioned.spark.write

import versioned.core.format.WriteMode

import java.io.{ByteArrayOutputStream, DataOutputStream}
import java.util.UUID
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StructType}
import org.apache.spark.unsafe.Platform
import versioned.spark.session.TableHandle
import versioned.spark.session.Warehouses

/** What each write task staged: one Parquet file and its row count. */
private[versioned] final case class StagedFile(path: String, rows: Long) extends WriterCommitMessage

/**
 * DSv2 write: tasks stage incoming rows as plain Parquet; on commit the driver runs the
 * [[CommitPlanner]] over the staged data (validation, change computation, object writes) and records
 * exactly one image. Staging files are removed afterwards, whatever the outcome.
 *
 * Small appends to a keyed table (upserts, and inserts of up to [[versioned.spark.read.LocalLookup.MaxKeys]] rows):
 * tasks keep their share of `spark.versioned.write.localCommitMaxRows` rows (and of
 * `localCommitMaxBytes`) in memory and return them in their commit message; when every task did, the
 * driver commits them itself ([[LocalCommit]]) with no further Spark job. Otherwise rows kept in memory
 * are staged as one more Parquet file and the commit runs as usual.
 */
private[versioned] final class StagedWrite(table: TableHandle, req: WriteRequest, schema: StructType)
  extends Write with BatchWrite {
  /** The write lease, opened before tasks stage rows (its staging area holds them) and closed when the write ends. */
  private val lease = new WriteLease(table, req.ident.repo, "write")
  private def stagingDir = lease.stagingDir
  @volatile private var localMaxRows = 0L
  private lazy val sink = ParquetSink.prepare(SparkSession.active, schema)

  override def toBatch: BatchWrite = lease.batch(this)

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory = {
    val spark = SparkSession.active
    // appends to a keyed table can be committed by the driver (the kernel's CommitPath.LocalAppend)
    localMaxRows = if (table.snapshot.exists(_.layout.hidden)) 0L
      else LocalCommit.maxKeptRows(req, Warehouses.localCommitMaxRows(spark))
    val tasks = math.max(1, info.numPartitions())
    val taskRows = if (localMaxRows <= 0) 0L else (localMaxRows + tasks - 1) / tasks
    new StagingWriterFactory(sink, stagingDir, taskRows, Warehouses.localCommitMaxBytes(spark) / tasks)
  }

  override def commit(messages: Array[WriterCommitMessage]): Unit = commitAs(messages, req)

  /**
   * The commit of the staged rows as `request` (this write's request with what is known only at commit: a
   * stream's batch, given by the streaming sink); the commit it made or found, recorded.
   */
  def commitAs(messages: Array[WriterCommitMessage], request: WriteRequest): Unit = try {
    val req = request
    val kept = messages.collect { case r: StagedRows => r }.toIndexedSeq
    val files = messages.collect { case f: StagedFile if f.rows > 0 => f.path }.toIndexedSeq
    val input =
      if (localMaxRows > 0 && files.isEmpty && kept.map(_.rows.toLong).sum <= localMaxRows) new LocalInput(kept)
      else StagedInput(frame(files ++ stage(kept)))
    req.deferred match {
      case Some(handler) => handler(req, input) // a transaction's operation: planned on its view, not committed
      case None => Commits.record(CommitPlanner.commit(table.engine, req, input, Some(lease.get)), req.writeId)
    }
  } finally lease.close()

  override def abort(messages: Array[WriterCommitMessage]): Unit = lease.close()

  private def frame(files: Seq[String]): DataFrame = {
    val spark = SparkSession.active
    if (files.isEmpty) spark.createDataFrame(spark.sparkContext.emptyRDD[org.apache.spark.sql.Row], schema)
    else spark.read.schema(schema).parquet(files: _*)
  }

  /** Writes rows that tasks kept in memory to one staging file on the driver; its path, if any rows. */
  private def stage(kept: Seq[StagedRows]): Seq[String] =
    StagedRows.stage(kept, sink, s"$stagingDir/driver-${UUID.randomUUID()}.parquet").toSeq

  /** Rows on the driver; as a DataFrame (for the distributed path) they are staged first. */
  private final class LocalInput(kept: Seq[StagedRows]) extends StagedInput {
    // what the staged Parquet read would give: every column nullable
    override val schema: StructType = StagedWrite.nullable(StagedWrite.this.schema).asInstanceOf[StructType]
    // once: the commit asks for them more than once (which path, then the commit itself)
    override lazy val localRows: Option[IndexedSeq[InternalRow]] =
      Some(kept.flatMap(_.unsafeRows(schema.length)).toIndexedSeq)
    override lazy val frame: DataFrame = StagedWrite.this.frame(stage(kept))
  }
}

/**
 * The lease of a DSv2 write, opened on first use (when Spark asks for the writer factory) and closed,
 * with its staging files, when the write commits or aborts. Closing never throws: a write that
 * committed is reported as committed. The write's Spark jobs are named from when Spark asks for the batch
 * write ([[batch]]) until it closes.
 */
private[versioned] final class WriteLease(table: TableHandle, repo: String, purpose: String) {
  private val jobs = new versioned.spark.session.Jobs.WriteJobs(s"$purpose ${table.ident}")
  /** `write`, its jobs named from now on (Spark asks for the batch write right before it runs them). */
  def batch[W](write: W): W = { jobs.begin(); write }
  @volatile private var lease: Option[versioned.core.Lease] = None
  def get: versioned.core.Lease = synchronized {
    if (lease.isEmpty) lease = Some(table.engine.leases.open(repo, purpose))
    lease.get
  }
  def stagingDir: String = s"${table.engine.store.leaseDir(get.id)}/writes"
  def close(): Unit = synchronized { try lease.foreach(table.engine.leases.close) finally jobs.end(); lease = None }
}

/**
 * The commit a DataFrame write made, for callers that must return it (a DSv2 write returns nothing):
 * Spark commits a batch write on the thread that runs the write action, so the result is kept per thread.
 * It is also kept per session (the newest commit a session's writes made), and per write id (the write
 * option `writeId`), for clients that cannot share the writer's thread: a Spark Connect client gives its
 * write an id and asks for that write's commit with `CALL <catalog>.system.last_commit(write_id => ...)`.
 * Commits by write id are kept until asked for, at most [[MaxById]] of them (the oldest go first).
 */
private[versioned] object Commits {
  private val last = new ThreadLocal[versioned.core.CommitResult]()
  private val bySession = java.util.Collections.synchronizedMap(
    new java.util.WeakHashMap[org.apache.spark.sql.SparkSession, versioned.core.CommitResult]())

  /** Most commits kept by write id that nobody asked for yet. */
  val MaxById = 10000
  private val byId = new java.util.LinkedHashMap[String, versioned.core.CommitResult]() {
    override def removeEldestEntry(e: java.util.Map.Entry[String, versioned.core.CommitResult]): Boolean = size() > MaxById
  }

  def record(r: versioned.core.CommitResult, writeId: Option[String]): Unit = {
    last.set(r)
    org.apache.spark.sql.SparkSession.getActiveSession.foreach(s => bySession.put(s, r))
    writeId.foreach(id => byId.synchronized(byId.put(id, r)))
  }

  /** The commit of the write with id `writeId`, once (it is forgotten then), if it made one. */
  def take(writeId: String): Option[versioned.core.CommitResult] = byId.synchronized(Option(byId.remove(writeId)))

  /** The newest commit made by a write of `session` in this JVM, if any. */
  def lastOf(session: org.apache.spark.sql.SparkSession): Option[versioned.core.CommitResult] =
    Option(bySession.get(session))

  /** Runs `write` and returns the commit it recorded on this thread, if any. */
  def of(write: => Unit): Option[versioned.core.CommitResult] = {
    last.remove()
    try { write; Option(last.get()) } finally last.remove()
  }
}

private[versioned] object StagedWrite {
  /** `dt` with every field, element and value nullable (as Spark's file sources read a given schema). */
  def nullable(dt: DataType): DataType = dt match {
    case s: StructType => StructType(s.fields.map(f => f.copy(dataType = nullable(f.dataType), nullable = true)))
    case a: ArrayType => ArrayType(nullable(a.elementType), containsNull = true)
    case m: MapType => MapType(nullable(m.keyType), nullable(m.valueType), valueContainsNull = true)
    case other => other
  }
}

/** Tasks keep up to `maxRows` rows and `maxBytes` bytes in memory (0: none), else stage a Parquet file. */
private[versioned] final class StagingWriterFactory(sink: ParquetSink, dir: String, maxRows: Long, maxBytes: Long)
  extends DataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
    new StagingWriter(sink, s"$dir/part-$partitionId-$taskId-${UUID.randomUUID()}.parquet", maxRows, maxBytes)
}

private[versioned] final class StagingWriter(sink: ParquetSink, path: String, maxRows: Long, maxBytes: Long)
  extends DataWriter[InternalRow] {
  private val staging = new TaskStaging(sink, path, maxRows, maxBytes)

  override def write(row: InternalRow): Unit = staging.write(row)
  override def commit(): WriterCommitMessage = staging.commit()
  override def abort(): Unit = staging.abort()
  override def close(): Unit = ()
}

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
