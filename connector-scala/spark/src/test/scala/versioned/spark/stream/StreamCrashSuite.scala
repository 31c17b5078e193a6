package versioned.spark.stream

import java.io.File
import java.lang.management.ManagementFactory
import java.nio.file.{Files, Paths}
import java.util.concurrent.TimeUnit
import java.util.regex.Pattern
import scala.jdk.CollectionConverters._
import org.apache.spark.sql.Row
import versioned.core.Revision
import versioned.spark.VersionedTestBase
import versioned.spark.session.VersionedOptions
import versioned.spark.write.StreamBatches

/**
 * Kill -9 of a streaming query's driver: a child JVM ([[StreamCrashChild]]) streams three input files into a
 * key-less table (a duplicate would show), stands still at a chosen point of micro-batch 1 and is killed with
 * SIGKILL (no shutdown hook runs); a second child restarts from the checkpoint. The table must then equal an
 * oracle fed each input row exactly once, and the branch must have each batch's commit once. Runs on the
 * metastore of the suite's warehouse (`VERSIONED_TEST_METASTORE=postgresql`: PostgreSQL).
 */
class StreamCrashSuite extends VersionedTestBase {
  private val files = 3
  private val perFile = 40

  private def input(): File = {
    val dir = Files.createTempDirectory("versioned-stream-in").toFile
    (0 until files).foreach { f =>
      val lines = (0 until perFile).map(i => s"""{"id": ${f * perFile + i}, "v": "f$f-$i"}""")
      Files.write(new File(dir, s"part-$f.json").toPath, lines.asJava)
    }
    dir
  }

  /** A child driver over `in` and `ckpt`, its output in `out`; `pauseOn`: where it stands still. */
  private def child(in: String, ckpt: String, out: File, pause: Seq[(String, String)]): Process = {
    val java = Paths.get(System.getProperty("java.home"), "bin", "java").toString
    // the test JVM's options (build.sbt's testJavaOptions: among them the JIT's first tier only and the serial
    // collector, which suit a child's few seconds of work on 120 rows on a host of two cores)
    val jvm = ManagementFactory.getRuntimeMXBean.getInputArguments.asScala
      .filterNot(a => a.startsWith("-agentlib") || a.startsWith("-javaagent"))
    val metastore = spark.conf.getOption(VersionedOptions.ConfMetastoreUrl).getOrElse("-")
    val cmd = Seq(java) ++ jvm ++ pause.map { case (k, v) => s"-D$k=$v" } ++ Seq("-cp", System.getProperty("java.class.path"),
      StreamCrashChild.getClass.getName.stripSuffix("$"), warehouse.getAbsolutePath, metastore, in, ckpt)
    new ProcessBuilder(cmd: _*).redirectErrorStream(true).redirectOutput(out).start()
  }

  private def tail(f: File): String = scala.io.Source.fromFile(f).getLines().toSeq.takeRight(40).mkString("\n")

  /**
   * Kills a child where it first creates or opens a path matching `pauseOn` once its checkpoint has batch 1's
   * offsets (`pausing`: the checkpoint through the `pausing:` scheme), restarts it, and checks exactly-once.
   */
  private def crashAndRestart(pauseOn: String, checkpointPaused: Boolean): Unit = {
    val session = spark; import session.implicits._
    write(Seq((-1L, "seed")).toDF("id", "v"), "r.t")
    val in = input()
    val ckpt = Files.createTempDirectory("versioned-stream-ckpt").toFile
    val marker = new File(ckpt.getParentFile, s"${ckpt.getName}.paused")
    val log = File.createTempFile("stream-crash-child", ".log")
    val pause = Seq(PausingFileSystem.PauseOn -> pauseOn, PausingFileSystem.Marker -> marker.getAbsolutePath,
      PausingFileSystem.PauseAfter -> new File(ckpt, "offsets/1").getAbsolutePath)
    val first = child(in.getAbsolutePath, (if (checkpointPaused) "pausing://" else "") + ckpt.getAbsolutePath, log, pause)
    val deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10)
    while (!marker.exists() && first.isAlive && System.nanoTime() < deadline) Thread.sleep(100)
    assert(marker.exists(), s"the child never reached $pauseOn (alive: ${first.isAlive}):\n${tail(log)}")
    first.destroyForcibly() // SIGKILL
    assert(first.waitFor(60, TimeUnit.SECONDS) && first.exitValue() == 137, s"not killed: ${tail(log)}")

    val second = child(in.getAbsolutePath, ckpt.getAbsolutePath, log, Nil)
    assert(second.waitFor(10, TimeUnit.MINUTES), s"the restarted child did not finish:\n${tail(log)}")
    assert(second.exitValue() == 0, s"the restarted child failed:\n${tail(log)}")

    val expected = Row(-1L, "seed") +: (0 until files * perFile).map(i => Row(i.toLong, s"f${i / perFile}-${i % perFile}"))
    assertReads(read("r.t"), expected, s"after a kill at $pauseOn and a restart")
    val branch = engine.defaultBranch("r")
    val batches = engine.history.log("r", Revision.Spec(branch)).flatMap(e => StreamBatches.batchOf(e.image.message))
    assert(batches == Seq(2L, 1L, 0L), s"each batch's commit once, in order: $batches")
    Seq(in, ckpt).foreach(d => org.apache.commons.io.FileUtils.deleteDirectory(d))
    Seq(log, marker).foreach(_.delete())
  }

  test("kill -9 of the driver mid-batch, its tasks staging rows: the restarted query commits each row once") {
    crashAndRestart(s".*${Pattern.quote(warehouse.getAbsolutePath)}/_staging/.*", checkpointPaused = false)
  }

  test("kill -9 of the driver after the commit and before the checkpoint: the replay commits nothing") {
    crashAndRestart(".*/commits/(\\.1\\..*|1)", checkpointPaused = true)
  }
}
