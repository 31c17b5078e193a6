package versioned.spark.read

import scala.jdk.CollectionConverters._
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.parquet.HadoopReadOptions
import org.apache.parquet.filter2.compat.FilterCompat
import org.apache.parquet.filter2.predicate.{FilterApi, FilterPredicate, Statistics, UserDefinedPredicate}
import org.apache.parquet.hadoop.ParquetFileReader
import org.apache.parquet.hadoop.api.InitContext
import org.apache.parquet.internal.filter2.columnindex.ColumnIndexStore
import org.apache.parquet.io.{ColumnIOFactory, InputFile, SeekableInputStream}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.RebaseDateTime.RebaseSpec
import org.apache.spark.sql.execution.datasources.PartitionedFile
import org.apache.spark.sql.execution.datasources.parquet.ParquetReadSupport
import org.apache.spark.sql.internal.LegacyBehaviorPolicy
import org.apache.spark.sql.types._
import versioned.core.ObjectStores

/**
 * The object reader of a driver key lookup ([[LocalLookup]]): parquet-mr's file reader and Spark's row converter,
 * given the lookup's values as a Parquet filter and the object's verified tail. A lookup of scattered keys opens
 * every fragment for a few rows, so what counts is the fixed cost of one open; Spark's file reader pays, per object,
 * a copy of the whole Hadoop configuration, the filter converted and Java-serialized into it and read back, and the
 * footer and page indexes read from the file again after [[ObjectFiles.open]] has read and verified them. This one
 * reads no configuration per object (one prepared per reader), takes the filter as it is, and serves every read of
 * the tail (footer, column and offset indexes) from the verified bytes: only the pages that may hold the keys are
 * read from the file, each checked against its Parquet checksum as it is decoded (the configuration is
 * [[ObjectFiles.verifying]]'s).
 *
 * Only for what it reads as Spark does without session settings ([[supports]]): an integral first key column (not a
 * date or time) and no date or time columns, whose values Spark may rebase or shift by time zone.
 */
private[read] final class LookupFileReader private (conf: Configuration, readSchema: StructType, filter: FilterCompat.Filter)
  extends ObjectFiles.TailReader {

  override def read(file: PartitionedFile, tail: Option[ParsedTails.Verified]): Iterator[InternalRow] = {
    LookupFileReader.opened.incrementAndGet()
    val path = file.toPath
    val input = new LookupFileReader.TailServed(conf, path, file.fileSize, tail.map(_.bytes))
    val options = HadoopReadOptions.builder(conf, path).withRecordFilter(filter)
    val reader = tail match {
      // an object read whole, with a verified tail: its footer and page indexes as decoded before ([[ParsedTails]])
      case Some(verified) if file.start == 0 && file.length == file.fileSize =>
        val whole = options.build()
        val parsed = ParsedTails.of(verified) {
          val in = input.newStream()
          try ParquetFileReader.readFooter(input, whole, in) finally in.close()
        }
        new LookupFileReader.ParsedReader(input, parsed, whole)
      case _ => new ParquetFileReader(input, options.withRange(file.start, file.start + file.length).build())
    }
    try {
      val meta = reader.getFooter.getFileMetaData
      val fileSchema = meta.getSchema
      val kv = meta.getKeyValueMetaData
      val corrected = RebaseSpec(LegacyBehaviorPolicy.CORRECTED) // no date or time column is read (supports)
      val support = new ParquetReadSupport(None, false, corrected, corrected)
      val context = support.init(new InitContext(conf, kv.asScala.map { case (k, v) => k -> java.util.Set.of(v) }.asJava, fileSchema))
      reader.setRequestedSchema(context.getRequestedSchema)
      val materializer = support.prepareForRead(conf, kv, fileSchema, context)
      val columns = new ColumnIOFactory(meta.getCreatedBy).getColumnIO(context.getRequestedSchema, fileSchema, true)
      // rows as Spark's readers return them: unsafe, reused. With a lookup, only the few rows of its keys are
      // projected: interpreted, which costs nothing to build, where generating the code costs more than projecting them
      val project = if (FilterCompat.isFilteringRequired(filter)) ObjectFiles.interpretedIdentity(readSchema)
        else ObjectFiles.identity(readSchema)
      // the filter selects row groups and pages, and, as the record filter, drops rows of other keys in those pages as
      // their key is decoded (a binary search, [[LookupFileReader.KeySet]]): such rows are never assembled into rows
      new LookupFileReader.Rows(reader, pages => columns.getRecordReader(pages, materializer, filter), project)
    } catch { case e: Throwable => reader.close(); throw e }
  }
}

