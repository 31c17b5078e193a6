package versioned.spark.stream

import java.nio.file.Files
import org.apache.spark.sql.{Row, SparkSession}
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream
import org.apache.spark.sql.streaming.StreamingQuery
import StreamingSinkSuite.Rec

/**
 * A stream of keyed rows into `r.t` that the outage suites stop and start again from one checkpoint: batches of
 * 30 rows, `batch(from)` the rows with ids `from` to `from + 29`, and every row sent so far as the table's oracle.
 */
private[stream] final class KeyedStream(spark: SparkSession) {
  private val session = spark
  import session.implicits._
  private val in = MemoryStream[Rec](spark, 2)
  private val ckpt = Files.createTempDirectory("versioned-stream-ckpt").toFile.getAbsolutePath
  private var sent = Vector.empty[Rec]

  def start(): StreamingQuery = in.toDF().writeStream.format("versioned").option("checkpointLocation", ckpt)
    .option("primaryKey", "id").start("r.t")

  /** Sends batch `from` to the source (the next micro-batch's rows). */
  def send(from: Int): Unit = {
    val rows = (from until from + 30).map(i => Rec(i.toLong, s"r$i"))
    sent ++= rows
    in.addData(rows: _*)
  }

  /** Every row sent, by key: what the table must hold once the stream caught up. */
  def expected: Seq[Row] = sent.map(r => Row(r.id, r.name)).sortBy(_.getLong(0))
}
