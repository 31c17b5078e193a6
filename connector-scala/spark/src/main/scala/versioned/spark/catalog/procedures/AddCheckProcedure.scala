package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine
import versioned.spark.api.GovernanceApi

/**
 * `add_check(repository, name, expression, table => NULL, severity => 'error')`: adds or replaces a check, validated
 * on the default branch's head: without `table`, `expression` is a SQL query returning the failing rows; with it, a
 * predicate every row must satisfy. One row: the check.
 */
private[procedures] final class AddCheckProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "add_check"
  override def description(): String = "Adds a named check (a query that must return no rows, or a row predicate)."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo, Param("name", required = true, "check name"),
    Param("expression", required = true, "SQL query returning failing rows, or a predicate on `table`"),
    Param("table", required = false, "table of a row predicate; NULL for a query check"),
    Param("severity", required = false, "'error' (blocks a gated merge; default) or 'warn'"))
  override protected def outputType: StructType = GovernanceApi.CheckSchema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    GovernanceApi.addCheck(spark, e, a("repository"), a("name"), a("expression"), a.opt("table").orNull,
      a.opt("severity").orNull)
}
