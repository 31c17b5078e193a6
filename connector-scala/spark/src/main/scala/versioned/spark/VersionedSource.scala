package versioned.spark

import java.util
import scala.jdk.CollectionConverters._
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.DataSourceRegister
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import versioned.core.Errors

/**
 * The `versioned` data source: `spark.read.format("versioned").option("ref", "main").load("repo.table")`.
 * Spark asks one provider instance for the schema, then for the table, with the same options: the table
 * value [[inferSchema]] resolved is the one [[getTable]] returns, so a load resolves its revision and
 * fetches its table once.
 */
class VersionedSource extends TableProvider with DataSourceRegister {
  override def shortName(): String = "versioned"

  /** The table [[inferSchema]] resolved, with the options it was resolved with. */
  @volatile private var inferred: Option[(Map[String, String], VersionedTable)] = None

  private def path(options: util.Map[String, String]): String =
    Option(options.get("path")).getOrElse(throw Errors.invalidOption(
      "No table given. Use load(\"<repository>.<table>\") or save(\"<repository>.<table>\")."))

  override def inferSchema(options: CaseInsensitiveStringMap): StructType = {
    val opts = options.asCaseSensitiveMap().asScala.toMap
    val table = VersionedTable.fromOptions(SparkSession.active, path(options), opts, None)
    table.requireSnapshot
    inferred = Some(opts -> table)
    table.schema()
  }

  override def getTable(schema: StructType, partitioning: Array[Transform], properties: util.Map[String, String]): Table = {
    val opts = properties.asScala.toMap
    val resolved = inferred
    inferred = None // used once: a provider asked again resolves again
    resolved.collect { case (o, t) if o == opts && t.schema() == schema => t }.getOrElse(
      VersionedTable.fromOptions(SparkSession.active, path(properties), opts, Option(schema)))
  }

  override def supportsExternalMetadata(): Boolean = true
}
