package versioned.spark.read

import org.apache.spark.sql.connector.read.{Scan, ScanBuilder, SupportsPushDownFilters, SupportsPushDownLimit,
  SupportsPushDownRequiredColumns}
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.StructType
import versioned.spark.session.TableSnapshot
import versioned.spark.session.VersionedOptions.BeforeColumn

/**
 * Column pruning and filter pushdown. Filters are used to prune fragments and objects and to skip Parquet row
 * groups and pages. Spark evaluates every filter again after the merge, which keeps results correct under DIFFs
 * (see [[VersionedScan]]), except the filters the scan applies exactly itself ([[exact]]). `rowsOnly` builds scans
 * that never read columnar batches. A keyed table's scan may be asked for the metadata column `_vbefore` (the row's
 * non-key columns as read, for UPDATE and MERGE): it then reads every non-key column and wraps the scan in a
 * [[BeforeValuesScan]]; otherwise it is exactly the plain scan.
 */
private[versioned] final class VersionedScanBuilder(snapshot: TableSnapshot, tableSchema: StructType,
                                                    rowsOnly: Boolean = false)
  extends ScanBuilder with SupportsPushDownRequiredColumns with SupportsPushDownFilters with SupportsPushDownLimit {

  private val layout = snapshot.layout
  private var required: StructType = tableSchema
  private var filters: Array[Filter] = Array.empty
  private var applied: Array[Filter] = Array.empty
  private var limit: Option[Int] = None

  override def pruneColumns(requiredSchema: StructType): Unit = required = requiredSchema

  /** Filters on `_vbefore` are Spark's; of the others, those the scan does not apply exactly. */
  override def pushFilters(fs: Array[Filter]): Array[Filter] = {
    val (before, others) = fs.partition(_.references.exists(_.startsWith(BeforeColumn)))
    filters = others
    applied = exact(others)
    before ++ others.filterNot(applied.contains)
  }

  /**
   * The filters that are exactly a set of values of an integral first key ([[KeyLookup.isKeySet]]: `key = v`,
   * `key IN (...)`, OR and AND of those), when the scan's readers keep only those keys' rows
   * ([[LookupReaders.appliesExactly]]). Spark does not evaluate them again: a key lookup then plans no filter of its
   * own, whose generated code, with the looked-up values inlined as literals, Spark compiled anew for every lookup.
   */
  private def exact(fs: Array[Filter]): Array[Filter] = {
    val keySets = fs.filter(KeyLookup.isKeySet(layout, _))
    if (KeyLookup.fromFilters(layout, keySets.toSeq).exists(LookupReaders.appliesExactly(_, snapshot.onlyFragments.isDefined)))
      keySets else Array.empty
  }

  override def pushedFilters(): Array[Filter] = filters

  /** Each partition stops after `n` merged rows; Spark still applies the limit (partially pushed). */
  override def pushLimit(n: Int): Boolean = { limit = Some(n); true }

  /**
   * The scan; it reads the first key column whenever it applies key filters itself, even if Spark pruned it, and
   * every non-key column when `_vbefore` is requested.
   */
  override def build(): Scan = {
    val before = required.fieldNames.contains(BeforeColumn)
    val user = required.fields.filterNot(_.name == BeforeColumn)
    val values = if (before) layout.nonKeyColumns.filterNot(user.map(_.name).contains).map(tableSchema(_)) else Nil
    val read = StructType(user ++ values)
    val key = KeyLookup.keyField(layout).filter(f => applied.nonEmpty && !read.fieldNames.contains(f.name))
    val scan = new VersionedScan(snapshot, key.fold(read)(f => read.add(tableSchema(f.name))), filters.toSeq, limit, rowsOnly)
    if (before) new BeforeValuesScan(scan, required, layout) else scan
  }
}
