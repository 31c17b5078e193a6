package versioned.spark.write

import org.apache.hadoop.mapreduce.{Job, TaskAttemptID, TaskType}
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl
import org.apache.spark.TaskContext
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.datasources.{OutputWriter, OutputWriterFactory}
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.types.StructType
import org.apache.spark.util.SerializableConfiguration
import versioned.spark.fs.LocalObjectFileSystem
import versioned.spark.read.LeanJobConf

/**
 * Spark's Parquet writer, prepared on the driver and opened on executors for one file at a time. A file
 * system failure while creating, writing or closing a file (an object store refusing connections, a full
 * disk) is the typed STORAGE_ERROR, as on the driver ([[versioned.core.WarehouseStore]]).
 */
private[versioned] final class ParquetSink(factory: OutputWriterFactory, conf: SerializableConfiguration,
                                           val schema: StructType) extends Serializable {
  def open(path: String): OutputWriter = {
    val tc = Option(TaskContext.get())
    val id = new TaskAttemptID("versioned", 0, TaskType.MAP, tc.map(_.partitionId()).getOrElse(0),
      tc.map(_.attemptNumber()).getOrElse(0))
    val file = path
    val out = ParquetSink.storage("create", file)(factory.newInstance(file, schema, new TaskAttemptContextImpl(conf.value, id)))
    new OutputWriter {
      override def write(row: org.apache.spark.sql.catalyst.InternalRow): Unit = ParquetSink.storage("write", file)(out.write(row))
      override def close(): Unit = ParquetSink.storage("write", file)(out.close())
      override def path(): String = out.path()
    }
  }
  def hadoopConf: org.apache.hadoop.conf.Configuration = conf.value
}

private[versioned] object ParquetSink {
  /** `f`, with an I/O failure on file `path` raised as STORAGE_ERROR (the write it belongs to commits nothing). */
  def storage[T](what: String, path: String)(f: => T): T =
    try f catch {
      case e: java.io.IOException => throw storageError(what, path, e)
      case e: java.io.UncheckedIOException => throw storageError(what, path, e.getCause)
    }

  private def storageError(what: String, path: String, e: Throwable) = versioned.core.Errors.storage(
    s"Could not $what $path: ${e.getClass.getSimpleName}: ${e.getMessage}. Check that the warehouse's storage is " +
      "reachable and writable, then retry. Nothing was committed.", e)

  /** Most rows per Parquet page of an object ([[versioned.core.format.ObjectShape.PageRows]]). */
  val PageRows: Int = versioned.core.format.ObjectShape.PageRows

  /** Parquet format version of data pages (Spark reads both; Parquet's default is v1). */
  val WriterVersion: String = "PARQUET_2_0"

  def prepare(spark: SparkSession, schema: StructType, options: Map[String, String] = Map.empty,
              rowGroupRows: Option[Int] = None): ParquetSink = {
    val job = Job.getInstance(new org.apache.hadoop.conf.Configuration(spark.sparkContext.hadoopConfiguration))
    rowGroupRows.foreach(job.getConfiguration.setInt("parquet.block.row.count.limit", _))
    // page checksums let readers detect damaged pages (see ObjectFiles)
    job.getConfiguration.setBoolean("parquet.page.write-checksum.enabled", true)
    // small pages make the column index fine-grained: a key lookup (diff before-values, merge inputs) reads
    // only the pages that hold its keys, and SNAPs are key-sorted, so their key pages have tight bounds
    job.getConfiguration.setInt("parquet.page.row.count.limit", PageRows)
    // Parquet 2.0 data pages and encodings: a sorted key column is delta-encoded (a few bits per row, not 8
    // bytes), so key scans, lookups and whole-table scans decode less, and writes are smaller and faster
    job.getConfiguration.set("parquet.writer.version", WriterVersion)
    // local files are created without a `chmod` process each
    LocalObjectFileSystem.configure(job.getConfiguration)
    val factory = new ParquetFileFormat().prepareWrite(spark, job, options, schema)
    // Lean: shipped to tasks without every property's sources (one gzip stream each, to write and to read back in
    // every task); a JobConf: each file opened on the driver uses it as it is instead of copying it into a new one
    new ParquetSink(factory, new SerializableConfiguration(new LeanJobConf(job.getConfiguration)), schema)
  }

  /**
   * The writer of objects of `kind`: SNAPs use the session's Parquet codec (what plain Parquet scans
   * are compared with); DIFFs, small and mostly read once before compaction folds them in, use
   * `spark.versioned.write.diffCompression` (zstd, Iceberg's default codec).
   */
  def forObjects(spark: SparkSession, schema: StructType, kind: String): ParquetSink =
    prepare(spark, schema, if (kind == versioned.core.ObjectKind.Diff) diffOptions(spark) else Map.empty)

  /**
   * The writer of shared DIFFs (format 2): DIFF options, and row groups of at most
   * [[versioned.core.format.ObjectShape.SharedRowGroupRows]] rows, so each fragment reads its part of it.
   */
  def forSharedDiffs(spark: SparkSession, schema: StructType): ParquetSink =
    prepare(spark, schema, diffOptions(spark), Some(versioned.core.format.ObjectShape.SharedRowGroupRows))

  private def diffOptions(spark: SparkSession) = Map("compression" -> versioned.spark.session.Warehouses.diffCompression(spark))
}
