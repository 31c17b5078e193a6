package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.RemotesApi

/**
 * `clone(repository, warehouse, metastore_url, into => NULL, remote => 'origin', download => 'none')`: copies
 * repository `repository` of another warehouse into `into` (default: the same name) of this one: history,
 * object metadata, refs as `remotes/<remote>/...`, a local default branch; objects are read in place
 * unless `download => 'all'`. One row: repository, remote, images, objects, downloaded, refs (each `(ref, old, new, status)`).
 */
private[procedures] final class CloneProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "clone"
  override def description(): String = "Clones a repository of another warehouse (lazily: objects are read in place)."
  override protected val params: Seq[Param] = Seq(Param("repository", required = true, "repository to clone, in the remote warehouse"),
    Param("warehouse", required = true, "object store URI of the remote warehouse"),
    Param("metastore_url", required = true, "JDBC URL of its metastore, without credentials"),
    Param("into", required = false, "name of the new repository here; default: the same"),
    Param("remote", required = false, "name the remote is recorded under; default origin"),
    Param("download", required = false, "'all' to copy every object now; default 'none'"))
  override protected def outputType: StructType = RemotesApi.FetchSchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    RemotesApi.fetchFrame(spark, RemotesApi.cloneRepository(spark, e, a("repository"), a("warehouse"), a("metastore_url"),
      a.opt("into").orNull, a.opt("remote").orNull, a.opt("download").orNull))
}
