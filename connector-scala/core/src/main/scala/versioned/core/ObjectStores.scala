package versioned.core

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path, UnsupportedFileSystemException}

/**
 * Opening the Hadoop file system of a warehouse, remote or object URI. The one rule for a scheme this JVM
 * has no file system for (`s3a://` without hadoop-aws and the AWS SDK, which pip's pyspark does not ship):
 * [[ObjectStoreUnsupportedException]] naming the helper that installs them, instead of Hadoop's raw
 * `ClassNotFoundException` or `UnsupportedFileSystemException`. Other failures are left to the caller.
 */
object ObjectStores {
  /** How to get s3a support; the message of every OBJECT_STORE_UNSUPPORTED error ends with it. */
  val S3aHelp: String = "For s3a:// install hadoop-aws and the AWS SDK matching Spark's Hadoop with bin/install-s3a-jars " +
    "(or, in Python, configure_spark_with_versioned(builder, s3a=True)), see README \"Object stores (s3a)\"."

  def fileSystem(path: Path, conf: Configuration): FileSystem =
    try path.getFileSystem(conf) catch {
      case e: Exception if missingImplementation(e) => throw unsupported(path, e)
      case e: LinkageError => throw unsupported(path, e) // hadoop-aws is there but the AWS SDK classes are not
    }

  def fileSystem(uri: String, conf: Configuration): FileSystem = fileSystem(new Path(uri), conf)

  /**
   * The file system to read an object's bytes with: [[fileSystem]], but for local files without Hadoop's `.crc`
   * side files. Objects carry their own checksums, which every reader verifies (the tail when it opens an object,
   * each page as it decodes it; docs/FORMAT.md), as on object stores, which have no side files; and through them
   * every positional read (a tail, a page) opened the object and its side file again.
   */
  def objectReads(path: Path, conf: Configuration): FileSystem = fileSystem(path, conf) match {
    case c: org.apache.hadoop.fs.ChecksumFileSystem => c.getRawFileSystem
    case fs => fs
  }

  private def unsupported(path: Path, cause: Throwable) = {
    val scheme = Option(path.toUri.getScheme).getOrElse("file")
    new ObjectStoreUnsupportedException(s"No file system for '$scheme://' is available in this Spark " +
      s"(${rootCause(cause)}), so $path cannot be used. Nothing was changed. $S3aHelp", cause)
  }

  /** Hadoop reports a scheme without an implementation class as either of these, possibly wrapped. */
  private def missingImplementation(e: Throwable): Boolean =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(10).exists {
      case _: UnsupportedFileSystemException | _: ClassNotFoundException | _: LinkageError => true
      case _ => false
    }

  private def rootCause(e: Throwable): String = {
    val root = Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(10).toSeq.last
    s"${root.getClass.getSimpleName}: ${root.getMessage}"
  }
}
