package versioned.core

import java.nio.charset.StandardCharsets.UTF_8
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

/** A file under the warehouse root, as garbage collection lists it. */
final case class StoredFile(path: Path, name: String, modifiedMs: Long)

/**
 * The object store side of a warehouse, through Hadoop's FileSystem: the identity marker, object
 * files, and the staging area of write leases (`_staging/<lease>/`).
 */
final class WarehouseStore(config: WarehouseConfig, conf: Configuration) {
  private val root = new Path(config.warehouse)
  lazy val fs: FileSystem = try ObjectStores.fileSystem(root, conf) catch {
    case e: ObjectStoreUnsupportedException => throw e
    case e: Exception => throw Errors.storage(s"Cannot open the warehouse file system for '${config.warehouse}': " +
      s"${e.getMessage}.", e)
  }
  private val marker = new Path(root, WarehouseStore.MarkerPath)

  private def io[T](what: String)(f: => T): T =
    try f catch { case e: java.io.IOException => throw Errors.storage(s"Could not $what under ${config.warehouse}: ${e.getMessage}", e) }

  /** The warehouse id recorded in the store, if any. */
  def readMarker(): Option[String] = io("read the warehouse identity") {
    if (!fs.exists(marker)) None
    else {
      val in = fs.open(marker)
      try Some(new String(in.readAllBytes(), UTF_8).trim).filter(_.nonEmpty) finally in.close()
    }
  }

  /** Writes `id` as the warehouse identity unless one exists; returns the identity the store has afterwards. */
  def createMarker(id: String): String = io("write the warehouse identity") {
    try {
      val out = fs.create(marker, false)
      try out.write(id.getBytes(UTF_8)) finally out.close()
      id
    } catch { case _: org.apache.hadoop.fs.FileAlreadyExistsException => readMarker().getOrElse(id) }
  }

  /** Whether any object file exists (a warehouse in use). */
  def hasObjects: Boolean = listFiles("objects").hasNext

  def objectPath(id: String): Path = new Path(config.objectUri(id))
  def objectExists(id: String): Boolean = io("check an object")(fs.exists(objectPath(id)))

  /** Deletes a file; true if it is gone. */
  def delete(p: Path, recursive: Boolean = false): Boolean = io(s"delete $p")(fs.delete(p, recursive) || !fs.exists(p))

  /**
   * Every file under `objects/` or `_staging/` (recursively, lazily). Directories and files that vanish
   * while listing (writers ending) are skipped; only path and modification time are read, which local
   * file systems give without extra system calls.
   */
  def listFiles(dir: String): Iterator[StoredFile] = {
    // a lease's directory may vanish between being listed and being read (its writer ended): skip it
    def list(d: Path): Iterator[org.apache.hadoop.fs.FileStatus] =
      try fs.listStatus(d).iterator catch {
        case _: java.io.FileNotFoundException => Iterator.empty
        case e: java.io.IOException =>
          if (fs.exists(d)) throw Errors.storage(s"Could not list $d under ${config.warehouse}: ${e.getMessage}", e)
          else Iterator.empty
      }
    def walk(d: Path): Iterator[StoredFile] = list(d).flatMap { st =>
      if (st.isDirectory) walk(st.getPath)
      else if (st.getPath.getName.startsWith(".")) Iterator.empty // checksum side files of local file systems
      else Iterator.single(StoredFile(st.getPath, st.getPath.getName, st.getModificationTime))
    }
    io(s"list $dir")(walk(new Path(root, dir)))
  }

  /** The staging directory of a lease: everything a write stages lives there until it ends. */
  def leaseDir(lease: String): Path = new Path(config.stagingUri(lease))

  /** The copy a writer keeps in its lease's staging area when it finds its object already stored. */
  def reusedCopy(lease: String, id: String): Path = new Path(leaseDir(lease), s"${WarehouseStore.Reused}/$id.parquet")

  /**
   * Moves the copy of object `id` kept by a writer into place; with `replace`, over the file there (a
   * file no metastore row describes). False when there is no such copy.
   */
  def restore(lease: String, id: String, replace: Boolean): Boolean = io(s"restore object $id") {
    val copy = reusedCopy(lease, id)
    val dst = objectPath(id)
    fs.exists(copy) && {
      fs.mkdirs(dst.getParent)
      if (replace) fs.delete(dst, false)
      fs.rename(copy, dst) || fs.exists(dst)
    }
  }
}

object WarehouseStore {
  /** File holding the warehouse id; the metastore records the same id (vc_meta `warehouse_id`). */
  val MarkerPath = "_versioned/warehouse-id"
  /** Sub-directory of a lease's staging area with copies of objects that were found already stored. */
  val Reused = "reused"
}
