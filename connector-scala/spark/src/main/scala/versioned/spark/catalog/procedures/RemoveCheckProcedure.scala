package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.GovernanceApi

/** `remove_check(repository, name)`: removes a check no rule requires. The checks that remain, one row each. */
private[procedures] final class RemoveCheckProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "remove_check"
  override def description(): String = "Removes a check."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo, Param("name", required = true, "check name"))
  override protected def outputType: StructType = GovernanceApi.CheckSchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame = {
    e.checks.remove(a("repository"), a("name"))
    GovernanceApi.checks(spark, e, a("repository"))
  }
}
