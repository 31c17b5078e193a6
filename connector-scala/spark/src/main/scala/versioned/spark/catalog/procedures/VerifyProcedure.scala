package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.MaintenanceApi

/**
 * `verify(repository, refs => NULL)`: reads every object the versions reachable from `refs` (comma-separated
 * revisions; default every ref) need against its checksum; one row per object with its status.
 */
private[procedures] final class VerifyProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "verify"
  override def description(): String = "Checks the objects a repository's refs need; reports missing and corrupt ones."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("refs", required = false, "comma-separated revisions; default: every ref of the repository"))
  override protected def outputType: StructType = versioned.spark.read.Verifier.Schema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    MaintenanceApi.verify(spark, e, a("repository"), a.opt("refs").toSeq.flatMap(_.split(',')).map(_.trim).filter(_.nonEmpty))
}
