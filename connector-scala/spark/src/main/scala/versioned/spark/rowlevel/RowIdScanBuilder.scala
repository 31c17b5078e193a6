package versioned.spark.rowlevel

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, CreateNamedStruct, Expression, Literal}
import org.apache.spark.sql.connector.catalog.MetadataColumn
import org.apache.spark.sql.connector.read._
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.{DataType, StructType}
import versioned.spark.session.TableSnapshot
import versioned.spark.format.TableLayout
import versioned.spark.session.VersionedOptions.RowIdColumn
import versioned.spark.read.{ProjectingReaderFactory, VersionedScanBuilder}

/**
 * Scans of key-less tables. Such a table's row identity is the whole row plus the hidden `_vdup`
 * ordinal; Spark requires row ids to be non-nullable, so the identity is exposed as one non-null
 * metadata column `_vrowid` (a struct of every user column and `_vdup`). When `_vrowid` is not
 * requested this is exactly the plain scan (pruning, filters and limit are handed to it).
 */
private[versioned] final class RowIdScanBuilder(snapshot: TableSnapshot, tableSchema: StructType)
  extends ScanBuilder with SupportsPushDownRequiredColumns with SupportsPushDownFilters with SupportsPushDownLimit {

  private val layout = snapshot.layout
  private var required: StructType = tableSchema
  private var pushed: Array[Filter] = Array.empty
  private var limit: Option[Int] = None

  override def pruneColumns(requiredSchema: StructType): Unit = required = requiredSchema

  override def pushFilters(filters: Array[Filter]): Array[Filter] = {
    pushed = filters.filterNot(_.references.exists(_.startsWith(RowIdColumn)))
    filters
  }

  override def pushedFilters(): Array[Filter] = pushed

  override def pushLimit(n: Int): Boolean = { limit = Some(n); true }

  override def build(): Scan = {
    val withRowId = required.fieldNames.contains(RowIdColumn)
    // RowIdScan projects the inner factory's rows, so that scan must be planned in row mode.
    val inner = new VersionedScanBuilder(snapshot, layout.physicalSchema, rowsOnly = withRowId)
    inner.pruneColumns(if (withRowId) layout.physicalSchema else required)
    inner.pushFilters(pushed)
    limit.foreach(inner.pushLimit)
    val scan = inner.build()
    if (withRowId) new RowIdScan(scan, required, layout) else scan
  }
}

private[versioned] object RowIdScanBuilder {
  def rowIdType(layout: TableLayout): StructType = layout.physicalSchema

  /** The `_vrowid` metadata column of a key-less table. */
  def column(layout: TableLayout): MetadataColumn = new MetadataColumn {
    override def name(): String = RowIdColumn
    override def dataType(): DataType = rowIdType(layout)
    override def isNullable: Boolean = false
    override def comment(): String = "row identity of a table without primary key: all columns and _vdup"
  }
}

/** Adds `_vrowid` to the rows of a scan that reads every physical column in row mode. */
private[rowlevel] final class RowIdScan(inner: Scan, output: StructType, layout: TableLayout)
  extends Scan with Batch with SupportsReportStatistics {
  private val physical = layout.physicalSchema

  override def readSchema(): StructType = output
  override def description(): String = s"${inner.description()} with $RowIdColumn"
  override def toBatch: Batch = this
  override def planInputPartitions(): Array[InputPartition] = inner.toBatch.planInputPartitions()

  override def estimateStatistics(): Statistics = inner match {
    case s: SupportsReportStatistics => s.estimateStatistics()
    case _ => new Statistics {
      override def sizeInBytes(): java.util.OptionalLong = java.util.OptionalLong.empty()
      override def numRows(): java.util.OptionalLong = java.util.OptionalLong.empty()
    }
  }

  override def createReaderFactory(): PartitionReaderFactory = {
    def ref(name: String): Expression = {
      val i = physical.fieldIndex(name); BoundReference(i, physical(i).dataType, physical(i).nullable)
    }
    val exprs = output.fields.toSeq.map { f =>
      if (f.name == RowIdColumn) CreateNamedStruct(physical.fields.toSeq.flatMap(p => Seq(Literal(p.name), ref(p.name))))
      else ref(f.name)
    }
    new ProjectingReaderFactory(inner.toBatch.createReaderFactory(), exprs)
  }
}
