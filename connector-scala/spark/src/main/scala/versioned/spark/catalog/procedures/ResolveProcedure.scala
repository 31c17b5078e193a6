package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.{DataTypes, StructType}
import versioned.core.Engine

/** `resolve(repository, ref => NULL)`: the full image hash a revision names (default: the default branch). */
private[procedures] final class ResolveProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "resolve"
  override def description(): String = "The full image hash a revision (branch, tag, lock, hash prefix, ~N, ^N) names."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("ref", required = false, "revision; default: the default branch"))
  override protected def outputType: StructType = new StructType().add("image", DataTypes.StringType, nullable = false)
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    row(spark, e.resolve(a("repository"), a.revision("ref")).hash)
}
