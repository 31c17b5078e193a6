package versioned.spark.read

import scala.util.control.NonFatal
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.paths.SparkPath
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection}
import org.apache.spark.sql.execution.datasources.PartitionedFile
import org.apache.spark.sql.types.StructType
import versioned.core.{Errors, ObjectChecksum, ObjectStores, ObjectCorruptException, ObjectMissingException, ObjectTransfer,
  VersionedException}

/**
 * Opening whole objects with a Parquet file reader prepared on the driver (scans and DIFF consolidation).
 * Every object is verified as it is read: its size and tail (page indexes and footer) against the
 * checksum recorded when it was written, when it is opened; each page against its Parquet checksum as
 * it is decoded (readers are built with [[verifying]]). A missing or damaged object is an
 * [[ObjectMissingException]] or [[ObjectCorruptException]] naming it; no unverified row is returned.
 */
private[versioned] object ObjectFiles {
  type Reader = PartitionedFile => Iterator[InternalRow]

  /** A reader that plans from the object's tail [[open]] has read and verified (None: no recorded checksum). */
  trait TailReader extends Reader {
    def read(file: PartitionedFile, tail: Option[ParsedTails.Verified]): Iterator[InternalRow]
    override def apply(file: PartitionedFile): Iterator[InternalRow] = read(file, None)
  }

  /**
   * A copy of `conf` whose Parquet readers verify page checksums (and read without Hadoop vectored IO), cheap to
   * broadcast ([[LeanConfiguration]]).
   */
  def verifying(conf: Configuration): Configuration = verifyingAs(new LeanConfiguration(conf))

  /**
   * [[verifying]] for a reader that pushes no filter down, which then opens each object without copying the
   * configuration ([[LeanJobConf]]).
   */
  def verifyingUnfiltered(conf: Configuration): Configuration = verifyingAs(new LeanJobConf(conf))

  private def verifyingAs(c: Configuration): Configuration = {
    c.setBoolean("parquet.page.verify-checksum.enabled", true)
    // Hadoop's vectored reads open an asynchronous channel (threads) per call on local files: a key lookup,
    // which reads many small page ranges, spent most of its time starting threads; full scans are as fast without
    c.setBoolean("parquet.hadoop.vectored.io.enabled", false)
    c
  }

  private var broadcast: Option[(org.apache.spark.SparkContext, Map[String, String],
    org.apache.spark.broadcast.Broadcast[org.apache.spark.util.SerializableConfiguration])] = None

  /**
   * The [[verifying]] copy of the SparkContext's Hadoop configuration, broadcast for executors to open and
   * verify objects: one broadcast per SparkContext and content of that configuration, reused by the reads that
   * follow (broadcasting a whole Hadoop configuration costs milliseconds; a key lookup is not much more).
   */
  def verifyingBroadcast(sc: org.apache.spark.SparkContext): org.apache.spark.broadcast.Broadcast[org.apache.spark.util.SerializableConfiguration] = {
    // the content of the context's configuration decides (the verifying copy adds the same settings to any): the copy,
    // ~1,100 properties, is made only for a new broadcast
    val content = contentOf(sc.hadoopConfiguration)
    synchronized {
      broadcast match {
        case Some((c, m, b)) if (c eq sc) && !sc.isStopped && m == content => b
        case _ =>
          val b = sc.broadcast(new org.apache.spark.util.SerializableConfiguration(verifying(sc.hadoopConfiguration)))
          broadcast = Some((sc, content, b))
          b
      }
    }
  }

  /** Every property of `conf` with its value: what decides whether something prepared from it can be reused. */
  def contentOf(conf: Configuration): Map[String, String] =
    scala.jdk.CollectionConverters.IteratorHasAsScala(conf.iterator()).asScala.map(e => e.getKey -> e.getValue).toMap

  def open(read: Reader, located: ObjectFile, conf: Configuration): Iterator[InternalRow] = {
    val (f, tail) = reachable(located, conf)
    // a shared object read within a fragment's bounds: only the row groups that may hold its keys
    val (start, end) = (for { b <- f.bounds; t <- tail; span <- guarded(f)(RowGroupSpan.of(t, b, conf)) } yield span)
      .getOrElse((0L, f.size))
    if (end <= start) return Iterator.empty
    val file = PartitionedFile(InternalRow.empty, SparkPath.fromUrlString(f.uri), start, end - start, Array.empty[String], 0L,
      f.size, Map.empty)
    val rows = guarded(f)(read match {
      case r: TailReader => r.read(file, tail.map(ParsedTails.Verified(_, s"${f.id}/${f.checksum}")))
      case r => r(file)
    })
    // columnar readers hand out batches through the same iterator type: stay generic
    val checked = new Checked[Any](f, rows.asInstanceOf[Iterator[Any]]).asInstanceOf[Iterator[InternalRow]]
    f.bounds.fold(checked)(b => new Within(checked, b))
  }

  /**
   * The object at the first of its places ([[ObjectFile.uri]], then its alternates) where it is there whole, with its
   * tail read and verified there (None: no recorded checksum). A place that lacks the object, cannot be reached or
   * holds other bytes is passed over for the next; when none holds it, the first one's error is raised.
   */
  private def reachable(f: ObjectFile, conf: Configuration): (ObjectFile, Option[Array[Byte]]) = {
    val places = (f.uri +: f.alternates).map(u => f.copy(uri = u, alternates = Nil))
    // without a recorded checksum the tail is not read: where there is another place, look before choosing this one
    def at(place: ObjectFile): (ObjectFile, Option[Array[Byte]]) = guarded(place) {
      val path = new Path(place.uri)
      val fs = ObjectStores.objectReads(path, conf)
      val tail = ObjectChecksum.verifyTail(fs, path, place.id, place.size, place.checksum)
      if (tail.isEmpty && places.size > 1 && !fs.exists(path)) throw new java.io.FileNotFoundException(s"${place.uri} does not exist")
      (place, tail)
    }
    if (places.size == 1) at(places.head)
    else {
      val failures = Vector.newBuilder[VersionedException]
      places.iterator.map { p =>
        try Some(at(p)) catch { case e: VersionedException if ObjectTransfer.passesOver(e) => failures += e; None }
      }.collectFirst { case Some(found) => found }.getOrElse {
        val all = failures.result()
        all.tail.foreach(all.head.addSuppressed)
        throw all.head
      }
    }
  }

  /**
   * Columnar batches of an object (a reader built to return batches): only for objects read whole, since the read
   * rule restricts rows ([[FragmentBounds]]); scans read fragments with such objects as rows.
   */
  def openBatches(read: Reader, f: ObjectFile, conf: Configuration): Iterator[org.apache.spark.sql.vectorized.ColumnarBatch] = {
    require(f.bounds.isEmpty, s"object ${f.id} is read within its fragment's bounds, as rows")
    open(read, f, conf).asInstanceOf[Iterator[Any]].map(_.asInstanceOf[org.apache.spark.sql.vectorized.ColumnarBatch])
  }

  /** Identity projection of rows of `schema` into unsafe rows (to copy rows a reader reuses). */
  def identity(schema: StructType): UnsafeProjection = UnsafeProjection.create(columns(schema))

  /** [[identity]], interpreted: nothing generated or compiled to build it, for a few rows. */
  def interpretedIdentity(schema: StructType): UnsafeProjection =
    org.apache.spark.sql.catalyst.expressions.InterpretedUnsafeProjection.createProjection(columns(schema))

  /** Every column of rows of `schema`, in order. */
  private def columns(schema: StructType) =
    schema.fields.toSeq.zipWithIndex.map { case (f, o) => BoundReference(o, f.dataType, f.nullable) }

  /** Every row of an object, copied through `copy` (an [[identity]] of the rows `read` produces). */
  def load(read: Reader, f: ObjectFile, copy: UnsafeProjection, conf: Configuration): Array[InternalRow] = {
    val it = open(read, f, conf)
    try it.map(r => copy(r).copy(): InternalRow).toArray finally close(Seq(it))
  }

  /** Shared objects [[SharedLoads]] loaded whole in this JVM (tests: an object shared by fragments is read once). */
  val sharedLoaded = new java.util.concurrent.atomic.AtomicLong()

  /**
   * Objects shared by fragments, each read once for one computation on the driver over many fragments. One commit of
   * scattered keys writes one DIFF for every fragment it changes, and each fragment reads it within its bounds
   * ([[FragmentBounds]]): a computation over those fragments would open it once per fragment, and an open costs far
   * more than taking a few rows. Here an object read within bounds, of at most `maxRows` rows, is loaded whole on
   * its first read (verified as any read), and each read takes its rows within its bounds from that copy. Larger
   * objects, and objects read whole, are read as usual. Safe to use from several threads.
   */
  final class SharedLoads(maxRows: Long) {
    private val loaded = new java.util.concurrent.ConcurrentHashMap[String, Array[InternalRow]]()

    /** The rows of `f` as [[ObjectFiles.load]] reads them with `read` and `copy`. */
    def load(read: Reader, f: ObjectFile, copy: => UnsafeProjection, conf: Configuration): Array[InternalRow] =
      rows(read, f, copy, conf).getOrElse(ObjectFiles.load(read, f, copy, conf))

    /**
     * The rows of `f` (copied through `copy`, an [[identity]] of the rows `read` produces) taken from the whole copy of
     * its object, when it is a shared object this memo holds or loads; None for the others.
     */
    def rows(read: Reader, f: ObjectFile, copy: => UnsafeProjection, conf: Configuration): Option[Array[InternalRow]] =
      f.bounds.filter(_ => f.rows <= maxRows).map { b =>
        val whole = loaded.computeIfAbsent(f.uri, _ => {
          sharedLoaded.incrementAndGet()
          ObjectFiles.load(read, f.copy(bounds = None), copy, conf)
        })
        b.rule.restrict(whole.iterator).toArray
      }
  }

  def close(its: Seq[Iterator[_]]): Unit = its.foreach { case c: AutoCloseable => c.close(); case _ => () }

  /** Failures while reading an object, as typed errors naming it. */
  private[read] def guarded[T](f: ObjectFile)(body: => T): T =
    try body catch {
      case e: VersionedException => throw e
      case e: InterruptedException => throw e
      case e: org.apache.spark.TaskKilledException => throw e
      case e: java.io.FileNotFoundException => throw new ObjectMissingException(f.id, s"${f.uri} does not exist", e)
      case e: java.io.IOException if !looksCorrupt(e) =>
        throw Errors.storage(s"Could not read object ${f.id} (${f.uri}): ${e.getMessage}", e)
      case NonFatal(e) => throw new ObjectCorruptException(f.id, s"${f.uri} cannot be decoded (${e.getClass.getSimpleName}: " +
        s"${Option(e.getMessage).getOrElse("").take(300)})", e)
    }

  /**
   * I/O errors that mean damaged bytes rather than an unreachable store: an early end of the object, or a message
   * about checksums, magic numbers or Parquet structures. The words are looked for in the message with its paths and
   * URIs taken out, since every object's name ends in `.parquet` and a store's own errors (a refused or reset
   * connection) name the object they were reading.
   */
  private[spark] def looksCorrupt(e: java.io.IOException): Boolean = e.isInstanceOf[java.io.EOFException] ||
    Option(e.getMessage).map(withoutPaths(_).toLowerCase).exists(m => CorruptionWords.exists(m.contains))

  private val CorruptionWords = Seq("checksum", "crc", "corrupt", "magic", "footer", "parquet")
  private val PathLike = """[^\s()\[\]{},;'"]*[/\\][^\s()\[\]{},;'"]*""".r

  /** `message` with every token that holds a path separator (a path or a URI) removed. */
  private[spark] def withoutPaths(message: String): String = PathLike.replaceAllIn(message, "")

  /** The rows (key columns first) of an object within the bounds of the fragment it is read in; closes the object. */
  private final class Within(rows: Iterator[InternalRow], b: FragmentBounds) extends Iterator[InternalRow] with AutoCloseable {
    private val within = b.rule.restrict(rows)
    override def hasNext: Boolean = within.hasNext
    override def next(): InternalRow = within.next()
    override def close(): Unit = ObjectFiles.close(Seq(rows))
  }

  /** Rows of one object, with read failures turned into typed errors. */
  private final class Checked[T](f: ObjectFile, it: Iterator[T]) extends Iterator[T] with AutoCloseable {
    override def hasNext: Boolean = guarded(f)(it.hasNext)
    override def next(): T = guarded(f)(it.next())
    override def close(): Unit = it match { case c: AutoCloseable => c.close(); case _ => () }
  }
}
