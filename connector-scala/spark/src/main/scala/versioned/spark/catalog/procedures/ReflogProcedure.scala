package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.ReflogApi

/**
 * `reflog(repository, ref => NULL, limit => 0)`: every ref movement of the repository, newest first (of `ref` only
 * when given); the rows of the `$reflog` metadata table (docs/AUDIT.md).
 */
private[procedures] final class ReflogProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "reflog"
  override def description(): String = "Lists the ref movements of a repository, newest first (hash-chained; verify checks the chain)."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("ref", required = false, "only this ref (a branch, tag or lock name, or a full ref name)"),
    Param("limit", required = false, "at most this many entries, newest first; default: all", ParamKind.Ordinal))
  override protected def outputType: StructType = ReflogApi.Schema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    ReflogApi.reflog(spark, e, a("repository"), a.opt("ref"), a.ordinal("limit").getOrElse(0))
}
