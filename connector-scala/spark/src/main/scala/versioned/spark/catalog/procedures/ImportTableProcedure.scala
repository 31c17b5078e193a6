package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types.{StringType, StructField, StructType}
import versioned.core.Engine
import versioned.spark.api.{ApiSupport, RemotesApi}

/**
 * `import_table(repository, from_repository, table, ref => NULL, as_table => NULL, branch => NULL, remote => NULL,
 * message => NULL, author => NULL)`: one commit on `branch` adding `table` of `from_repository` at `ref` (of
 * remote `remote` when given) as `as_table`, linking its objects (no data copied). One row: the commit.
 */
private[procedures] final class ImportTableProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "import_table"
  override def description(): String = "Commits a table of another repository (or remote) into a branch, without copying data."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("from_repository", required = true, "repository the table comes from"),
    Param("table", required = true, "table to import"),
    Param("ref", required = false, "revision of from_repository; default: its default branch"),
    Param("as_table", required = false, "name of the table here; default: the same"),
    Param("branch", required = false, "branch to commit to; default: the default branch"),
    Param("remote", required = false, "remote of the repository that holds from_repository; default: this warehouse"),
    Param("message", required = false, "commit message"),
    Param("author", required = false, "commit author"))
  private val schema = StructType(Seq(StructField("image", StringType, nullable = false)))
  override protected def outputType: StructType = schema
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame =
    ApiSupport.frame(spark, schema, Seq(Row(RemotesApi.importTable(spark, e, a("repository"), a("from_repository"),
      a("table"), a.opt("ref").orNull, a.opt("as_table").orNull, a.opt("branch").orNull, a.opt("remote").orNull,
      a.opt("message").orNull, a.opt("author").orNull))))
}
