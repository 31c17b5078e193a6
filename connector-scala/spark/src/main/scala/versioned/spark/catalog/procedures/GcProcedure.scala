package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.MaintenanceApi

/**
 * `gc(repository, older_than_seconds => NULL, force => false, dry_run => false)`: expires what the repository's
 * retention policies no longer keep, then deletes the objects of one repository that no version needs; one row
 * (kind, name, path, reason) per image expired, branch expired or object deleted (or, with `dry_run`, that would be).
 * `gc_warehouse` collects the whole warehouse.
 */
private[procedures] class GcProcedure(engine: () => Engine, wholeWarehouse: Boolean) extends MaintenanceProcedure(engine) {
  override def name(): String = if (wholeWarehouse) "gc_warehouse" else "gc"
  override def description(): String =
    if (wholeWarehouse) "Deletes unneeded objects, orphan files and staging files of the whole warehouse."
    else "Deletes the objects of a repository that no version needs (after the retention period)."
  override protected val params: Seq[Param] = (if (wholeWarehouse) Nil else Seq(RefProcedure.Repo)) ++ Seq(
    Param("older_than_seconds", required = false, "retention period in seconds; default: a day", ParamKind.Seconds),
    Param.flag("force", "true to allow a retention below an hour"),
    Param.flag("dry_run", "true to only list what would be deleted"))
  override protected def outputType: StructType = MaintenanceApi.CollectedSchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    MaintenanceApi.collectGarbage(spark, e, if (wholeWarehouse) None else Some(a("repository")),
      a.millis("older_than_seconds"), a.flag("force"), a.flag("dry_run"))
}
