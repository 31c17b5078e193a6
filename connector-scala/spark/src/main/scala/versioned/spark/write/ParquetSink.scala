package versioned.spark.write

import org.apache.hadoop.mapreduce.{Job, TaskAttemptID, TaskType}
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl
import org.apache.spark.TaskContext
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.datasources.{OutputWriter, OutputWriterFactory}
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.types.StructType
import org.apache.spark.util.SerializableConfiguration

/** Spark's Parquet writer, prepared on the driver and opened on executors for one file at a time. */
private[versioned] final class ParquetSink(factory: OutputWriterFactory, conf: SerializableConfiguration,
                                           val schema: StructType) extends Serializable {
  def open(path: String): OutputWriter = {
    val tc = Option(TaskContext.get())
    val id = new TaskAttemptID("versioned", 0, TaskType.MAP, tc.map(_.partitionId()).getOrElse(0),
      tc.map(_.attemptNumber()).getOrElse(0))
    factory.newInstance(path, schema, new TaskAttemptContextImpl(conf.value, id))
  }
  def hadoopConf: org.apache.hadoop.conf.Configuration = conf.value
}

private[versioned] object ParquetSink {
  def prepare(spark: SparkSession, schema: StructType): ParquetSink = {
    val job = Job.getInstance(new org.apache.hadoop.conf.Configuration(spark.sparkContext.hadoopConfiguration))
    val factory = new ParquetFileFormat().prepareWrite(spark, job, Map.empty, schema)
    new ParquetSink(factory, new SerializableConfiguration(job.getConfiguration), schema)
  }
}