private[versioned] object LookupFileReader {
  /** Objects opened by these readers in this JVM (tests: which reader a lookup used). */
  val opened = new java.util.concurrent.atomic.AtomicLong()

  /** Whether lookups of `key` reading `schemas` can use this reader. */
  def supports(key: StructField, schemas: StructType*): Boolean =
    integral(key.dataType) && !key.name.contains('.') && schemas.forall(_.fields.forall(f => plain(f.dataType)))

  private def integral(dt: DataType): Boolean = dt match {
    case ByteType | ShortType | IntegerType | LongType => true
    case _ => false
  }

  private def plain(dt: DataType): Boolean = dt match {
    case DateType | TimestampType | TimestampNTZType | _: VariantType | _: CalendarIntervalType => false
    case _: UserDefinedType[_] => false
    case s: StructType => s.fields.forall(f => plain(f.dataType))
    case a: ArrayType => plain(a.elementType)
    case m: MapType => plain(m.keyType) && plain(m.valueType)
    case BooleanType | ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType | BinaryType | NullType => true
    case _: DecimalType | _: StringType => true
    case _ => false
  }

  /**
   * The configuration of readers of rows of `readSchema` from objects of `dataSchema`: a [[ObjectFiles.verifying]]
   * copy of the session's with the settings Spark's Parquet reader gives its row converter (Spark prepares a reader on
   * it, which sets them; that reader is not used), made once for each content of the settings and schemas.
   */
  def conf(spark: org.apache.spark.sql.SparkSession, dataSchema: StructType, readSchema: StructType): Configuration = {
    val sc = spark.sparkContext
    val key = Prepared(sc, ObjectFiles.contentOf(sc.hadoopConfiguration), spark.sessionState.conf.getAllConfs, dataSchema, readSchema)
    Option(prepared.get(key)).getOrElse {
      prepared.keySet.removeIf(k => (k.context ne sc) || k.context.isStopped)
      if (prepared.size >= MaxPrepared) prepared.clear()
      val c = prepare(spark, dataSchema, readSchema)
      prepared.put(key, c)
      c
    }
  }

  /**
   * What a prepared configuration depends on: the context's Hadoop configuration and the session's settings (their
   * content), and the schemas. The configurations readers are given are only read, by any number of threads at once.
   */
  private final case class Prepared(context: org.apache.spark.SparkContext, hadoop: Map[String, String],
                                    session: Map[String, String], dataSchema: StructType, readSchema: StructType)
  /**
   * Configurations [[conf]] prepared, by what they depend on: Spark prepares one by building a reader, which broadcasts
   * a copy of the Hadoop configuration (tens of milliseconds, and a broadcast block left behind, for every lookup of
   * the same table otherwise).
   */
  private val prepared = new java.util.concurrent.ConcurrentHashMap[Prepared, Configuration]()
  private val MaxPrepared = 32

  private def prepare(spark: org.apache.spark.sql.SparkSession, dataSchema: StructType, readSchema: StructType): Configuration = {
    val conf = ObjectFiles.verifyingUnfiltered(spark.sparkContext.hadoopConfiguration)
    new org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat().buildReaderWithPartitionValues(spark, dataSchema,
      new StructType(), readSchema, Nil, Map(org.apache.spark.sql.execution.datasources.FileFormat.OPTION_RETURNING_BATCH -> "false"), conf)
    require(conf.get(ParquetReadSupport.SPARK_ROW_REQUESTED_SCHEMA) == readSchema.json, "Spark prepares the reader's configuration")
    conf
  }

  /**
   * A reader of rows of `readSchema` (with a [[conf]] of it) keeping the rows whose first key column `key` holds one of
   * `lookup`'s values (every row without one).
   */
  def apply(conf: Configuration, readSchema: StructType, key: StructField, lookup: Option[KeyLookup]): LookupFileReader =
    new LookupFileReader(conf, readSchema, lookup.fold(FilterCompat.NOOP)(l =>
      FilterCompat.get(predicate(key, l.values.map(_.asInstanceOf[Long]).toArray)))) // sorted and distinct (KeyLookup)

  /**
   * `key` equal to one of `keys` (sorted, distinct): one predicate that Parquet evaluates on row-group statistics, on the
   * column index (a page is read only when one of the keys lies within its bounds, as precisely as an OR of equalities,
   * where an IN keeps every page between the set's least and greatest values) and on each decoded key.
   */
  private[read] def predicate(key: StructField, keys: Array[Long]): FilterPredicate = {
    require(keys.nonEmpty, "a lookup holds values")
    key.dataType match {
      case LongType => FilterApi.userDefined(FilterApi.longColumn(key.name), new KeySet[java.lang.Long](keys))
      case _ => FilterApi.userDefined(FilterApi.intColumn(key.name), new KeySet[Integer](keys)) // Parquet INT32
    }
  }

  /**
   * A key column's values in a sorted set of keys (canonical longs, [[LookupReaders.key]]), by binary search: a value is
   * kept when the set holds it; a row group or page is dropped when no key lies between its least and greatest values.
   * Nulls are never kept (a key is never null). Only ever used as it is, never negated (inverseCanDrop drops nothing).
   */
  private[read] final class KeySet[T <: Number with Comparable[T]](keys: Array[Long])
    extends UserDefinedPredicate[T] with Serializable {
    override def keep(v: T): Boolean = v != null && java.util.Arrays.binarySearch(keys, v.longValue) >= 0
    override def canDrop(s: Statistics[T]): Boolean = {
      // the first key at or above the least value, if any, is at or below the greatest
      val i = java.util.Arrays.binarySearch(keys, s.getMin.longValue)
      val at = if (i >= 0) i else -i - 1
      !(at < keys.length && keys(at) <= s.getMax.longValue)
    }
    override def inverseCanDrop(s: Statistics[T]): Boolean = false
  }

  /** A file reader of an object whose footer and page indexes are [[ParsedTails]]' (decoded once, then held). */
  private final class ParsedReader(input: InputFile, parsed: ParsedTails.Parsed, options: org.apache.parquet.ParquetReadOptions)
    extends ParquetFileReader(input, parsed.footer, options, input.newStream()) {
    override def getColumnIndexStore(blockIndex: Int): ColumnIndexStore =
      parsed.store(getRowGroups.get(blockIndex).getStartingPos, decoding(blockIndex))
    private def decoding(blockIndex: Int): ColumnIndexStore = super.getColumnIndexStore(blockIndex)
  }

  /**
   * The rows of the row groups a file reader returns, pages and rows filtered by its record filter, projected; closes
   * the reader at the end.
   */
  private final class Rows(reader: ParquetFileReader,
                           records: org.apache.parquet.column.page.PageReadStore => org.apache.parquet.io.RecordReader[InternalRow],
                           project: org.apache.spark.sql.catalyst.expressions.UnsafeProjection)
    extends Iterator[InternalRow] with AutoCloseable {
    private var group: org.apache.parquet.io.RecordReader[InternalRow] = _
    private var left = 0L
    private var current: InternalRow = _
    private var closed = false

    override def hasNext: Boolean = {
      while (current == null && !closed) {
        if (left == 0) {
          val pages = reader.readNextFilteredRowGroup()
          if (pages == null) close()
          else { left = pages.getRowCount; group = records(pages) }
        } else {
          left -= 1
          val r = group.read()
          if (r != null && !group.shouldSkipCurrentRecord()) current = r
        }
      }
      current != null
    }

    override def next(): InternalRow = {
      if (!hasNext) throw new NoSuchElementException
      val r = current
      current = null
      project(r)
    }

    override def close(): Unit = if (!closed) { closed = true; reader.close() }
  }

  /**
   * An object file whose tail (the bytes from `size - tail.length`: page indexes and footer) is served from the bytes
   * [[versioned.core.ObjectChecksum.verifyTail]] read and verified, and whose other bytes are read from the file,
   * opened on the first such read. Without a verified tail (objects written before checksums), every byte is read.
   */
  private final class TailServed(conf: Configuration, path: Path, size: Long, tail: Option[Array[Byte]]) extends InputFile {
    override def getLength: Long = size
    override def newStream(): SeekableInputStream = new SeekableInputStream {
      private val bytes = tail.getOrElse(Array.emptyByteArray)
      private val tailStart = size - bytes.length
      private var pos = 0L
      private var in: org.apache.hadoop.fs.FSDataInputStream = _
      private def file = { if (in == null) in = ObjectStores.objectReads(path, conf).open(path); in }

      override def getPos: Long = pos
      override def seek(newPos: Long): Unit = pos = newPos
      override def read(): Int = {
        val one = new Array[Byte](1)
        if (read(one, 0, 1) <= 0) -1 else one(0) & 0xff
      }
      override def read(b: Array[Byte], off: Int, len: Int): Int =
        if (len == 0) 0
        else if (pos >= size) -1
        else {
          val n = if (pos >= tailStart) {
            val k = math.min(len.toLong, size - pos).toInt
            System.arraycopy(bytes, (pos - tailStart).toInt, b, off, k)
            k
          } else file.read(pos, b, off, math.min(len.toLong, tailStart - pos).toInt)
          if (n > 0) pos += n
          n
        }
      override def readFully(b: Array[Byte]): Unit = readFully(b, 0, b.length)
      override def readFully(b: Array[Byte], off: Int, len: Int): Unit = {
        var done = 0
        while (done < len) {
          val n = read(b, off + done, len - done)
          if (n < 0) throw new java.io.EOFException(s"$path: ${len - done} bytes missing at $pos")
          done += n
        }
      }
      override def read(buf: java.nio.ByteBuffer): Int = {
        val len = buf.remaining()
        if (buf.hasArray) {
          val n = read(buf.array(), buf.arrayOffset() + buf.position(), len)
          if (n > 0) buf.position(buf.position() + n)
          n
        } else {
          val tmp = new Array[Byte](len)
          val n = read(tmp, 0, len)
          if (n > 0) buf.put(tmp, 0, n)
          n
        }
      }
      override def readFully(buf: java.nio.ByteBuffer): Unit =
        while (buf.hasRemaining) if (read(buf) < 0) throw new java.io.EOFException(s"$path: ${buf.remaining()} bytes missing at $pos")
      override def close(): Unit = if (in != null) in.close()
    }
  }
}
