package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.spark.api.MaintenanceApi

/**
 * `materialize(repository)`: ref-driven snapshots (MMS5): compacts every image a branch, tag or lock
 * points at and evicts compacted forms no ref needs. One row (image, table, fragments, objects) per
 * table compacted.
 */
private[procedures] final class MaterializeProcedure(context: ProcedureContext) extends MaintenanceProcedure(context.engine) {
  override def name(): String = "materialize"
  override def description(): String = "Compacts every image a ref points at, so each ref reads as a plain scan."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo)
  override protected def outputType: StructType = MaintenanceApi.MaterializedSchema
  override protected def run(spark: SparkSession, e: versioned.core.Engine, a: Args): DataFrame =
    MaintenanceApi.materialize(spark, context.locationJava, a("repository"))
}
