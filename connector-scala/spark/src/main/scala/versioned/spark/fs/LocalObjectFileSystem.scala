package versioned.spark.fs

import java.net.URI
import java.nio.file.{FileSystems, Files}
import java.nio.file.attribute.PosixFilePermission
import java.nio.file.attribute.PosixFilePermission._
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{ChecksumFs, DelegateToFileSystem, FileStatus, FsConstants, FsServerDefaults, LocalFileSystem,
  Path, RawLocalFileSystem}
import org.apache.hadoop.fs.local.LocalConfigKeys
import org.apache.hadoop.fs.permission.{FsAction, FsPermission}
import org.apache.hadoop.io.nativeio.NativeIO

/**
 * Hadoop's local file system (with its checksum side files), setting permissions through Java instead of
 * a process. Without Hadoop's native library (the usual case on a laptop), Hadoop runs `chmod` in a new
 * process for every file and directory it creates: about 5 ms each, two per object (the file and its
 * checksum file), which made a small commit's ten objects cost more to create than to write.
 *
 * Object writers use it for `file:` paths ([[LocalObjectFileSystem.configure]]) unless the session sets its
 * own `fs.file.impl`. Files and directories get the same permissions as with Hadoop's; with the native
 * library loaded, or on a file system without POSIX permissions, Hadoop's own code runs.
 */
final class LocalObjectFileSystem extends LocalFileSystem(new LocalObjectFileSystem.Raw)

/**
 * The same for Hadoop's `FileContext` API (`fs.AbstractFileSystem.file.impl`), through which Spark writes a
 * streaming query's checkpoint: its offset and commit logs create two files (a log file and its checksum file)
 * per micro-batch each, which cost ~15 ms of `chmod` processes per file created, more than the write of a small
 * micro-batch, and varied with the host's load ([[LocalObjectFileSystem.install]]).
 */
final class LocalObjectFs(uri: URI, conf: Configuration) extends ChecksumFs(new LocalObjectFileSystem.RawFs(conf))

object LocalObjectFileSystem {
  private val Impl = "fs.file.impl"
  private val FcImpl = "fs.AbstractFileSystem.file.impl"

  /**
   * Makes a session's Hadoop configuration (`conf`, the SparkContext's) open `file:` paths through the
   * `FileContext` API with [[LocalObjectFs]], for every later user of it (Spark's streaming checkpoints and state
   * stores), unless the session has chosen its own implementation. Files get the same permissions, checksum files
   * and statuses as with Hadoop's; the `FileSystem` API (`fs.file.impl`) is left as it is. Returns whether it
   * changed `conf`.
   */
  def install(conf: Configuration): Boolean = conf.synchronized {
    val change = Option(conf.get(FcImpl)).forall(_ == HadoopFcImpl)
    if (change) conf.set(FcImpl, classOf[LocalObjectFs].getName)
    change
  }

  private val HadoopFcImpl = "org.apache.hadoop.fs.local.LocalFs"

  /**
   * Makes `conf` (a copy owned by a writer) open `file:` paths with this file system. Its instances are not
   * cached (Hadoop's cache is by scheme, not by configuration, and holds the session's own).
   */
  def configure(conf: Configuration): Unit =
    if (conf.get(Impl) == null) {
      conf.set(Impl, classOf[LocalObjectFileSystem].getName)
      conf.setBoolean(s"$Impl.disable.cache", true)
    }

  private lazy val posix = FileSystems.getDefault.supportedFileAttributeViews().contains("posix")

  /** [[Raw]] as a `FileContext` file system, as Hadoop's `RawLocalFs` is its raw local file system. */
  final class RawFs(conf: Configuration)
    extends DelegateToFileSystem(FsConstants.LOCAL_FS_URI, new Raw, conf, FsConstants.LOCAL_FS_URI.getScheme, false) {
    override def getUriDefaultPort: Int = -1
    override def getServerDefaults(f: Path): FsServerDefaults = LocalConfigKeys.getServerDefaults
    @deprecated("as Hadoop's", "") override def getServerDefaults: FsServerDefaults = LocalConfigKeys.getServerDefaults
    override def isValidName(src: String): Boolean = true
  }

  /**
   * The raw local file system with permissions set by `java.nio`, and symbolic links told apart by `java.nio`:
   * Hadoop's asks a `readlink` process about every path whose link status is asked for (each `FileContext`
   * rename asks it for both paths), whether or not its native library is loaded.
   */
  final class Raw extends RawLocalFileSystem {
    override def getFileLinkStatus(f: Path): FileStatus =
      if (Files.isSymbolicLink(pathToFile(f).toPath)) super.getFileLinkStatus(f) else getFileStatus(f)

    override def setPermission(p: Path, permission: FsPermission): Unit =
      if (NativeIO.isAvailable || !posix) super.setPermission(p, permission)
      else Files.setPosixFilePermissions(pathToFile(p).toPath, permissions(permission))
  }

  private def permissions(p: FsPermission): java.util.Set[PosixFilePermission] = {
    val set = java.util.EnumSet.noneOf(classOf[PosixFilePermission])
    def add(a: FsAction, r: PosixFilePermission, w: PosixFilePermission, x: PosixFilePermission): Unit = {
      if (a.implies(FsAction.READ)) set.add(r)
      if (a.implies(FsAction.WRITE)) set.add(w)
      if (a.implies(FsAction.EXECUTE)) set.add(x)
    }
    add(p.getUserAction, OWNER_READ, OWNER_WRITE, OWNER_EXECUTE)
    add(p.getGroupAction, GROUP_READ, GROUP_WRITE, GROUP_EXECUTE)
    add(p.getOtherAction, OTHERS_READ, OTHERS_WRITE, OTHERS_EXECUTE)
    set
  }
}
