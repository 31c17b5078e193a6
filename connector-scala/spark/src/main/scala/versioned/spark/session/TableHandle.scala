package versioned.spark.session

import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import versioned.core.{Engine, Revision, WarehouseConfig}

/**
 * What writes and row-level operations know of the table they change: the DSv2 table
 * (`versioned.spark.VersionedTable`) as an immutable value, seen from below, so that the write and
 * row-level packages do not depend on the package that builds their builders.
 */
private[versioned] trait TableHandle {
  def ident: TableIdent
  def config: WarehouseConfig
  def revision: Revision
  def branch: Option[String]
  def options: Map[String, String]
  def engine: Engine
  /** The resolved table, or None when a write creates it. */
  def snapshot: Option[TableSnapshot]
  def requireSnapshot: TableSnapshot
  /** A scan of this table (a row-level operation reads the rows it changes). */
  def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder
}
