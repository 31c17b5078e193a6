package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.RetentionApi

/** `retention(repository)`: the retention policies, one row each (pattern, keep_days, keep_commits, expire_branches_after_days). */
private[procedures] final class RetentionProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "retention"
  override def description(): String = "Lists the retention policies of a repository."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo)
  override protected def outputType: StructType = RetentionApi.PolicySchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame = RetentionApi.retention(spark, e, a("repository"))
}
