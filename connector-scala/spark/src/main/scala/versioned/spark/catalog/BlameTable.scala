package versioned.spark.catalog

import java.util
import scala.jdk.CollectionConverters._
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.connector.catalog.{SupportsRead, Table, TableCapability}
import org.apache.spark.sql.connector.read.{Scan, ScanBuilder}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import versioned.core.{Engine, Revision, TableNotFoundException}
import versioned.spark.diff.Blame
import versioned.spark.session.TableIdent

/**
 * The `t$blame` metadata table (docs/BLAME.md): [[Blame]] of a table at a revision (`t@dev$blame`, `VERSION AS OF`),
 * in the schema of its version there. Like every metadata table it is computed when a scan is built and returned
 * through the driver; `Repository.blame` is the distributed DataFrame for very large tables.
 */
private[catalog] final class BlameTable(engine: Engine, location: Map[String, String], target: MetaTarget,
                                        revision: Revision, tableSchema: StructType) extends Table with SupportsRead {
  override def name(): String = s"${target.repo}.${target.table.getOrElse("")}$$${MetaKind.Blame.name}"
  override def schema(): StructType = tableSchema
  override def capabilities(): util.Set[TableCapability] = Set(TableCapability.BATCH_READ).asJava
  override def properties(): util.Map[String, String] = Map("provider" -> "versioned", "metadata" -> "true").asJava

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = new ScanBuilder {
    override def build(): Scan = {
      val toInternal = CatalystTypeConverters.createToCatalystConverter(tableSchema)
      val rows = Blame.frame(SparkSession.active, engine, location, TableIdent(target.repo, target.table.get), revision)
        .collect().map(r => toInternal(r).asInstanceOf[InternalRow])
      new MetadataScan(tableSchema, rows)
    }
  }
}

private[catalog] object BlameTable {
  /** Resolves the revision and the table now, so a missing table fails at analysis (`TABLE_NOT_FOUND`). */
  def load(engine: Engine, location: Map[String, String], target: MetaTarget, revision: Revision): BlameTable = {
    val image = engine.resolve(target.repo, revision)
    val name = target.table.get
    val t = engine.tableOption(target.repo, image.hash, name).getOrElse(
      throw new TableNotFoundException(target.repo, name, s"image ${image.shortHash}"))
    new BlameTable(engine, location, target, Revision.Spec(image.hash), Blame.schema(t))
  }
}
