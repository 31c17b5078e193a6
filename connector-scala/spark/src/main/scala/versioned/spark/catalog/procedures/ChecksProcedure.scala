package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.GovernanceApi

/** `checks(repository)`: the checks of a repository, one row each (name, kind, table, expression, severity). */
private[procedures] final class ChecksProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "checks"
  override def description(): String = "Lists the checks of a repository."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo)
  override protected def outputType: StructType = GovernanceApi.CheckSchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame = GovernanceApi.checks(spark, e, a("repository"))
}
