package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.RetentionApi

/** `remove_retention(repository, pattern)`: removes a retention policy. The policies that remain, one row each. */
private[procedures] final class RemoveRetentionProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "remove_retention"
  override def description(): String = "Removes the retention policy of a branch name or glob."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo, Param("pattern", required = true, "the policy's pattern"))
  override protected def outputType: StructType = RetentionApi.PolicySchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame = {
    e.retention.remove(a("repository"), a("pattern"))
    RetentionApi.retention(spark, e, a("repository"))
  }
}
