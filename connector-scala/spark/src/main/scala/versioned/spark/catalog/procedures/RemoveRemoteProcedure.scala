package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.{ApiSupport, RemotesApi}

/** `remove_remote(repository, name)`: removes a remote and the refs tracking it; one row: the remote removed. */
private[procedures] final class RemoveRemoteProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "remove_remote"
  override def description(): String = "Removes a remote of a repository and the refs tracking it."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo, Param("name", required = true, "remote name"))
  override protected def outputType: StructType = RemotesApi.RemoteSchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    ApiSupport.frame(spark, RemotesApi.RemoteSchema,
      Seq(RemotesApi.remoteRow(RemotesApi.removeRemote(spark, e, a("repository"), a("name")))))
}
