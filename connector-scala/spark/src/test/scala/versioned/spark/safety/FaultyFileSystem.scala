package versioned.spark.safety

import java.net.URI
import java.util.concurrent.atomic.{AtomicInteger, AtomicLong}
import org.apache.hadoop.fs.{FSDataInputStream, FSDataOutputStream, Path, RawLocalFileSystem}
import org.apache.hadoop.fs.permission.FsPermission
import org.apache.hadoop.util.Progressable

/**
 * A local file system under scheme `faulty:` (no checksum side files, like an object store) whose Nth
 * mutating or reading operation (create, open, rename, delete, mkdirs), counted from [[Faults.arm]],
 * fails with an IOException, and which records the paths it opens and creates. Register with
 * `spark.hadoop.fs.faulty.impl`. Both creates (with a permission, and without: the one Parquet writers use)
 * are counted and may fail. [[Faults.refuseInTasks]] models an object store that refuses connections to the
 * executors: creates, or writes to created files, in Spark tasks fail with a `java.net.ConnectException`.
 */
class FaultyFileSystem extends RawLocalFileSystem {
  override def getUri: URI = URI.create("faulty:///")
  override def getScheme: String = "faulty"

  override def create(f: Path, permission: FsPermission, overwrite: Boolean, bufferSize: Int, replication: Short,
                      blockSize: Long, progress: Progressable): FSDataOutputStream = {
    Faults.check("create", f); Faults.created.add(f.toUri.getPath -> Thread.currentThread.getName)
    Faults.refusing(super.create(f, permission, overwrite, bufferSize, replication, blockSize, progress))
  }
  override def create(f: Path, overwrite: Boolean, bufferSize: Int, replication: Short, blockSize: Long,
                      progress: Progressable): FSDataOutputStream = {
    Faults.check("create", f); Faults.created.add(f.toUri.getPath -> Thread.currentThread.getName)
    Faults.refusing(super.create(f, overwrite, bufferSize, replication, blockSize, progress))
  }
  override def open(f: Path, bufferSize: Int): FSDataInputStream = {
    Faults.check("open", f); Faults.opened.add(f.toUri.getPath); super.open(f, bufferSize)
  }
  override def rename(src: Path, dst: Path): Boolean = { Faults.check("rename", src); super.rename(src, dst) }
  override def delete(p: Path, recursive: Boolean): Boolean = { Faults.check("delete", p); super.delete(p, recursive) }
  override def mkdirs(p: Path, permission: FsPermission): Boolean = { Faults.check("mkdirs", p); super.mkdirs(p, permission) }
}

object Faults {
  private val count = new AtomicLong()
  private val failAt = new AtomicLong(-1)
  val failures = new AtomicInteger()
  /** Paths opened for reading (every open, faults armed or not), for suites that count what a read touches. */
  val opened = new java.util.concurrent.ConcurrentLinkedQueue[String]()
  /** Paths created, with the thread that created each (every create, faults armed or not), for suites that ask who wrote. */
  val created = new java.util.concurrent.ConcurrentLinkedQueue[(String, String)]()

  /**
   * The kinds of the first [[MaxKinds]] operations since [[arm]], in order: the operation and its path with every
   * number and hash as `#` (`open /tmp/versioned-test#/objects/#/#.parquet`), so that a suite can pick operations
   * to fail that cover each kind.
   */
  val kinds = new java.util.concurrent.ConcurrentLinkedQueue[String]()
  private val MaxKinds = 10000
  private val Numbers = "[0-9a-f]*[0-9][0-9a-f]*".r

  /** The kinds of the operations made since [[arm]]. */
  def kindsSinceArmed: IndexedSeq[String] = { import scala.jdk.CollectionConverters._; kinds.asScala.toIndexedSeq }

  /**
   * Operations to fail out of those of a fault-free run (`kinds`, [[kindsSinceArmed]] after it): the first and the
   * last of each kind, a kind being the operation (open, create, rename, delete, mkdirs) and the role of its path (an
   * object read, a staged file written or moved into the store, a staging area cleaned up ...), and the last
   * operation; not every one, as runs of one kind (the reads of a chain's objects, the creates of a job's tasks)
   * fail the same way.
   */
  def points(kinds: IndexedSeq[String]): Seq[Long] =
    (kinds.indices.groupBy(kinds).values.flatMap(is => Seq(is.head + 1L, is.last + 1L)).toSeq :+ kinds.size.toLong)
      .filter(_ >= 1).distinct.sorted

  /** Counts operations from now; the `n`-th fails (n <= 0: none fails). */
  def arm(n: Long): Unit = {
    count.set(0); failures.set(0); failOn.set(null); kinds.clear(); failAt.set(if (n <= 0) -1 else n)
  }
  /** Counts operations from now; the first `op` on a path containing `pathPart` fails. */
  def armOn(op: String, pathPart: String): Unit = { arm(0); failOn.set(op -> pathPart) }
  def disarm(): Unit = { failAt.set(-1); failOn.set(null) }
  private val failOn = new java.util.concurrent.atomic.AtomicReference[(String, String)](null)
  def operations: Long = count.get()

  /** What Spark tasks are refused: nothing, "create" (file creation) or "write" (writes to created files). */
  private val refused = new java.util.concurrent.atomic.AtomicReference[String]("")
  def refuseInTasks(op: String): Unit = { require(Set("create", "write")(op)); refused.set(op) }
  def stopRefusing(): Unit = { refused.set(""); down.set(false) }

  /** While down, the store refuses every create and open, in tasks and on the driver alike (an outage). */
  private val down = new java.util.concurrent.atomic.AtomicBoolean(false)
  def outage(): Unit = down.set(true)

  private def inTask: Boolean = org.apache.spark.TaskContext.get() != null
  private def refusal(op: String, p: Any) = new java.net.ConnectException(s"Connection refused (injected: $op of $p)")

  /** `out`, whose writes (and flushes) in tasks fail while writes are refused. */
  def refusing(out: FSDataOutputStream): FSDataOutputStream = {
    val checked = new java.io.FilterOutputStream(out) {
      private def check(): Unit = if (inTask && refused.get == "write") throw refusal("write", "a file")
      override def write(b: Int): Unit = { check(); out.write(b) }
      override def write(b: Array[Byte], off: Int, len: Int): Unit = { check(); out.write(b, off, len) }
      override def flush(): Unit = { check(); out.flush() }
    }
    new FSDataOutputStream(checked, null, out.getPos)
  }

  def check(op: String, p: Path): Unit = {
    if (down.get && (op == "create" || op == "open")) throw refusal(op, p)
    if (op == "create" && inTask && refused.get == "create") throw refusal(op, p)
    val kind = s"$op ${Numbers.replaceAllIn(p.toUri.getPath, "#")}"
    val i = synchronized { val i = count.incrementAndGet(); if (i <= MaxKinds) kinds.add(kind); i }
    val on = failOn.get()
    if (i == failAt.get() || (on != null && on._1 == op && p.toString.contains(on._2) && failOn.compareAndSet(on, null))) {
      failures.incrementAndGet()
      throw new java.io.IOException(s"injected fault: $op #$i on $p")
    }
  }
}
