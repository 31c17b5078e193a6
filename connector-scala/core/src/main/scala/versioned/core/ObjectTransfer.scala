package versioned.core

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

/**
 * One object to copy between warehouses: its metadata (size and checksum, which the copy is checked
 * against), where its bytes are read (`sources`, Hadoop URIs tried in order: the other warehouse's `objects/` or
 * the object's recorded locations), where they go (`target`, under the receiving warehouse's `objects/`)
 * and the file they are written to first (`staging`, in a write lease's staging area of the receiver).
 */
final case class ObjectCopy(meta: ObjectMeta, sources: Seq[String], target: String, staging: String) {
  require(sources.nonEmpty, s"no source for object ${meta.id}")
  def id: String = meta.id
}

object ObjectCopy {
  /** The copy of `meta` (read where `from` keeps it) into warehouse `to`, staged under `lease`. */
  def between(meta: ObjectMeta, from: WarehouseConfig, to: WarehouseConfig, lease: Lease): ObjectCopy =
    ObjectCopy(meta.copy(locations = Nil), meta.urisIn(from), to.objectUri(meta.id),
      to.stagingUri(s"${lease.id}/${ObjectTransfer.Incoming}/${meta.id}.parquet"))
}

/**
 * Copies of objects between warehouses, verified: the bytes are streamed once from the source to a
 * staging file of the target warehouse while their size and CRC-32C are computed, compared with what
 * was recorded when the object was written, and only then renamed into `objects/`. A copy that does not
 * match is [[ObjectCorruptException]] and leaves nothing under `objects/`. An object the target already
 * holds intact (a retried transfer) is not copied again. Spark-free: the Spark module runs batches of
 * copies as tasks ([[ObjectMover]]).
 */
object ObjectTransfer {
  /** Sub-directory of a lease's staging area receiving copied objects. */
  val Incoming = "incoming"

  /**
   * Copies one object; false when the target already held it intact (nothing was copied). Its sources are tried in
   * order: one that lacks it, is unreachable or holds other bytes is passed over for the next; when none gives it,
   * the first one's error is raised.
   */
  def copy(conf: Configuration, c: ObjectCopy): Boolean = {
    val dst = new Path(c.target)
    val dfs = io(c, c.sources.head, "reach the target of")(ObjectStores.fileSystem(dst, conf))
    if (io(c, c.sources.head, "check the target of")(dfs.exists(dst) && intact(dfs, dst, c.meta))) false
    else {
      val failures = Vector.newBuilder[VersionedException]
      val copied = c.sources.iterator.map { source =>
        try { copyFrom(conf, c, source, dfs, dst); true }
        catch { case e: VersionedException if ObjectTransfer.passesOver(e) => failures += e; false }
      }.exists(identity)
      if (!copied) {
        val all = failures.result()
        all.tail.foreach(all.head.addSuppressed)
        throw all.head
      }
      true
    }
  }

  private def copyFrom(conf: Configuration, c: ObjectCopy, source: String, dfs: FileSystem, dst: Path): Unit = {
    val src = new Path(source)
    val tmp = new Path(c.staging)
    val tailOffset = ObjectChecksum.parse(c.meta.checksum).map(_.tailOffset).getOrElse(Long.MaxValue)
    val (len, sum) = io(c, source, "copy") {
      val in = try ObjectStores.fileSystem(src, conf).open(src) catch {
        case e: java.io.FileNotFoundException => throw new ObjectMissingException(c.id,
          s"$source does not exist, so it cannot be copied (the warehouse it comes from lost it)", e)
      }
      try {
        val out = dfs.create(tmp, true)
        try ObjectChecksum.stream(in, Some(out), tailOffset) finally out.close()
      } finally in.close()
    }
    try ObjectChecksum.requireMatch(c.meta, len, Some(sum), s"the copy from $source")
    catch { case e: ObjectCorruptException => quietly(dfs.delete(tmp, false)); throw e }
    io(c, source, "store the copy of") {
      dfs.mkdirs(dst.getParent)
      if (dfs.exists(dst)) dfs.delete(dst, false) // a damaged file no row describes (an interrupted transfer)
      if (!dfs.rename(tmp, dst) && !dfs.exists(dst)) throw new java.io.IOException(s"rename to $dst failed")
    }
  }

  /** Whether the file at `p` is the object `meta` describes (whole-file checksum). */
  private def intact(fs: FileSystem, p: Path, meta: ObjectMeta): Boolean =
    try { ObjectChecksum.verifyWhole(fs, p, meta); true }
    catch { case _: ObjectCorruptException | _: ObjectMissingException => false }

  /** Failures of one source that another source of the same object may not have: missing, damaged, unreachable. */
  def passesOver(e: VersionedException): Boolean = e match {
    case _: ObjectMissingException | _: ObjectCorruptException => true
    case _ => e.errorClass == ErrorClass.StorageError
  }

  private def quietly(f: => Any): Unit = try f catch { case _: java.io.IOException => () }

  private def io[T](c: ObjectCopy, source: String, what: String)(f: => T): T =
    try f catch {
      // a store's own checksum (e.g. the local file system's .crc files) caught damaged bytes
      case e: org.apache.hadoop.fs.ChecksumException => throw new ObjectCorruptException(c.id,
        s"reading it from $source failed the store's checksum (${e.getMessage})", e)
      case e: java.io.IOException => throw Errors.storage(s"Could not $what object ${c.id} ($source -> ${c.target}): " +
        s"${e.getMessage}. Nothing was recorded; retry once the stores are reachable.", e)
    }
}

/**
 * Runs object copies. The Spark module copies in tasks, a batch of objects per task, so objects never pass
 * through the driver; [[SequentialMover]] copies in the calling thread (tests, small transfers). Returns how
 * many objects were copied (those already at their target intact are not).
 */
trait ObjectMover {
  def copy(copies: Seq[ObjectCopy]): Int
}

final class SequentialMover(conf: Configuration) extends ObjectMover {
  override def copy(copies: Seq[ObjectCopy]): Int = copies.count(ObjectTransfer.copy(conf, _))
}
