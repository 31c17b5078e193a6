package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.RemotesApi

/**
 * `fetch(repository, remote => 'origin', download => 'none')`: brings what the remote has that the
 * repository lacks and moves the refs tracking it (never a local branch). One row: repository, remote,
 * images, objects, downloaded, refs (each `(ref, old, new, status)`).
 */
private[procedures] final class FetchProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "fetch"
  override def description(): String = "Fetches a remote's new history and moves the refs tracking it."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("remote", required = false, "remote name; default origin"),
    Param("download", required = false, "'all' to copy the new objects now; default 'none'"))
  override protected def outputType: StructType = RemotesApi.FetchSchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    RemotesApi.fetchFrame(spark, RemotesApi.fetch(spark, e, a("repository"), a.opt("remote").orNull, a.opt("download").orNull))
}
