package versioned.spark.api

import java.io.ByteArrayOutputStream
import java.util
import java.util.OptionalLong
import scala.jdk.CollectionConverters._
import org.apache.spark.sql.{DataFrame, SparkSession}
import versioned.spark.session.Warehouses
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.connector.catalog.{SupportsRead, Table, TableCapability, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.connector.expressions.aggregate.{Aggregation, CountStar}
import org.apache.spark.sql.connector.read._
import org.apache.spark.sql.types.{LongType, StructField, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.types.UTF8String
import versioned.core.{Engine, LogEntry, Revision, WarehouseConfig}

/**
 * The log as a DataFrame, through public DSv2 API: `spark.read.format(<this class>)` with the warehouse,
 * repository, image and limit as options. The DataFrame is pinned to the image its ref resolved to when it
 * was created (errors surface there), and the log of an image never changes, so it behaves as a snapshot.
 * Rows are read when a query first needs them, only for the columns it uses, and reach the task packed in a
 * few byte arrays rather than as one object per row; `count()` only counts the reachable images.
 */
final class LogSource extends TableProvider {
  override def inferSchema(options: CaseInsensitiveStringMap): StructType = HistoryApi.LogSchema

  override def getTable(schema: StructType, partitioning: Array[Transform], properties: util.Map[String, String]): Table = {
    val p = properties.asScala
    new LogTable(WarehouseConfig(p(LogSource.Warehouse), p(LogSource.Metastore), p(LogSource.DefaultBranch)),
      p(LogSource.Repo), p(LogSource.Image), p(LogSource.Limit).toInt,
      p.get(LogSource.PartitionBytes).map(_.toInt).getOrElse(64 << 20))
  }
}

object LogSource {
  private val Prefix = "versioned.log."
  private[api] val Warehouse = Prefix + "warehouse"
  private[api] val Metastore = Prefix + "metastore"
  private[api] val DefaultBranch = Prefix + "defaultBranch"
  private[api] val Repo = Prefix + "repo"
  private[api] val Image = Prefix + "image"
  private[api] val Limit = Prefix + "limit"
  /** Most bytes of packed rows per input partition (a testing knob). */
  val PartitionBytes: String = Prefix + "partitionBytes"

  /**
   * Images reachable from `ref` (`limit` < 0: all), newest first, as a DataFrame of [[HistoryApi.LogSchema]].
   * Resolves `ref` now: an unknown repository or revision fails here.
   */
  def frame(spark: SparkSession, config: WarehouseConfig, repo: String, ref: Revision, limit: Int,
            extra: Map[String, String] = Map.empty): DataFrame = {
    // no warehouse there: no repository either, and opening the engine would create one
    if (Warehouses.absent(spark, config)) throw new versioned.core.RepositoryNotFoundException(repo)
    val image = Warehouses.engine(spark, config).resolve(repo, ref).hash
    val opts = Map(Warehouse -> config.warehouse, Metastore -> config.metastoreUrl, DefaultBranch -> config.defaultBranch,
      Repo -> repo, Image -> image, Limit -> (if (limit < 0) Int.MaxValue else limit).toString) ++ extra
    spark.read.format(classOf[LogSource].getName).options(opts).load()
  }
}

private final class LogTable(config: WarehouseConfig, repo: String, image: String, limit: Int, partitionBytes: Int)
  extends Table with SupportsRead {
  @volatile private var read: IndexedSeq[LogEntry] = _

  private def history = Warehouses.engine(SparkSession.active, config).history

  /** The log, read when a query first needs its rows, then kept. */
  def entries: IndexedSeq[LogEntry] = {
    if (read == null) synchronized { if (read == null) read = history.logOfImage(repo, image, limit).toIndexedSeq }
    read
  }

  /** How many rows the log has, without reading them if they are not read yet. */
  def size: Long = { val r = read; if (r != null) r.size else history.logSizeOfImage(repo, image, limit) }

  override def name(): String = s"log of $repo at ${image.take(12)}"
  override def schema(): StructType = HistoryApi.LogSchema
  override def capabilities(): util.Set[TableCapability] = util.EnumSet.of(TableCapability.BATCH_READ)

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder =
    new ScanBuilder with SupportsPushDownRequiredColumns with SupportsPushDownAggregates {
      private var required = HistoryApi.LogSchema
      private var counts = 0 // > 0: the query is that many COUNT(*), answered without reading rows
      override def pruneColumns(requiredSchema: StructType): Unit = required = requiredSchema
      override def supportCompletePushDown(aggregation: Aggregation): Boolean = countsOnly(aggregation)
      override def pushAggregation(aggregation: Aggregation): Boolean = {
        counts = if (countsOnly(aggregation)) aggregation.aggregateExpressions.length else 0
        counts > 0
      }
      override def build(): Scan =
        if (counts > 0) new CountScan(name(), size, counts) else new LogScan(name(), entries, required, partitionBytes)
    }

  private def countsOnly(a: Aggregation): Boolean = a.groupByExpressions.isEmpty && a.aggregateExpressions.nonEmpty &&
    a.aggregateExpressions.forall(_.isInstanceOf[CountStar])
}

/** `COUNT(*)` of the log (`df.count()`): one row. */
private final class CountScan(title: String, images: Long, columns: Int) extends LocalScan {
  override def readSchema(): StructType = StructType((1 to columns).map(i => StructField(s"count$i", LongType, nullable = false)))
  override def rows(): Array[InternalRow] = Array(new GenericInternalRow(Array.fill[Any](columns)(images)))
  override def description(): String = s"versioned $title (count: $images)"
}

private final class LogScan(title: String, entries: IndexedSeq[LogEntry], schema: StructType, partitionBytes: Int)
  extends Scan with Batch with SupportsReportStatistics {
  private lazy val partitions: Array[InputPartition] = PackedRows.pack(entries, schema, partitionBytes).toArray

  override def readSchema(): StructType = schema
  override def description(): String = s"versioned $title (${entries.size} rows)"
  override def toBatch: Batch = this
  override def planInputPartitions(): Array[InputPartition] = partitions
  override def createReaderFactory(): PartitionReaderFactory = PackedRows.ReaderFactory
  override def estimateStatistics(): Statistics = new Statistics {
    override def sizeInBytes(): OptionalLong = OptionalLong.of(partitions.map(_.asInstanceOf[PackedRows].data.length.toLong).sum)
    override def numRows(): OptionalLong = OptionalLong.of(entries.size.toLong)
  }
}

/** Rows of one input partition: `UnsafeRow`s back to back in `data`; row i spans `offsets(i)` until `offsets(i + 1)`. */
private final case class PackedRows(numFields: Int, data: Array[Byte], offsets: Array[Int]) extends InputPartition

private object PackedRows {
  private def strings(s: Seq[String]): GenericArrayData = new GenericArrayData(s.map(UTF8String.fromString).toArray[Any])

  private def column(name: String): LogEntry => Any = name match {
    case "hash" => e => UTF8String.fromString(e.image.hash)
    case "parents" => e => strings(e.image.parents)
    case "author" => e => UTF8String.fromString(e.image.author)
    case "message" => e => UTF8String.fromString(e.image.message)
    case "created" => e => Math.multiplyExact(e.image.createdMs, 1000L) // TimestampType: microseconds since epoch
    case "tables_changed" => e => strings(e.tablesChanged)
    case "committer" => e => e.image.actor.map(a => UTF8String.fromString(a.user)).orNull
    case "app_id" => e => e.image.actor.map(a => UTF8String.fromString(a.appId)).orNull
    case "client" => e => e.image.actor.map(a => UTF8String.fromString(a.client)).orNull
  }

  /** The `schema` columns of `entries` in order, cut into partitions of about `maxBytes`. */
  def pack(entries: IndexedSeq[LogEntry], schema: StructType, maxBytes: Int): Seq[PackedRows] = {
    val columns = schema.fieldNames.map(column)
    val toUnsafe = UnsafeProjection.create(schema)
    val row = new GenericInternalRow(columns.length)
    val parts = Seq.newBuilder[PackedRows]
    def newOut() = new ByteArrayOutputStream(math.min(maxBytes.toLong, 64L * entries.size + 64).toInt)
    var out = newOut()
    val offsets = Array.newBuilder[Int]
    val buffer = new Array[Byte](4096)
    def flush(): Unit = {
      offsets += out.size
      parts += PackedRows(columns.length, out.toByteArray, offsets.result())
      out = newOut()
      offsets.clear()
    }
    entries.foreach { e =>
      if (out.size > 0 && out.size >= maxBytes) flush()
      offsets += out.size
      var i = 0
      while (i < columns.length) { row.update(i, columns(i)(e)); i += 1 }
      toUnsafe(row).writeToStream(out, buffer)
    }
    if (entries.nonEmpty) flush()
    parts.result()
  }

  object ReaderFactory extends PartitionReaderFactory {
    override def createReader(partition: InputPartition): PartitionReader[InternalRow] = {
      val rows = partition.asInstanceOf[PackedRows]
      new PartitionReader[InternalRow] {
        private val row = new UnsafeRow(rows.numFields)
        private var i = -1
        override def next(): Boolean = {
          i += 1
          val more = i < rows.offsets.length - 1
          if (more) row.pointTo(rows.data, Platform.BYTE_ARRAY_OFFSET + rows.offsets(i), rows.offsets(i + 1) - rows.offsets(i))
          more
        }
        override def get(): InternalRow = row
        override def close(): Unit = ()
      }
    }
  }
}
