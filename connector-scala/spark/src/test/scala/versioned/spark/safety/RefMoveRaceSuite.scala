package versioned.spark.safety

import scala.jdk.CollectionConverters._
import versioned.core._
import versioned.spark.VersionedSparkSuite

/**
 * Randomized: ref moves to OLD images (a reset, a tag or branch created from an old commit, a branch restored from a
 * reflog entry) racing gc's expiry of those images (docs/SAFETY.md, "Retention policies"). A writer commits to a branch
 * whose policy keeps only its head, so its older commits expire while a mover points refs at them and forced gc runs
 * again and again. Every move either lands on an image gc keeps from then on, or is VERSION_EXPIRED and moves
 * nothing; afterwards every ref reads exactly the rows acknowledged for its image. On SQLite, and on PostgreSQL
 * (READ COMMITTED) with VERSIONED_TEST_METASTORE, where the move and the expiry are serialized by the generation lock.
 */
class RefMoveRaceSuite extends VersionedSparkSuite {
  private val seconds = 12

  test("resets, tags and restores to old images racing gc's expiry: each lands on a kept image or is VERSION_EXPIRED") {
    val s = spark; import s.implicits._
    write((1 to 40).map(i => i -> s"v$i").toDF("id", "v"), "r.t", "primaryKey" -> "id")
    engine.refs.createBranch("r", "hot", Revision.DefaultBranch)
    engine.refs.createBranch("r", "back", Revision.DefaultBranch)
    engine.retention.set("r", RetentionPolicy("hot", keepCommits = Some(1)))
    engine.retention.set("r", RetentionPolicy("back", keepCommits = Some(1)))
    val acknowledged = new java.util.concurrent.ConcurrentHashMap[String, Map[Int, String]]()
    acknowledged.put(engine.branchHeadOption("r", "hot").get.hash, (1 to 40).map(i => i -> s"v$i").toMap)
    val loops = new RacingLoops(2)
    import loops.loop
    def expired(t: Throwable): Boolean = Iterator.iterate(t)(_.getCause).takeWhile(_ != null)
      .exists { case v: VersionedException => v.errorClass == ErrorClass.VersionExpired; case _ => false }
    val (landed, refused) = (new java.util.concurrent.atomic.AtomicInteger, new java.util.concurrent.atomic.AtomicInteger)

    val wrnd = new scala.util.Random(7)
    var state = (1 to 40).map(i => i -> s"v$i").toMap
    loop("writer") {
      val changes = (1 to 1 + wrnd.nextInt(4)).map(_ => (1 + wrnd.nextInt(60), s"h${wrnd.nextInt(1000)}")).toMap
      append(changes.toSeq.toDF("id", "v"), "r.t", "branch" -> "hot", "upsert" -> "true")
      state = state ++ changes
      acknowledged.put(engine.branchHeadOption("r", "hot").get.hash, state)
    }
    val mrnd = new scala.util.Random(11)
    var n = 0
    loop("mover") {
      // an older commit of hot (the writer has moved on from it, so its policy no longer keeps it)
      val head = engine.branchHeadOption("r", "hot").get.hash
      val old = acknowledged.keySet.asScala.filter(_ != head).toVector
      if (old.nonEmpty) {
        val target = old(mrnd.nextInt(old.size))
        n += 1
        val refsBefore = engine.refs.all("r").filter(r => !r.fullName.startsWith("heads/hot")).map(r => r.fullName -> r.image)
        try {
          mrnd.nextInt(3) match {
            case 0 => engine.refs.resetBranch("r", "back", Revision.Spec(target))
            case 1 => engine.refs.createTag("r", s"old-$n", Revision.Spec(target))
            case _ => // restore from the reflog entry of the commit that made `target`
              engine.reflog.entries("r", Some("heads/hot")).find(_.newImage.contains(target)).foreach(e =>
                engine.refs.createBranch("r", s"restored-$n", Revision.Spec(e.id)))
          }
          landed.incrementAndGet()
        } catch {
          case t: Throwable if expired(t) =>
            refused.incrementAndGet()
            val after = engine.refs.all("r").filter(r => !r.fullName.startsWith("heads/hot")).map(r => r.fullName -> r.image)
            if (after != refsBefore) loops.fail(new AssertionError(s"a refused move to ${target.take(12)} moved a ref"))
        }
      }
    }
    val failures = loops.runWithGc(engine, "r", seconds)
    assert(failures.isEmpty, failures.mkString("\n"))
    awaitCompaction()
    engine.maintenance.collectGarbage(Some("r"), 0, force = true, dryRun = false)

    // every ref (but the default branch's first image, which only its creation acknowledged) reads what was acknowledged
    val refs = engine.refs.all("r").filter(r => acknowledged.containsKey(r.image))
    refs.foreach { r =>
      val got = read("r.t", "ref" -> r.image).collect().map(x => x.getInt(0) -> x.getString(1)).toMap
      assert(got == acknowledged.get(r.image), s"${r.fullName} at ${r.image.take(12)} reads other rows")
    }
    assert(landed.get > 0, "no move landed")
    assert(engine.reflog.verify("r").isEmpty)
    info(s"${acknowledged.size} commits, ${landed.get} moves landed, ${refused.get} refused as expired, ${refs.size} refs read back")
  }
}
