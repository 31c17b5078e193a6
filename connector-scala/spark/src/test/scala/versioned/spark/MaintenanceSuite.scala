package versioned.spark

import versioned.spark.session.TableSnapshot

import org.apache.spark.sql.execution.datasources.v2.BatchScanExec
import versioned.core.Revision
import versioned.spark.write.Snapshots

class MaintenanceSuite extends VersionedSparkSuite {
  private def snapshotOf(spec: String) = {
    val e = engine
    TableSnapshot.load(e, "r", "t", e.resolve("r", Revision.Spec(spec)))
  }

  /** Objects per planned fragment of the scan of `df`. */
  private def chains(df: org.apache.spark.sql.DataFrame): Seq[Int] =
    df.queryExecution.executedPlan.collect { case b: BatchScanExec => b.scan.toBatch.planInputPartitions().toSeq }.head
      .flatMap(_.asInstanceOf[versioned.spark.read.FragmentGroup].fragments).map(_.objects.size)

  test("materialize compacts every ref target, keeps content and hash, and reads single SNAPs") {
    val s = spark; import s.implicits._
    write((1 to 200).map(i => (i, s"v$i")).toDF("id", "v"), "r.t", "primaryKey" -> "id")
    write(Seq((7, "x"), (300, "y")).toDF("id", "v"), "r.t", "upsert" -> "true")
    engine.refs.createLock("r", "app1", "snap", Revision.Spec("main"))
    write(Seq((8, "z")).toDF("id", "v"), "r.t", "upsert" -> "true")
    val before = Seq("main", "main~1", "main~2").map(r => r -> rows(read("r.t", "ref" -> r))).toMap
    val heads = Seq("main", "app1:snap").map(r => engine.resolve("r", Revision.Spec(r)).hash)
    assert(chains(read("r.t")).max > 1)
    val done = Snapshots.materialize(spark, engine, "r", Map.empty)
    assert(done.map(_.image).toSet == heads.toSet)
    assert(snapshotOf("main").version.compacted.nonEmpty && snapshotOf("app1:snap").version.compacted.nonEmpty)
    assert(Seq("main", "app1:snap").map(r => engine.resolve("r", Revision.Spec(r)).hash) == heads)
    before.foreach { case (r, expected) => assert(rows(read("r.t", "ref" -> r)) == expected, r) }
    assert(chains(read("r.t")).forall(_ == 1))
    assert(rows(read("r.t").filter($"id" === 7)) == Set(org.apache.spark.sql.Row(7, "x")))
  }

  test("releasing the last ref evicts the compacted form; garbage collection keeps history readable") {
    val s = spark; import s.implicits._
    write((1 to 100).map(i => (i, i)).toDF("id", "v"), "r.t", "primaryKey" -> "id")
    engine.refs.createLock("r", "app1", "l", Revision.Spec("main"))
    write(Seq((1, -1)).toDF("id", "v"), "r.t", "upsert" -> "true")
    engine.refs.createLock("r", "app1", "l2", Revision.Spec("main"))
    write(Seq((2, -2)).toDF("id", "v"), "r.t", "upsert" -> "true")
    Snapshots.materialize(spark, engine, "r", Map.empty)
    val locked = snapshotOf("app1:l2")
    assert(locked.version.compacted.nonEmpty)
    val all = Seq("main", "main~1", "main~2").map(r => r -> rows(read("r.t", "ref" -> r))).toMap
    engine.refs.releaseLock("r", "app1", "l2")
    assert(engine.maintenance.evict("r").map(_._1) == Seq(locked.image.hash))
    assert(TableSnapshot.load(engine, "r", "t", locked.image).version.compacted.isEmpty)
    val deleted = engine.maintenance.collectGarbage(None, 0L, force = true, dryRun = false)
    assert(deleted.nonEmpty)
    all.foreach { case (r, expected) => assert(rows(read("r.t", "ref" -> r)) == expected, r) }
    assert(engine.maintenance.unreferencedObjects().isEmpty)
  }
}
