package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.RemotesApi

/** `remotes(repository)`: the remotes of a repository, one row each (name, warehouse, metastore_url, repository). */
private[procedures] final class RemotesProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "remotes"
  override def description(): String = "Lists the remotes of a repository."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo)
  override protected def outputType: StructType = RemotesApi.RemoteSchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame = RemotesApi.remotes(spark, e, a("repository"))
}
