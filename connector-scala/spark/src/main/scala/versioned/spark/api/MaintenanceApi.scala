package versioned.spark.api

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types._
import versioned.spark.diff.TableDiff
import versioned.spark.write.Snapshots

/** Diffs, ref-driven snapshots (MMS5) and garbage collection. */
private[api] object MaintenanceApi {
  import ApiSupport._

  def diff(spark: SparkSession, options: VersionedApi.Opts, table: String, fromRef: String, toRef: String): DataFrame =
    TableDiff.diff(spark, locationOptions(ApiSupport.options(options)), table, spec(fromRef), spec(toRef))

  private val MaterializedSchema = StructType(Seq(
    StructField("image", StringType, nullable = false), StructField("table", StringType, nullable = false),
    StructField("fragments", IntegerType, nullable = false), StructField("objects", IntegerType, nullable = false)))

  def materialize(spark: SparkSession, options: VersionedApi.Opts, repository: String): DataFrame = {
    val done = Snapshots.materialize(spark, engine(spark, options), repo(repository), locationOptions(ApiSupport.options(options)))
    frame(spark, MaterializedSchema, done.map(m => Row(m.image, m.table, m.fragments, m.objects)))
  }

  def evict(spark: SparkSession, options: VersionedApi.Opts, repository: String): Int =
    engine(spark, options).maintenance.evict(repo(repository)).size

  def collectGarbage(spark: SparkSession, options: VersionedApi.Opts, olderThanMs: Long): Int =
    engine(spark, options).maintenance.collectGarbage(spark.sparkContext.hadoopConfiguration, olderThanMs).size
}
