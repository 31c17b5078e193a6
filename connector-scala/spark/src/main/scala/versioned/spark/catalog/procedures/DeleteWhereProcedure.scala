package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.{DataTypes, StructType}
import versioned.core.Names
import versioned.spark.api.TableApi

/**
 * `delete_where(repository, table, condition, branch => NULL, message => NULL, author => NULL)`: deletes the
 * rows matching a SQL condition as one commit (nothing is committed when none match). One row: `deleted`.
 * Unlike `DELETE FROM`, it takes a commit message and author.
 */
private[procedures] final class DeleteWhereProcedure(context: ProcedureContext) extends MaintenanceProcedure(context.engine) {
  override def name(): String = "delete_where"
  override def description(): String = "Deletes the rows matching a SQL condition as one commit."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo, Param("table", required = true, "table"),
    Param("condition", required = true, "SQL condition, e.g. 'day < DATE\\'2026-01-01\\''"),
    Param("branch", required = false, "branch; default: the default branch"),
    Param("message", required = false, "commit message"), Param("author", required = false, "commit author"))
  override protected def outputType: StructType = new StructType().add("deleted", DataTypes.LongType, nullable = false)
  override protected def run(spark: SparkSession, e: versioned.core.Engine, a: Args): DataFrame = {
    val table = s"${a("repository")}.${Names.validate(Names.Table, a("table"))}"
    row(spark, TableApi.deleteWhere(spark, context.locationJava, table, a("condition"), a.opt("branch").orNull,
      a.opt("message").orNull, a.opt("author").orNull))
  }
}
