package versioned.spark.write

import java.nio.file.{FileSystems, Files}
import java.nio.file.attribute.PosixFilePermission
import java.nio.file.attribute.PosixFilePermission._
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{LocalFileSystem, Path, RawLocalFileSystem}
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

object LocalObjectFileSystem {
  private val Impl = "fs.file.impl"

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

  /** The raw local file system with permissions set by `java.nio`. */
  final class Raw extends RawLocalFileSystem {
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
