package versioned.spark.read

import org.apache.spark.sql.connector.read.{Scan, ScanBuilder, SupportsPushDownFilters, SupportsPushDownLimit,
  SupportsPushDownRequiredColumns}
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.StructType
import versioned.spark.TableSnapshot

/**
 * Column pruning and filter pushdown. Filters are used to prune fragments and objects and to skip
 * Parquet row groups; every filter is still evaluated by Spark after the merge, which keeps results
 * correct under DIFFs (see [[VersionedScan]]). `rowsOnly` builds scans that never read columnar batches.
 */
private[versioned] final class VersionedScanBuilder(snapshot: TableSnapshot, tableSchema: StructType,
                                                    rowsOnly: Boolean = false)
  extends ScanBuilder with SupportsPushDownRequiredColumns with SupportsPushDownFilters with SupportsPushDownLimit {

  private var required: StructType = tableSchema
  private var filters: Array[Filter] = Array.empty
  private var limit: Option[Int] = None

  override def pruneColumns(requiredSchema: StructType): Unit = required = requiredSchema

  override def pushFilters(fs: Array[Filter]): Array[Filter] = { filters = fs; fs }

  override def pushedFilters(): Array[Filter] = filters

  /** Each partition stops after `n` merged rows; Spark still applies the limit (partially pushed). */
  override def pushLimit(n: Int): Boolean = { limit = Some(n); true }

  override def build(): Scan = new VersionedScan(snapshot, required, filters.toSeq, limit, rowsOnly)
}
