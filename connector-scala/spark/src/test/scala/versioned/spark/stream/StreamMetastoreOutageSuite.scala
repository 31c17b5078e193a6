package versioned.spark.stream

import java.net.URI
import java.util.concurrent.TimeUnit
import versioned.core.{Engine, ErrorClass, Revision, TestMetastores, WarehouseConfig}
import versioned.spark.VersionedTestBase
import versioned.spark.session.VersionedOptions
import versioned.spark.write.StreamBatches

/**
 * The PostgreSQL metastore down for 30 seconds in the middle of a stream (its connections cut and refused, through
 * a [[TcpProxy]]): the batch in flight fails with the typed METASTORE_ERROR and commits nothing, and the query
 * restarted from its checkpoint after the outage catches up with every row exactly once. Needs
 * `VERSIONED_TEST_POSTGRES_URL` (bin/test sets it up); canceled without it.
 */
class StreamMetastoreOutageSuite extends VersionedTestBase {
  test("the PostgreSQL metastore down for 30 s mid-stream: the batch fails typed, the restarted query catches up") {
    val admin = TestMetastores.postgresAdminUrl
    assume(admin.isDefined, "VERSIONED_TEST_POSTGRES_URL is not set")
    val (db, url) = TestMetastores.createDatabase(admin.get)
    val target = URI.create(url.stripPrefix("jdbc:"))
    val proxy = new TcpProxy(target.getHost, if (target.getPort > 0) target.getPort else 5432)
    try withConf(VersionedOptions.ConfMetastoreUrl -> url.replace(s"//${target.getAuthority}/", s"//127.0.0.1:${proxy.localPort}/")) {
      val stream = new KeyedStream(spark)
      val q = stream.start()
      stream.send(0)
      q.processAllAvailable()
      awaitCompaction()

      proxy.down()
      val down = System.nanoTime()
      try {
        stream.send(100)
        expectError(ErrorClass.MetastoreError)(q.processAllAvailable())
        q.stop()
        val left = TimeUnit.SECONDS.toNanos(30) - (System.nanoTime() - down)
        if (left > 0) Thread.sleep(TimeUnit.NANOSECONDS.toMillis(left))
      } finally proxy.restore()

      val restarted = stream.start()
      try { stream.send(200); restarted.processAllAvailable() } finally restarted.stop()
      awaitCompaction()
      assert(read("r.t").collect().toSeq.sortBy(_.getLong(0)) == stream.expected, "every row exactly once after the outage")
      val eng = Engine(WarehouseConfig(warehouse.getAbsolutePath, url), spark.sparkContext.hadoopConfiguration)
      val batches = eng.history.log("r", Revision.Spec(eng.defaultBranch("r")))
        .flatMap(e => StreamBatches.batchOf(e.image.message))
      assert(batches == batches.distinct.sorted.reverse && batches.last == 0L, s"each batch committed once: $batches")
    } finally { proxy.close(); TestMetastores.dropDatabase(admin.get, db) }
  }
}
