package versioned.spark
package write

import java.nio.file.{Files, Path, Paths}
import scala.jdk.CollectionConverters._
import versioned.spark.session.Settings

/** Background compaction threads run at `spark.versioned.compaction.niceness` ([[ThreadNiceness]]; Linux only). */
class ThreadNicenessSuite extends VersionedTestBase {
  import CompactionTesting._

  private def linux = Files.exists(Paths.get("/proc/thread-self"))
  /** (name as the kernel keeps it, niceness) of a thread's `stat` file: the 19th field, the 17th after the name. */
  private def stat(p: Path): (String, Int) = {
    val s = new String(Files.readAllBytes(p))
    (s.substring(s.indexOf('(') + 1, s.lastIndexOf(')')), s.substring(s.lastIndexOf(')') + 2).split(' ')(16).toInt)
  }
  private def niceness(): Int = stat(Paths.get("/proc/thread-self/stat"))._2

  test("a thread given a niceness has it; giving it again changes nothing; the other threads keep theirs") {
    assume(linux, "threads have their own niceness on Linux")
    val mine = niceness()
    var seen = Seq.empty[Int]
    val t = new Thread(() => {
      ThreadNiceness.set(7)
      val first = niceness()
      ThreadNiceness.set(7)
      seen = Seq(first, niceness())
    })
    t.start(); t.join()
    assert(seen == Seq(7, 7))
    assert(niceness() == mine, "the calling thread's niceness is its own")
  }

  test("background compaction runs at the default niceness 10 while commits keep the process's priority") {
    assume(linux, "threads have their own niceness on Linux")
    assert(Settings.of(spark).compactionNiceness == 10)
    val mine = niceness()
    append(frame(schema, rowsOf(0 until 200, 0)), "r.t", "primaryKey" -> "id")
    // enough commit DIFFs after a fragment's SNAP for the policy to consolidate them (tier 1)
    (1 to Settings.of(spark).consolidateAfter).foreach(i => append(frame(schema, rowsOf(Seq(i), i)), "r.t", "upsert" -> "true"))
    awaitCompaction()
    val compactors = Files.list(Paths.get("/proc/self/task")).iterator().asScala.toSeq
      .flatMap(d => scala.util.Try(stat(d.resolve("stat"))).toOption).filter(_._1.startsWith("versioned-compa"))
    assert(compactors.nonEmpty, "a compaction thread ran (its pool keeps it for a minute)")
    assert(compactors.exists(_._2 == 10), s"compaction threads (name, niceness): $compactors")
    assert(niceness() == mine, "the committing thread keeps its priority")
  }
}
