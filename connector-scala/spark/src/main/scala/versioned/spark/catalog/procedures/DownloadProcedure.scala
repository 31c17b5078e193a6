package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.RemotesApi

/**
 * `download(repository, ref => null)`: copies into this warehouse the objects of `ref`'s tables (default: of
 * every version) that the repository knows only at a remote's places, verified, and forgets those places. One
 * row: repository, image (null for every version), objects (held elsewhere before), downloaded (copied).
 */
private[procedures] final class DownloadProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "download"
  override def description(): String = "Copies the objects a repository reads at remotes into this warehouse."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("ref", required = false, "branch, tag or hash whose tables to download; default every version"))
  override protected def outputType: StructType = RemotesApi.DownloadSchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    RemotesApi.downloadFrame(spark, RemotesApi.downloadObjects(spark, e, a("repository"), a.opt("ref").orNull))
}
