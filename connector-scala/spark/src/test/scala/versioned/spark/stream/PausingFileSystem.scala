package versioned.spark.stream

import java.net.URI
import java.nio.file.{Files, Paths}
import org.apache.hadoop.fs.{FSDataInputStream, FSDataOutputStream, LocalFileSystem, Path, RawLocalFileSystem}
import org.apache.hadoop.fs.permission.FsPermission
import org.apache.hadoop.util.Progressable

/**
 * Local file systems for crash tests in a child JVM ([[StreamCrashChild]]): the first create or open of a path
 * matching the system property `versioned.test.pauseOn` (a regular expression), once the file named by
 * `versioned.test.pauseAfter` exists (if set), writes the file named by `versioned.test.pauseMarker` and then
 * blocks its thread for good, so the process stands still at that point until the test kills it (SIGKILL: no
 * shutdown hook, no cleanup runs). This one is scheme `pausing:` (Spark's checkpoint files take this scheme
 * through Hadoop's FileSystem API); [[PausingLocalFileSystem]] replaces `file:` (warehouse objects).
 */
class PausingFileSystem extends PausingRawFileSystem {
  override def getUri: URI = URI.create("pausing:///")
  override def getScheme: String = "pausing"
}

/** `file:` with pauses (register as `fs.file.impl`): the local file system over a pausing raw one. */
class PausingLocalFileSystem extends LocalFileSystem(new PausingRawFileSystem)

class PausingRawFileSystem extends RawLocalFileSystem {
  private def pauseAt(f: Path): Unit = PausingFileSystem.pauseAt(f)

  override def create(f: Path, permission: FsPermission, overwrite: Boolean, bufferSize: Int, replication: Short,
                      blockSize: Long, progress: Progressable): FSDataOutputStream = {
    pauseAt(f); super.create(f, permission, overwrite, bufferSize, replication, blockSize, progress)
  }
  override def create(f: Path, overwrite: Boolean, bufferSize: Int, replication: Short, blockSize: Long,
                      progress: Progressable): FSDataOutputStream = {
    pauseAt(f); super.create(f, overwrite, bufferSize, replication, blockSize, progress)
  }
  override def open(f: Path, bufferSize: Int): FSDataInputStream = { pauseAt(f); super.open(f, bufferSize) }
}

object PausingFileSystem {
  val PauseOn = "versioned.test.pauseOn"
  val PauseAfter = "versioned.test.pauseAfter"
  val Marker = "versioned.test.pauseMarker"

  private[stream] def pauseAt(f: Path): Unit = Option(System.getProperty(PauseOn)).filter(_.nonEmpty).foreach { pattern =>
    val armed = Option(System.getProperty(PauseAfter)).forall(a => Files.exists(Paths.get(a)))
    if (armed && f.toUri.getPath.matches(pattern)) {
      Files.writeString(Paths.get(System.getProperty(Marker)), f.toUri.getPath)
      while (true) Thread.sleep(60000L)
    }
  }
}
