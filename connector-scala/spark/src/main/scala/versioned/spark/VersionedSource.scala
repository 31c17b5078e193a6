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

/** The `versioned` data source: `spark.read.format("versioned").option("ref", "main").load("repo.table")`. */
class VersionedSource extends TableProvider with DataSourceRegister {
  override def shortName(): String = "versioned"

  private def path(options: util.Map[String, String]): String =
    Option(options.get("path")).getOrElse(throw Errors.invalidOption(
      "No table given. Use load(\"<repository>.<table>\") or save(\"<repository>.<table>\")."))

  override def inferSchema(options: CaseInsensitiveStringMap): StructType = {
    val opts = options.asCaseSensitiveMap().asScala.toMap
    val table = VersionedTable.fromOptions(SparkSession.active, path(options), opts, None)
    table.requireSnapshot
    table.schema()
  }

  override def getTable(schema: StructType, partitioning: Array[Transform], properties: util.Map[String, String]): Table =
    VersionedTable.fromOptions(SparkSession.active, path(properties), properties.asScala.toMap, Option(schema))

  override def supportsExternalMetadata(): Boolean = true
}
