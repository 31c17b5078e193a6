package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Names
import versioned.spark.api.MaintenanceApi

/**
 * `diff(repository, table, from_ref, to_ref => NULL)`: the row-level diff of one table between two revisions
 * (`to_ref` NULL: the default branch), in the columns of `Repository.diff`: `_change` (insert, delete,
 * update), the key columns, `<column>_before` / `<column>_after`. Only what changed is read; the rows are
 * returned through the driver, so very large diffs are better read with the DataFrame API or `CHANGES`.
 */
private[procedures] final class DiffProcedure(context: ProcedureContext) extends MaintenanceProcedure(context.engine) {
  override def name(): String = "diff"
  override def description(): String = "Row-level diff of a table between two revisions."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo, Param("table", required = true, "table"),
    Param("from_ref", required = true, "revision to compare from"),
    Param("to_ref", required = false, "revision to compare to; default: the default branch"))
  /** Depends on the table; the result rows come in the diff's own schema. */
  override protected def outputType: StructType = new StructType()
  override protected def run(spark: SparkSession, e: versioned.core.Engine, a: Args): DataFrame = {
    val repo = a("repository")
    val to = a.opt("to_ref").getOrElse(e.defaultBranch(repo))
    MaintenanceApi.diff(spark, context.locationJava, s"$repo.${Names.validate(Names.Table, a("table"))}", a("from_ref"), to)
  }
}
