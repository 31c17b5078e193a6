package versioned.core

import java.util.zip.CRC32C
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileSystem, Path}

/**
 * What a reader checks an object file against (docs/FORMAT.md, "Object checksums"): the CRC-32C of the
 * whole file, and the CRC-32C of its tail, the bytes from `tailOffset` (the end of the last column chunk:
 * page indexes, bloom filters and the Parquet footer) to the end. A scan verifies the file size and the
 * tail when it opens an object, and Parquet's page checksums as it decodes each page; `verify` checks
 * the whole file.
 */
final case class ObjectChecksum(fileCrc: Long, tailOffset: Long, tailCrc: Long) {
  def encode: String = f"crc32c:$fileCrc%08x;tail:$tailOffset:$tailCrc%08x"
}

object ObjectChecksum {
  private val Format = """crc32c:([0-9a-f]{8});tail:(\d+):([0-9a-f]{8})""".r

  /** The recorded checksum; None for objects written before checksums (format 1). */
  def parse(s: String): Option[ObjectChecksum] = Option(s).collect {
    case Format(f, off, t) => ObjectChecksum(java.lang.Long.parseLong(f, 16), off.toLong, java.lang.Long.parseLong(t, 16))
  }

  /** The checksum of bytes seen in order (a file read or copied once), with the tail starting at `tailOffset`. */
  final class Running(tailOffset: Long) {
    private val all = new CRC32C()
    private val tail = new CRC32C()
    private var pos = 0L
    def update(buf: Array[Byte], n: Int): Unit = {
      all.update(buf, 0, n)
      val from = math.max(0L, tailOffset - pos)
      if (from < n) tail.update(buf, from.toInt, (n - from).toInt)
      pos += n
    }
    def length: Long = pos
    def result: ObjectChecksum = ObjectChecksum(all.getValue, math.min(tailOffset, pos), tail.getValue)
  }

  /**
   * Streams `in` to `out` (when given) once, returning the size and checksum of the bytes (tail from
   * `tailOffset`). Neither stream is closed.
   */
  def stream(in: java.io.InputStream, out: Option[java.io.OutputStream], tailOffset: Long): (Long, ObjectChecksum) = {
    val sum = new Running(tailOffset)
    val buf = new Array[Byte](1 << 16)
    var n = in.read(buf)
    while (n >= 0) {
      if (n > 0) { sum.update(buf, n); out.foreach(_.write(buf, 0, n)) }
      n = in.read(buf)
    }
    (sum.length, sum.result)
  }

  /** Reads a whole file once: its size and checksum with the tail starting at `tailOffset`. */
  def compute(fs: FileSystem, path: Path, tailOffset: Long): (Long, ObjectChecksum) = {
    val in = fs.open(path)
    try stream(in, None, tailOffset) finally in.close()
  }

  /**
   * Checks a size and whole-file checksum computed from an object's bytes against what was recorded when it
   * was written (objects without a checksum: the size only); `where` names the bytes in the error.
   */
  def requireMatch(meta: ObjectMeta, len: Long, actual: Option[ObjectChecksum], where: String): Unit = {
    if (len != meta.sizeBytes) throw new ObjectCorruptException(meta.id, s"$where has $len bytes, ${meta.sizeBytes} were written")
    for (cs <- parse(meta.checksum); a <- actual)
      if (a.fileCrc != cs.fileCrc) throw new ObjectCorruptException(meta.id, s"the bytes of $where do not match its checksum")
  }

  private def open(fs: FileSystem, path: Path, id: String) =
    try fs.open(path)
    catch { case e: java.io.FileNotFoundException => throw new ObjectMissingException(id, s"$path does not exist", e) }

  /**
   * Checks the size and tail of an object file (cheap: one small read); throws [[ObjectMissingException]]
   * or [[ObjectCorruptException]]. Objects without a recorded checksum are not checked (None). Returns the
   * verified tail (page indexes, footer, footer length and magic), which readers may plan from.
   */
  def verifyTail(fs: FileSystem, path: Path, id: String, size: Long, checksum: String): Option[Array[Byte]] = parse(checksum).map { cs =>
    val len = size - cs.tailOffset
    if (len < 0 || len > Int.MaxValue) throw new ObjectCorruptException(id, s"its recorded tail offset is invalid")
    val buf = new Array[Byte](len.toInt)
    val in = open(fs, path, id)
    try {
      try in.readFully(cs.tailOffset, buf)
      catch { case e: java.io.EOFException => throw new ObjectCorruptException(id,
        s"$path is shorter than the $size bytes written (truncated or replaced)", e) }
      // bytes past the recorded size: the file was appended to or replaced
      val extra = new Array[Byte](1)
      if (in.read(size, extra, 0, 1) > 0) throw new ObjectCorruptException(id,
        s"$path is longer than the $size bytes written (replaced or appended to)")
    } finally in.close()
    val crc = new CRC32C()
    crc.update(buf, 0, buf.length)
    if (crc.getValue != cs.tailCrc) throw new ObjectCorruptException(id,
      s"the footer of $path does not match its checksum (the file was changed or replaced)")
    buf
  }

  /** Reads the whole file: size and full checksum (`verify`). */
  def verifyWhole(fs: FileSystem, path: Path, meta: ObjectMeta): Unit = {
    if (!fs.exists(path)) throw new ObjectMissingException(meta.id, s"$path does not exist")
    parse(meta.checksum) match {
      case None => requireMatch(meta, fs.getFileStatus(path).getLen, None, path.toString)
      case Some(cs) =>
        val (len, actual) = compute(fs, path, cs.tailOffset)
        requireMatch(meta, len, Some(actual), path.toString)
    }
  }

  def fileSystem(uri: String, conf: Configuration): FileSystem = ObjectStores.fileSystem(uri, conf)
}
