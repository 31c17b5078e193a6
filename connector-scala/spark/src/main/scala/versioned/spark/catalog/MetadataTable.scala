package versioned.spark.catalog

import java.util
import scala.jdk.CollectionConverters._
import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.connector.catalog.{SupportsRead, Table, TableCapability}
import org.apache.spark.sql.connector.read.{LocalScan, Scan, ScanBuilder}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import versioned.core.{Engine, Revision}

/**
 * A read-only metadata table (`t$history`, `$log`, `$diff`, ...). Its rows come from the metastore when a
 * scan is built, so every query sees the current state; the scan is a local, in-memory one.
 */
private[catalog] final class MetadataTable(engine: Engine, target: MetaTarget, revision: Revision)
  extends Table with SupportsRead {

  override def name(): String =
    s"${target.repo}.${target.table.getOrElse("")}$$${target.kind.name}"
  override def schema(): StructType = MetadataViews.schema(target)
  override def capabilities(): util.Set[TableCapability] = Set(TableCapability.BATCH_READ).asJava
  override def properties(): util.Map[String, String] = Map("provider" -> "versioned", "metadata" -> "true").asJava

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = new ScanBuilder {
    override def build(): Scan = {
      val s = schema()
      val toInternal = CatalystTypeConverters.createToCatalystConverter(s)
      new MetadataScan(s, MetadataViews.rows(engine, target, revision).map(r => toInternal(r).asInstanceOf[InternalRow]).toArray)
    }
  }
}

private[catalog] object MetadataTable {
  /** Validates the target eagerly, so a bad name or revision fails at analysis with a clear error. */
  def load(engine: Engine, target: MetaTarget, revision: Revision): MetadataTable = {
    if (target.kind == MetaKind.Diff) DiffView.validate(engine, target, revision)
    else if (!MetadataViews.emptyRepository(engine, target.repo, revision)) {
      val image = engine.resolve(target.repo, revision)
      if (target.kind == MetaKind.Objects) engine.table(target.repo, image, target.table.get)
    }
    new MetadataTable(engine, target, revision)
  }
}

private[catalog] final class MetadataScan(schema: StructType, data: Array[InternalRow]) extends LocalScan {
  override def readSchema(): StructType = schema
  override def rows(): Array[InternalRow] = data
  override def description(): String = s"versioned metadata (${data.length} rows)"
}

