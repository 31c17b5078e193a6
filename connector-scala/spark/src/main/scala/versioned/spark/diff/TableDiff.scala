package versioned.spark.diff

import java.util.concurrent.atomic.AtomicLong
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import versioned.core.{Engine, Image, Revision, TableNotFoundException}
import versioned.spark.session._
import versioned.spark.format._
import versioned.spark.read.PinnedRead

/**
 * Row-level diff of one table between two versions, as a DataFrame with `_change` ('insert',
 * 'delete', 'update'), the key columns and, for every other column, `<c>_before` / `<c>_after`.
 * Key-less tables compare whole rows (with multiplicity): only inserts and deletes.
 *
 * Cost follows the change (see docs/DIFF.md): fragment by fragment, equal chains are not read, chains
 * that are a common prefix plus DIFFs are diffed from those DIFFs and a key lookup in the prefix
 * ([[FastDiff]]), other fragments are compared whole ([[FullDiff]]). Across a schema change the
 * columns are aligned ([[DiffShape]]) and the versions compared whole.
 */
private[versioned] object TableDiff {
  val ChangeColumn = "_change"

  /** Fragments diffed from their extra DIFFs, fragments compared whole, whole-table comparisons (for tests). */
  private[versioned] val fastFragments = new AtomicLong()
  private[versioned] val comparedFragments = new AtomicLong()
  private[versioned] val wholeComparisons = new AtomicLong()

  def diff(spark: SparkSession, location: Map[String, String], table: String, from: Revision, to: Revision): DataFrame = {
    val ident = TableIdent.parse(table)
    val engine = Warehouses.engine(spark, location)
    diff(spark, location, table, engine.resolve(ident.repo, from), engine.resolve(ident.repo, to))
  }

  /**
   * The diff between two resolved images (of the table's repository). `fastPath` false compares every
   * changed fragment whole (the reference the fast path is tested against).
   */
  def diff(spark: SparkSession, location: Map[String, String], table: String, from: Image, to: Image,
           fastPath: Boolean = true): DataFrame = {
    val ident = TableIdent.parse(table)
    val engine = Warehouses.engine(spark, location)
    val (a, b) = snapshots(engine, ident, from, to)
    if (a.isEmpty && b.isEmpty) throw absent(ident.repo, ident.table, from, to)
    of(spark, table, a, b, fastPath)((s, only, logical) => PinnedRead.table(spark, location, ident, s.image.hash, only, logical))
  }

  /**
   * The diff between two versions given as snapshots, which need not be committed (a transaction's
   * uncommitted version, whose objects are stored): each is read as given ([[PinnedRead.snapshot]]).
   */
  def versions(spark: SparkSession, location: Map[String, String], from: TableSnapshot, to: TableSnapshot): DataFrame = {
    // an uncommitted version's hash field may still be its parent's: compare content hashes
    def hashed(s: TableSnapshot) = s.copy(version = s.version.withHash)
    of(spark, s"${to.repo}.${to.table}", Some(hashed(from)), Some(hashed(to)), fastPath = true)((s, only, logical) =>
      PinnedRead.snapshot(spark, location, s, only, logical))
  }

  /**
   * The diff of two versions of one table (of `shape`) computed now, on the driver, when the metastore alone says it
   * is small: equal versions (no rows), or every changed fragment diffed from the DIFFs both sides appended to a
   * common prefix, at most `localCommitMaxRows` rows of them ([[FastDiff.onDriver]]; `cache`: the readers of a batch of
   * diffs). Otherwise None ([[diff]] plans it).
   */
  def onDriver(spark: SparkSession, shape: DiffShape, a: TableSnapshot, b: TableSnapshot,
               cache: Option[FastDiff.ReaderCache] = None): Option[Seq[Row]] =
    if (!shape.exact) None
    else if (a.version.hash.nonEmpty && a.version.hash == b.version.hash) Some(Nil)
    else DiffPlan.plan(a.version, b.version, a.objects ++ b.objects) match {
      case p: DiffPlan.ByFragment if p.slow.isEmpty && FastDiff.supports(shape) =>
        val rows = if (p.fast.isEmpty) Some(Nil) else FastDiff.onDriver(spark, a.config, b.layout, shape, p.fast, a.objects ++ b.objects, cache)
        rows.foreach(_ => fastFragments.addAndGet(p.fast.size))
        rows
      case _ => None
    }

  /** The diff of two snapshots (not both absent); `read` reads a snapshot, some of its fragments, a representation. */
  private def of(spark: SparkSession, table: String, a: Option[TableSnapshot], b: Option[TableSnapshot], fastPath: Boolean)(
      readAs: (TableSnapshot, Option[Seq[Int]], Boolean) => DataFrame): DataFrame = {
    val shape = DiffShape.of(table, a.map(_.layout), b.map(_.layout))
    def read(s: TableSnapshot, rep: DiffPlan.Rep, only: Option[Seq[Int]]): DataFrame =
      readAs(s, only, rep == DiffPlan.Logical && s.version.compacted.isDefined)
    (a, b) match {
      case (Some(x), Some(y)) if shape.exact =>
        if (x.version.hash.nonEmpty && x.version.hash == y.version.hash) return empty(spark, shape)
        DiffPlan.plan(x.version, y.version, x.objects ++ y.objects) match {
          case DiffPlan.Whole =>
            wholeComparisons.incrementAndGet()
            FullDiff(shape, Some(x.layout -> read(x, DiffPlan.Compacted, None)), Some(y.layout -> read(y, DiffPlan.Compacted, None)))
          case p: DiffPlan.ByFragment =>
            val useFast = fastPath && FastDiff.supports(shape)
            val fast = if (useFast) p.fast else Nil
            val slow = (p.slow ++ (if (useFast) Nil else p.fast.map(_.index))).sorted
            fastFragments.addAndGet(fast.size)
            comparedFragments.addAndGet(slow.size)
            val parts = Seq(
              Option.when(fast.nonEmpty)(FastDiff.frame(spark, x.config, y.layout, shape, fast, x.objects ++ y.objects)),
              Option.when(slow.nonEmpty)(FullDiff(shape, Some(x.layout -> read(x, p.repFrom, Some(slow))),
                Some(y.layout -> read(y, p.repTo, Some(slow)))))).flatten
            if (parts.isEmpty) empty(spark, shape) else parts.reduce(_ union _)
        }
      case _ =>
        wholeComparisons.incrementAndGet()
        FullDiff(shape, a.map(s => s.layout -> read(s, DiffPlan.Compacted, None)), b.map(s => s.layout -> read(s, DiffPlan.Compacted, None)))
    }
  }

  /** TABLE_NOT_FOUND for a table that neither image has. */
  def absent(repo: String, table: String, from: Image, to: Image): TableNotFoundException =
    new TableNotFoundException(repo, table, s"either version (${from.shortHash}, ${to.shortHash})")

  /**
   * The table's snapshots in both images: each table row read once, and the records of both versions' objects in one
   * query (the prefix the versions share, most of their objects, is not read twice).
   */
  private def snapshots(engine: Engine, ident: TableIdent, from: Image, to: Image): (Option[TableSnapshot], Option[TableSnapshot]) = {
    val va = engine.tableOption(ident.repo, from.hash, ident.table)
    val vb = if (to.hash == from.hash) va else engine.tableOption(ident.repo, to.hash, ident.table)
    val metas = engine.objects((va.toSeq ++ vb).flatMap(_.objectIds).distinct)
    (va.map(TableSnapshot.within(engine.config, ident.repo, from, _, metas)),
      vb.map(TableSnapshot.within(engine.config, ident.repo, to, _, metas)))
  }

  private def empty(spark: SparkSession, shape: DiffShape): DataFrame =
    spark.createDataFrame(spark.sparkContext.emptyRDD[Row], shape.resultSchema)
}
