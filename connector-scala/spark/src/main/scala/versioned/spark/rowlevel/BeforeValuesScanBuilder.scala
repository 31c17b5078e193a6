package versioned.spark.rowlevel

import org.apache.spark.sql.connector.catalog.MetadataColumn
import org.apache.spark.sql.connector.read._
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types._
import versioned.spark.session.TableSnapshot
import versioned.spark.format.TableLayout
import versioned.spark.session.VersionedOptions.BeforeColumn
import versioned.spark.read.{VersionedScan, VersionedScanBuilder}

/**
 * Scans of keyed tables. Their metadata column `_vbefore` is the struct of a row's non-key columns as
 * read: UPDATE and MERGE require it ([[VersionedDeltaOperation]]), so the commit has the old values of
 * the rows they change (to drop updates that change nothing) without looking them up again. When
 * `_vbefore` is not requested this is exactly the plain scan.
 */
private[versioned] final class BeforeValuesScanBuilder(snapshot: TableSnapshot, tableSchema: StructType)
  extends ScanBuilder with SupportsPushDownRequiredColumns with SupportsPushDownFilters with SupportsPushDownLimit {

  private val layout = snapshot.layout
  private val inner = new VersionedScanBuilder(snapshot, tableSchema)
  private var required: StructType = tableSchema

  override def pruneColumns(requiredSchema: StructType): Unit = {
    required = requiredSchema
    val user = requiredSchema.fields.filterNot(_.name == BeforeColumn)
    val values = if (requiredSchema.fieldNames.contains(BeforeColumn))
      layout.nonKeyColumns.filterNot(user.map(_.name).contains).map(tableSchema(_)) else Nil
    inner.pruneColumns(StructType(user ++ values))
  }

  /** Filters on `_vbefore` are Spark's; of the others, those the inner scan does not apply exactly. */
  override def pushFilters(filters: Array[Filter]): Array[Filter] = {
    val (before, others) = filters.partition(_.references.exists(_.startsWith(BeforeColumn)))
    before ++ inner.pushFilters(others)
  }

  override def pushedFilters(): Array[Filter] = inner.pushedFilters()

  override def pushLimit(n: Int): Boolean = inner.pushLimit(n)

  override def build(): Scan = inner.build() match {
    case s: VersionedScan if required.fieldNames.contains(BeforeColumn) => new BeforeValuesScan(s, required, layout)
    case s => s
  }
}

private[versioned] object BeforeValuesScanBuilder {
  /** The struct type of `_vbefore`; None for a table without non-key columns (there is nothing to carry). */
  def beforeType(layout: TableLayout): Option[StructType] =
    Option.when(!layout.hidden && layout.nonKeyColumns.nonEmpty)(StructType(layout.nonKeyColumns.map(layout.schema(_))))

  /** The `_vbefore` metadata column of a keyed table with non-key columns. */
  def column(layout: TableLayout): Option[MetadataColumn] = beforeType(layout).map { t =>
    new MetadataColumn {
      override def name(): String = BeforeColumn
      override def dataType(): DataType = t
      override def isNullable: Boolean = true
      override def comment(): String = "the row's non-key columns as read (old values for UPDATE and MERGE)"
    }
  }
}
