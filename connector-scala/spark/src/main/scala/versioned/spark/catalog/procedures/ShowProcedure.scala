package versioned.spark.catalog.procedures

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.{DataTypes, StructType}
import versioned.core.Engine
import versioned.spark.api.HistoryApi

/**
 * `show(repository, ref => NULL)`: one image described as a JSON document (the same document as the
 * Python `Repository.show` and the Scala `VersionedApi.show`): image, parents, author, message, created,
 * tables with their fragments and objects, changed and dropped tables.
 */
private[procedures] final class ShowProcedure(engine: () => Engine) extends MaintenanceProcedure(engine) {
  override def name(): String = "show"
  override def description(): String = "Describes one image (tables, fragments, objects) as a JSON document."
  override protected val params: Seq[Param] = Seq(RefProcedure.Repo,
    Param("ref", required = false, "revision; default: the default branch"))
  override protected def outputType: StructType = new StructType().add("image", DataTypes.StringType, nullable = false)
    .add("json", DataTypes.StringType, nullable = false)
  override protected def run(spark: SparkSession, e: Engine, a: Args): DataFrame = {
    val repo = a("repository")
    val image = e.resolve(repo, a.revision("ref")).hash
    row(spark, image, HistoryApi.showJson(e, repo, image))
  }
}
