package versioned.spark.stream

import java.net.URI
import java.nio.file.Files
import java.util.concurrent.TimeUnit
import org.apache.spark.sql.Row
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream
import org.apache.spark.sql.streaming.StreamingQuery
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
  import StreamingSinkSuite.Rec

  test("the PostgreSQL metastore down for 30 s mid-stream: the batch fails typed, the restarted query catches up") {
    val admin = TestMetastores.postgresAdminUrl
    assume(admin.isDefined, "VERSIONED_TEST_POSTGRES_URL is not set")
    val (db, url) = TestMetastores.createDatabase(admin.get)
    val target = URI.create(url.stripPrefix("jdbc:"))
    val proxy = new TcpProxy(target.getHost, if (target.getPort > 0) target.getPort else 5432)
    try withConf(VersionedOptions.ConfMetastoreUrl -> url.replace(s"//${target.getAuthority}/", s"//127.0.0.1:${proxy.localPort}/")) {
      val session = spark; import session.implicits._
      val in = MemoryStream[Rec](spark, 2)
      val ckpt = Files.createTempDirectory("versioned-stream-ckpt").toFile.getAbsolutePath
      def start(): StreamingQuery = in.toDF().writeStream.format("versioned").option("checkpointLocation", ckpt)
        .option("primaryKey", "id").start("r.t")
      def batch(from: Int): Seq[Rec] = (from until from + 30).map(i => Rec(i.toLong, s"r$i"))
      val q = start()
      in.addData(batch(0): _*)
      q.processAllAvailable()
      awaitCompaction()

      proxy.down()
      val down = System.nanoTime()
      try {
        in.addData(batch(100): _*)
        expectError(ErrorClass.MetastoreError)(q.processAllAvailable())
        q.stop()
        val left = TimeUnit.SECONDS.toNanos(30) - (System.nanoTime() - down)
        if (left > 0) Thread.sleep(TimeUnit.NANOSECONDS.toMillis(left))
      } finally proxy.restore()

      val restarted = start()
      try { in.addData(batch(200): _*); restarted.processAllAvailable() } finally restarted.stop()
      awaitCompaction()
      val expected = (batch(0) ++ batch(100) ++ batch(200)).map(r => Row(r.id, r.name))
      assert(read("r.t").collect().toSeq.sortBy(_.getLong(0)) == expected, "every row exactly once after the outage")
      val eng = Engine(WarehouseConfig(warehouse.getAbsolutePath, url), spark.sparkContext.hadoopConfiguration)
      val batches = eng.history.log("r", Revision.Spec(eng.defaultBranch("r")))
        .flatMap(e => StreamBatches.batchOf(e.image.message))
      assert(batches == batches.distinct.sorted.reverse && batches.last == 0L, s"each batch committed once: $batches")
    } finally { proxy.close(); TestMetastores.dropDatabase(admin.get, db) }
  }
}
