package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.{ArrayType, DataTypes, StructType}
import versioned.spark.write.Commits

/**
 * `last_commit([write_id])`: the commit of the DataFrame write given the write option `writeId` = `write_id`
 * (once), or without it the newest commit this session's DataFrame writes made (repository, branch, commit,
 * tables); no row when there is none. A DSv2 write returns nothing, so a client that cannot share the
 * writer's thread (a Spark Connect client) names its write and asks for its commit after the write.
 */
private[procedures] final class LastCommitProcedure extends MaintenanceProcedure(() => null) {
  override def name(): String = "last_commit"
  override def description(): String = "The commit of the DataFrame write with the given writeId, or the newest commit of this session's writes."
  override protected val params: Seq[Param] = Seq(Param("write_id", required = false,
    "the writeId option of the write whose commit to return (default: the session's newest commit)"))
  override protected def outputType: StructType = new StructType().add("repository", DataTypes.StringType, nullable = false)
    .add("branch", DataTypes.StringType, nullable = false).add("commit", DataTypes.StringType, nullable = false)
    .add("tables", ArrayType(DataTypes.StringType, containsNull = false), nullable = false)
  override protected def run(spark: SparkSession, e: versioned.core.Engine, a: Args): DataFrame = {
    val commit = a.opt("write_id").fold(Commits.lastOf(spark))(Commits.take)
    val rows = commit.toSeq.map(r =>
      org.apache.spark.sql.Row(r.image.repo, r.branch, r.image.hash, r.changedTables))
    spark.createDataFrame(java.util.Arrays.asList(rows: _*), outputType)
  }
}
