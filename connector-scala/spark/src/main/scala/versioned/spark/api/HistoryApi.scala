package versioned.spark.api

import java.time.Instant
import scala.util.Try
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types._
import versioned.core.{Fragment, ImageDetails, ImageTable, Json, ObjectMeta}
import versioned.spark.session.Warehouses
import versioned.spark.api.ApiSupport._

/** Read-only views of the image graph: log as a DataFrame, show as JSON. */
object HistoryApi {
  type Opts = java.util.Map[String, String]

  val LogSchema: StructType = StructType(Seq(
    StructField("hash", StringType, nullable = false),
    StructField("parents", ArrayType(StringType, containsNull = false), nullable = false),
    StructField("author", StringType, nullable = false),
    StructField("message", StringType, nullable = false),
    StructField("created", TimestampType, nullable = false),
    StructField("tables_changed", ArrayType(StringType, containsNull = false), nullable = false),
    // who made the commit (docs/AUDIT.md); null for commits made before commits carried it
    StructField("committer", StringType), StructField("app_id", StringType), StructField("client", StringType)))

  /**
   * Images reachable from `ref`, newest first. `limit` < 0 means no limit.
   * Columns: hash, parents, author, message, created, tables_changed, committer, app_id, client.
   */
  def log(spark: SparkSession, options: Opts, repo: String, ref: String, limit: Int): DataFrame =
    LogSource.frame(spark, Warehouses.config(spark, ApiSupport.options(options)), ApiSupport.repo(repo), spec(ref), limit)

  /** One image as JSON: metadata, tables (schema, key, fragments and their objects) and changed tables. */
  def show(spark: SparkSession, options: Opts, repo: String, ref: String): String =
    showJson(ApiSupport.engineFor(spark, options, repo), ApiSupport.repo(repo), ref)

  /** The `show` document of the image `ref` names in `repo`. */
  def showJson(e: versioned.core.Engine, repo: String, ref: String): String = ShowJson.render(e.history.show(repo, spec(ref)))
}

/** The JSON document returned by `show`. Keys are snake_case; timestamps are ISO-8601 (UTC) plus epoch ms. */
private[api] object ShowJson {
  def render(d: ImageDetails): String = {
    val img = d.image
    Json.write(Map(
      "image" -> img.hash,
      "parents" -> img.parents,
      "author" -> img.author,
      "message" -> img.message,
      "created" -> Instant.ofEpochMilli(img.createdMs).toString,
      "created_ms" -> img.createdMs,
      "tables" -> d.tables.sortBy(_.table.name).map(table(_, d.objects)),
      "changed_tables" -> d.changedTables,
      "dropped_tables" -> d.droppedTables.sorted))
  }

  private def table(t: ImageTable, objects: Map[String, ObjectMeta]): Map[String, Any] = {
    val v = t.table
    val schema = Try(DataType.fromJson(v.schemaJson).asInstanceOf[StructType]).toOption
    Map(
      "name" -> v.name,
      "hash" -> v.hash,
      "changed" -> t.changed,
      "schema" -> schema.map(_.toDDL).getOrElse(v.schemaJson),
      "columns" -> schema.toSeq.flatMap(_.fields.toSeq).map(f =>
        Map("name" -> f.name, "type" -> f.dataType.simpleString, "nullable" -> f.nullable)),
      "primary_key" -> v.primaryKey,
      "hidden_key" -> v.hiddenKey,
      "fragments" -> v.fragments.map(fragment(_, objects)),
      "compacted_fragments" -> v.compacted.map(_.map(fragment(_, objects))).orNull,
      "objects" -> v.fragments.flatMap(_.objects).distinct.size,
      "bytes" -> v.fragments.flatMap(_.objects).distinct.flatMap(objects.get).map(_.sizeBytes).sum)
  }

  private def fragment(f: Fragment, objects: Map[String, ObjectMeta]): Map[String, Any] = Map(
    "lower" -> f.lower.orNull,
    "objects" -> f.objects.map { id =>
      objects.get(id).map(o => Map("id" -> id, "kind" -> o.kind, "rows" -> o.rowCount, "bytes" -> o.sizeBytes,
        "format" -> o.format)).getOrElse(Map("id" -> id))
    })
}
