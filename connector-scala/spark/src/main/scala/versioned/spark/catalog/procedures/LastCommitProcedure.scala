package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.{ArrayType, DataTypes, StructType}
import versioned.spark.write.Commits

/**
 * `last_commit()`: the newest commit this session's DataFrame writes made (repository, branch, commit,
 * tables), or no row. A DSv2 write returns nothing, so a client that cannot share the writer's thread (a
 * Spark Connect client) asks for it after the write.
 */
private[procedures] final class LastCommitProcedure extends MaintenanceProcedure(() => null) {
  override def name(): String = "last_commit"
  override def description(): String = "The newest commit made by a DataFrame write of this session."
  override protected val params: Seq[Param] = Nil
  override protected def outputType: StructType = new StructType().add("repository", DataTypes.StringType, nullable = false)
    .add("branch", DataTypes.StringType, nullable = false).add("commit", DataTypes.StringType, nullable = false)
    .add("tables", ArrayType(DataTypes.StringType, containsNull = false), nullable = false)
  override protected def run(spark: SparkSession, e: versioned.core.Engine, a: Args): DataFrame = {
    val rows = Commits.lastOf(spark).toSeq.map(r =>
      org.apache.spark.sql.Row(r.image.repo, r.branch, r.image.hash, r.changedTables))
    spark.createDataFrame(java.util.Arrays.asList(rows: _*), outputType)
  }
}
