package versioned.spark.safety

import java.util.concurrent.ConcurrentLinkedQueue
import scala.jdk.CollectionConverters._
import org.apache.spark.sql.Row
import versioned.core._
import versioned.spark.VersionedSparkSuite

/**
 * Randomized: retention policies + forced garbage collection + concurrent commits and tags, against an oracle of what
 * must stay readable. Writers commit random upserts and deletes to their own branch (each branch under another policy:
 * keep the last commit, keep the last three, none) and now and then tag their new head, with the product's defaults
 * (background compaction); meanwhile gc with a zero retention period runs again and again. Afterwards, what the
 * policies keep (each branch's newest commits, every tag, the whole history of a branch no policy covers) reads exactly
 * the rows its writer acknowledged, and every other acknowledged version reads those rows or is VERSION_EXPIRED: never
 * other rows, never a missing object. On SQLite, and on PostgreSQL with VERSIONED_TEST_METASTORE.
 */
class RetentionRaceSuite extends VersionedSparkSuite {
  private val seconds = 12
  /** branch -> the last N commits its policy keeps (None: no policy, its whole history). */
  private val keep = Seq("keep1" -> Some(1), "keep3" -> Some(3), "free" -> None)

  test("policies + gc + concurrent commits: what a policy keeps is never lost, nothing else is ever wrong") {
    val s = spark; import s.implicits._
    val base = (1 to 60).map(i => i -> s"v$i").toMap
    write(base.toSeq.toDF("id", "v"), "r.t", "primaryKey" -> "id")
    keep.foreach { case (b, n) =>
      engine.refs.createBranch("r", b, Revision.DefaultBranch)
      n.foreach(k => engine.retention.set("r", RetentionPolicy(b, keepCommits = Some(k))))
    }
    val acknowledged = new ConcurrentLinkedQueue[(String, Map[Int, String])]() // image -> its rows
    val tags = new ConcurrentLinkedQueue[String]()
    val loops = new RacingLoops(keep.size)
    import loops.loop
    keep.zipWithIndex.foreach { case ((branch, _), seed) =>
      val rnd = new scala.util.Random(seed * 7919L + 17)
      var state = base
      var tagged = 0
      loop(s"writer-$branch") {
        val changes = (1 to 1 + rnd.nextInt(6)).map(_ => (1 + rnd.nextInt(80), s"$branch${rnd.nextInt(1000)}")).toMap
        val deletes = changes.keySet.filter(_ => rnd.nextInt(4) == 0)
        val df = changes.toSeq.map { case (k, v) => (k, v, deletes(k)) }.toDF("id", "v", "gone")
        append(df, "r.t", "branch" -> branch, "upsert" -> "true", "deleteColumn" -> "gone")
        state = state ++ changes.filter(kv => !deletes(kv._1)) -- deletes
        val head = engine.branchHeadOption("r", branch).get.hash
        acknowledged.add(head -> state)
        if (rnd.nextInt(5) == 0) {
          tagged += 1
          engine.refs.createTag("r", s"t-$branch-$tagged", Revision.Spec(head))
          tags.add(head)
        }
      }
    }
    val failures = loops.runWithGc(engine, "r", seconds)
    assert(failures.isEmpty, failures.mkString("\n"))
    awaitCompaction()
    engine.maintenance.collectGarbage(Some("r"), 0, force = true, dryRun = false)

    val rows = acknowledged.asScala.toMap
    def reads(image: String): Either[String, Map[Int, String]] =
      try Right(read("r.t", "ref" -> image).collect().map(r => r.getInt(0) -> r.getString(1)).toMap)
      catch { case t: Throwable =>
        Iterator.iterate(t)(_.getCause).takeWhile(_ != null).collectFirst { case v: VersionedException => v.errorClass }
          .filter(_ == ErrorClass.VersionExpired).map(Left(_)).getOrElse(throw t)
      }
    val kept = keep.flatMap { case (b, n) =>
      // the branch is linear and only its writer commits to it: its own commits, newest first (the log lists
      // expired commits too)
      val mine = engine.history.logOfImage("r", engine.branchHeadOption("r", b).get.hash, Int.MaxValue)
        .map(_.image.hash).filter(rows.contains)
      n.fold(mine)(mine.take)
    }.toSet ++ tags.asScala
    assert(kept.size >= keep.size && rows.size > kept.size, s"the run committed too little to test (${rows.size} commits)")
    var expired = 0
    rows.foreach { case (image, expected) =>
      reads(image) match {
        case Right(got) => assert(got == expected, s"version $image reads other rows than its writer acknowledged")
        case Left(_) =>
          assert(!kept(image), s"version $image is kept by a policy or a tag, yet it was expired")
          expired += 1
      }
    }
    assert(expired > 0, "the policies expired nothing")
    info(s"${rows.size} acknowledged commits, ${kept.size} kept by policies and tags, $expired expired")
  }
}
