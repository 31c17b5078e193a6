package versioned.spark.catalog

import versioned.core.format.WriteMode

import java.util
import scala.jdk.CollectionConverters._
import org.apache.spark.sql.connector.catalog.{StagedTable, SupportsWrite, TableCapability}
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, SupportsTruncate, Write, WriteBuilder}
import org.apache.spark.sql.types.StructType
import versioned.spark.VersionedTable
import versioned.spark.write.{StagedWrite, WriteRequest}

/**
 * CREATE TABLE AS SELECT, REPLACE TABLE [AS SELECT] and CREATE OR REPLACE: the new table's definition
 * and its data become one commit. With a query, the write itself commits (a new SNAP with the new
 * schema and key, replacing any previous content); without one (REPLACE TABLE ... (cols)),
 * [[commitStagedChanges]] commits an empty table version.
 *
 * @param replace the table may already exist and is replaced
 */
private[catalog] final class StagedVersionedTable(
    table: VersionedTable,
    target: TableTarget,
    newSchema: StructType,
    primaryKey: Seq[String],
    replace: Boolean,
    ddl: TableDdl) extends StagedTable with SupportsWrite {

  @volatile private var written = false

  override def name(): String = table.name()
  override def schema(): StructType = newSchema
  override def properties(): util.Map[String, String] =
    Map("provider" -> "versioned", "primaryKey" -> primaryKey.mkString(",")).asJava
  override def capabilities(): util.Set[TableCapability] =
    Set(TableCapability.BATCH_WRITE, TableCapability.TRUNCATE).asJava

  /** RTAS asks to truncate first; a replacing write overwrites anyway, so truncation is implied. */
  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder = new WriteBuilder with SupportsTruncate {
    override def truncate(): WriteBuilder = this
    override def build(): Write = {
      written = true
      val options = table.options ++ info.options().asCaseSensitiveMap().asScala
      val verb = if (replace) "replace" else "create"
      val base = WriteRequest.from(table, options, if (replace) WriteMode.Overwrite else WriteMode.Append)
      // the key of the statement (PRIMARY KEY, property primaryKey), else the write's option (writeTo(...).option(
      // "primaryKey", ...).create(), saveAsTable); both given, they must agree
      val key = (primaryKey, base.primaryKey.filter(_.nonEmpty)) match {
        case (k, Some(o)) if k.nonEmpty && k.map(_.toLowerCase) != o.map(_.toLowerCase) => throw new versioned.core.SchemaMismatchException(
          s"The table's PRIMARY KEY (${k.mkString(", ")}) and write option primaryKey='${o.mkString(",")}' disagree; give one.")
        case (k, o) => if (k.nonEmpty) k else o.getOrElse(Seq.empty)
      }
      val req = base.copy(primaryKey = Some(key),
        message = if (options.keys.exists(_.equalsIgnoreCase("message"))) base.message else s"$verb table ${target.table} as select")
      new StagedWrite(table.copy(newSchema = Some(newSchema)), req, info.schema())
    }
  }

  override def commitStagedChanges(): Unit =
    if (!written) ddl.createEmpty(target, newSchema, primaryKey, replace = replace)

  override def abortStagedChanges(): Unit = ()
}
