package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.{ApiSupport, RemotesApi}

/**
 * `add_remote(repository, name, warehouse, metastore_url, remote_repository => NULL)`: records remote `name`
 * of the repository (another warehouse; URIs without credentials). One row: name, warehouse, metastore_url,
 * repository.
 */
private[procedures] final class AddRemoteProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "add_remote"
  override def description(): String = "Adds a remote (another warehouse) to a repository."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("name", required = true, "remote name, e.g. origin"),
    Param("warehouse", required = true, "object store URI of the remote warehouse"),
    Param("metastore_url", required = true, "JDBC URL of its metastore, without credentials"),
    Param("remote_repository", required = false, "repository there; default: the same name"))
  override protected def outputType: StructType = RemotesApi.RemoteSchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame = {
    val r = RemotesApi.addRemote(spark, e, a("repository"), a("name"), a("warehouse"), a("metastore_url"),
      a.opt("remote_repository").orNull)
    ApiSupport.frame(spark, RemotesApi.RemoteSchema, Seq(RemotesApi.remoteRow(r)))
  }
}
