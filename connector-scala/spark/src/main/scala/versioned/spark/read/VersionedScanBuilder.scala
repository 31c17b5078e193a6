package versioned.spark.read

import org.apache.spark.sql.connector.read.{Scan, ScanBuilder, SupportsPushDownFilters, SupportsPushDownRequiredColumns}
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.StructType
import versioned.spark.TableSnapshot

/**
 * Column pruning and filter pushdown. Filters are used to prune fragments and objects and to skip
 * Parquet row groups; every filter is still evaluated by Spark after the merge, which keeps results
 * correct under DIFFs (see [[VersionedScan]]).
 */
private[versioned] final class VersionedScanBuilder(snapshot: TableSnapshot, tableSchema: StructType)
  extends ScanBuilder with SupportsPushDownRequiredColumns with SupportsPushDownFilters {

  private var required: StructType = tableSchema
  private var filters: Array[Filter] = Array.empty

  override def pruneColumns(requiredSchema: StructType): Unit = required = requiredSchema

  override def pushFilters(fs: Array[Filter]): Array[Filter] = { filters = fs; fs }

  override def pushedFilters(): Array[Filter] = filters

  override def build(): Scan = new VersionedScan(snapshot, required, filters.toSeq)
}
