package versioned.spark.stream

import java.util.concurrent.TimeUnit
import org.apache.spark.sql.streaming.StreamingQuery
import versioned.core.{ErrorClass, Revision, VersionedException}
import versioned.spark.safety.{Faults, FaultyWarehouseSuite}
import versioned.spark.write.StreamBatches

/**
 * The object store down for 30 seconds in the middle of a stream (every create and open refused, on the driver
 * and in tasks): the batch in flight fails with the typed STORAGE_ERROR and commits nothing, a restart during
 * the outage fails the same way, and the query restarted from its checkpoint after the outage catches up with
 * every row exactly once.
 */
class StreamOutageSuite extends FaultyWarehouseSuite {
  private val outage = TimeUnit.SECONDS.toNanos(30)

  private def storageError(q: StreamingQuery): VersionedException = {
    val t = intercept[Throwable](q.processAllAvailable())
    val v = Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(64).collectFirst { case v: VersionedException => v }
      .getOrElse(fail(s"expected STORAGE_ERROR, got an untyped $t", t))
    assert(v.errorClass == ErrorClass.StorageError, v.getMessage)
    v
  }

  test("the object store down for 30 s mid-stream: the batch fails typed, the restarted query catches up") {
    val stream = new KeyedStream(spark)
    val q = stream.start()
    stream.send(0)
    q.processAllAvailable()
    awaitCompaction()
    val branch = eng.defaultBranch("r")
    val head = eng.branchHeadOption("r", branch).map(_.hash)

    Faults.outage()
    val down = System.nanoTime()
    try {
      stream.send(100)
      storageError(q)
      q.stop()
      assert(eng.branchHeadOption("r", branch).map(_.hash) == head, "the failed batch moved the branch")
      val again = stream.start()
      try storageError(again) finally again.stop()
      val left = outage - (System.nanoTime() - down)
      if (left > 0) Thread.sleep(TimeUnit.NANOSECONDS.toMillis(left))
    } finally Faults.stopRefusing()

    val restarted = stream.start()
    try { stream.send(200); restarted.processAllAvailable() } finally restarted.stop()
    awaitCompaction()
    assert(read("r.t").collect().toSeq.sortBy(_.getLong(0)) == stream.expected, "every row exactly once after the outage")
    val batches = eng.history.log("r", Revision.Spec(branch)).flatMap(e => StreamBatches.batchOf(e.image.message))
    // the restarted query runs the failed batch 1 again (its offsets were recorded), with or without batch 2's rows
    assert(batches == batches.distinct.sorted.reverse && batches.last == 0L, s"each batch committed once: $batches")
  }
}
