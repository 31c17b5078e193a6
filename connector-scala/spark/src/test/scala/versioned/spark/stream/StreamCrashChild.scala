package versioned.spark.stream

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.streaming.Trigger
import versioned.spark.session.VersionedOptions

/**
 * The driver a crash test kills ([[StreamCrashSuite]]): a file-source stream (one input file per micro-batch)
 * into `r.t` of `warehouse`, run to the end of its input (`availableNow`), from `checkpoint`. With
 * [[PausingFileSystem]] paths (`pausing://`), the process stands still where the test asked it to and is killed
 * there; run again without a pause, it restarts from the checkpoint and catches up.
 *
 * Arguments: warehouse, metastore URL (`-`: the embedded one), input directory, checkpoint location.
 */
object StreamCrashChild {
  def main(args: Array[String]): Unit = {
    val Array(warehouse, metastore, input, checkpoint) = args
    val b = SparkSession.builder().master("local[2]").appName("StreamCrashChild")
      .config("spark.ui.enabled", "false")
      .config("spark.sql.shuffle.partitions", "4")
      .config("spark.hadoop.fs.pausing.impl", classOf[PausingFileSystem].getName)
      .config("spark.hadoop.fs.pausing.impl.disable.cache", "true")
      .config("spark.hadoop.fs.file.impl", classOf[PausingLocalFileSystem].getName)
      .config("spark.hadoop.fs.file.impl.disable.cache", "true")
      .config(VersionedOptions.ConfWarehouse, warehouse)
    if (metastore != "-") b.config(VersionedOptions.ConfMetastoreUrl, metastore)
    val spark = b.getOrCreate()
    val q = spark.readStream.schema("id long, v string").option("maxFilesPerTrigger", "1").json(input)
      .writeStream.format("versioned").option("checkpointLocation", checkpoint)
      .trigger(Trigger.AvailableNow()).start("r.t")
    q.awaitTermination()
    versioned.spark.write.Compactions.awaitIdle(300000L)
    spark.stop()
    System.exit(0)
  }
}
