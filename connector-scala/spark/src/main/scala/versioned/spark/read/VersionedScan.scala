package versioned.spark.read

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.expressions.{Expressions, NamedReference}
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.read._
import org.apache.spark.sql.execution.datasources.FileFormat
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.network.util.JavaUtils
import org.apache.spark.sql.sources._
import org.apache.spark.sql.types.{DataType, StructField, StructType}
import versioned.core.{Fragment, ObjectKind, ObjectMeta}
import versioned.spark.session.TableSnapshot
import versioned.spark.format.{SparkKeys, Values}
import VersionedScan.Pruning

import java.util.OptionalLong

/**
 * A scan of one table version: one input partition per fragment, merged inside executors.
 *
 * Filter semantics under DIFFs: key-column filters may prune any object (a key never changes within a
 * chain); other filters may prune only the SNAP, because a DIFF row that no longer matches must still
 * supersede the base row it replaces. Deletes carry no values, so DIFFs are never value-filtered.
 *
 * Key lookups ([[KeyLookup]]): filters that restrict the first key column to a set of values, and the
 * runtime filters Spark hands over (`SupportsRuntimeV2Filtering`: `key IN (keys of the other side of a
 * join)`, from dynamic partition pruning) leave only the fragments and objects whose key ranges hold
 * one of the values, and push the values down to Parquet row groups and pages.
 *
 * @param rowsOnly read rows, never columnar batches: for wrappers that consume the reader factory's
 *                 rows (the row-id scan of key-less tables)
 */
private[versioned] final class VersionedScan(snapshot: TableSnapshot, readSchema0: StructType, filters: Seq[Filter],
                                             limit: Option[Int] = None, rowsOnly: Boolean = false)
  extends Scan with Batch with SupportsReportStatistics with SupportsRuntimeV2Filtering {

  private val layout = snapshot.layout
  private val keySet = layout.keyColumns.toSet
  private val keyFilters = filters.filter(_.references.forall(keySet.contains))
  private val pruning = new Pruning(layout.physicalSchema)
  private val staticLookup = (KeyLookup.fromFilters(layout, filters).toSeq ++
    snapshot.lookupKeys.flatMap(ks => KeyLookup.keyField(layout).map(KeyLookup.of(_, ks)))).reduceOption(_ intersect _)
  private var runtimeLookup: Option[KeyLookup] = None
  /** The key values this scan is restricted to, if any: from its filters and runtime filters. */
  def lookup: Option[KeyLookup] = (staticLookup.toSeq ++ runtimeLookup).reduceOption(_ intersect _)
  /**
   * The lookup DIFFs may be pruned by (objects skipped, the lookup pushed to their pages), given the scan's `look`:
   * a DIFF page or object holding a newer change of a key outside the lookup (a delete of a neighbour of a
   * looked-up key) must not be skipped while the SNAP page holding that key's old row is read, unless that row is
   * dropped anyway. So the whole lookup when the readers drop every row of other keys ([[lookupKeys]]); else one
   * made only of the scan's own filters, which Spark evaluates again after the scan (a runtime filter, such as a
   * row-level UPDATE's `key IN (...)` of a string key, and an internal read's keys are not evaluated again: rows of
   * other keys would come back with their old values).
   */
  private def diffLookup(look: Option[KeyLookup]): Option[KeyLookup] =
    if (lookupKeys.isDefined) look
    else if (runtimeLookup.isEmpty && snapshot.lookupKeys.isEmpty) staticLookup
    else None
  /**
   * Filters pushed down to Parquet: `fs` (the scan's own for SNAPs, its key filters for DIFFs) and the filter of
   * `look` (on the key: any object). Filters that are exactly a set of key values are left out when the lookup's
   * filter selects exactly its values, which implies them: Parquet would evaluate the same values twice against
   * every page, and decode both for every object.
   */
  private def withLookup(fs: Seq[Filter], look: Option[KeyLookup]): Seq[Filter] = look.fold(fs) { l =>
    (if (l.filterIsExact) fs.filterNot(keySetFilters) else fs) ++ l.filter
  }
  private lazy val keySetFilters: Set[Filter] = filters.filter(KeyLookup.isKeySet(layout, _)).toSet

  override def readSchema(): StructType = readSchema0
  override def toBatch: Batch = this
  override def description(): String =
    s"versioned ${snapshot.repo}.${snapshot.table} @ ${snapshot.image.shortHash} filters=[${filters.mkString(", ")}]" +
      limit.map(n => s" limit=$n").getOrElse("") + lookup.map(l => s" lookup=[$l]").getOrElse("")

  /**
   * Runtime filters can restrict the first key column of keyed tables when the scan outputs it (Spark
   * resolves these attributes against the scan's output); none for key-less tables.
   */
  override def filterAttributes(): Array[NamedReference] =
    KeyLookup.keyField(layout).filter(f => readSchema0.fieldNames.contains(f.name))
      .map(f => Expressions.column(s"`${f.name.replace("`", "``")}`")).toArray

  /**
   * A runtime filter on the key: the scan is planned again with its values as a [[KeyLookup]], and the Parquet
   * readers of the factory, if already built, are rebuilt with the lookup pushed down. The factory is shipped
   * with the tasks: without the rebuild, Parquet would decode every page of every column read and only the
   * rows would be dropped.
   */
  override def filter(predicates: Array[Predicate]): Unit =
    KeyLookup.fromPredicates(layout, predicates.toSeq).foreach { l =>
      runtimeLookup = Some(runtimeLookup.fold(l)(_ intersect l))
      planned = None
      built.foreach(_.readers = scanReaders)
    }

  /** Which Parquet readers a factory holds. */
  private case class ReaderShape(columnar: Boolean, snapRows: Boolean, diffRows: Boolean, snapBatches: Boolean,
                                 mergedBatches: Boolean)
  /** The reader factory, once built. */
  private var built: Option[FragmentReaderFactory] = None

  /**
   * A fragment's share of the scan's lookup (`look`) and of [[diffLookup]] (`diffLook`): the values its key range
   * may hold, which its readers push down to Parquet.
   */
  private case class Looks(look: Option[KeyLookup], diffLook: Option[KeyLookup])
  /** The partitions of a plan and, when the scan has a lookup, each planned fragment's [[Looks]]. */
  private case class Plan(parts: Array[FragmentPartition], looks: Option[Map[Int, Looks]])
  private var planned: Option[Plan] = None

  /** Fragments and objects that survive pruning, computed once per scan (again after a runtime filter). */
  def partitions: Array[FragmentPartition] = plan.parts

  /**
   * The plan: with a key lookup, split once by fragment ([[KeyLookup.byFragments]]: sorted values, binary search on
   * the fragments' lower bounds), so that a fragment holding none of the values is neither planned nor opened, and
   * each fragment's objects are pruned by, and read with, only the values in its range.
   */
  private def plan: Plan = planned.getOrElse {
    val frags = snapshot.version.effectiveFragments
    val uppers = frags.drop(1).map(_.lower) :+ None
    val look = lookup
    val diffLook = diffLookup(look)
    def split(l: KeyLookup) = l.byFragments(frags.map(_.lower), layout.keyColumns.size)
    val looks = look.map(split)
    val diffLooks = diffLook.map(d => if (look.exists(_ eq d)) looks.get else split(d))
    def looksOf(i: Int) = Looks(looks.map(_(i)), diffLooks.map(_(i)))
    val ps = frags.zip(uppers).zipWithIndex
      .filter { case (_, i) => snapshot.onlyFragments.forall(_.contains(i)) }
      .flatMap { case ((f, upper), i) => planFragment(f, upper, i, looksOf(i)) }.toArray
    val p = Plan(ps, look.map(_ => ps.map(part => part.index -> looksOf(part.index)).toMap))
    planned = Some(p)
    p
  }

  private def planFragment(f: Fragment, upper: Option[Seq[Any]], index: Int, looks: Looks): Option[FragmentPartition] = {
    val fb = pruning.fragmentBounds(layout.keyColumns.head, f.lower, upper)
    if (!keyFilters.forall(pruning.mayMatch(_, fb))) return None
    val look = looks.look
    if (look.exists(_.values.isEmpty)) return None
    def canon(v: Option[Any], l: KeyLookup) = v.filter(_ != null).map(Values.fromJson(_, l.field.dataType))
    val metas = f.objects.map(snapshot.objects)
    def holds(m: ObjectMeta, l: KeyLookup) = l.mayHold(canon(m.minValues.get(l.field.name), l), canon(m.maxValues.get(l.field.name), l))
    def matches(m: ObjectMeta, fs: Seq[Filter]) = fs.forall(pruning.mayMatch(_, pruning.objectBounds(m.minValues, m.maxValues)))
    // the SNAP may always be skipped by the lookup (DIFF rows are whole rows); DIFFs only by `diffLookup`
    val snap = metas.headOption.filter(_.kind == ObjectKind.Snap)
      .filter(m => m.rowCount > 0 && look.forall(holds(m, _)) && matches(m, filters))
    val diffs = metas.filter(_.kind == ObjectKind.Diff)
      .filter(m => m.rowCount > 0 && looks.diffLook.forall(holds(m, _)) && matches(m, keyFilters))
    // a lookup reads about one page per key of each column (pages of `ParquetSink.PageRows` rows)
    val rows = math.max(1L, metas.map(_.rowCount).sum)
    val share = look.fold(1.0)(l => math.min(1.0, l.values.size.toDouble * versioned.core.format.ObjectShape.PageRows / rows))
    // the read rule: each object within the fragment's bounds (a no-op for objects whose keys all are)
    val bounds = FragmentBounds(layout.keyColumns, layout.keyTypes, f.lower, upper)
    def file(m: ObjectMeta) = bounds.file(snapshot.config, m)
    if (snap.isEmpty && diffs.isEmpty) None
    else Some(FragmentPartition(index, snap.map(file), diffs.map(file), share))
  }

  /**
   * Input partitions: consecutive fragments packed like small files ([[VersionedScan.groups]]) by the bytes they read
   * (with a key lookup, about the share of their pages that hold its keys), except in
   * scans restricted to some fragments (rewrites), which keep one partition per fragment.
   */
  override def planInputPartitions(): Array[InputPartition] =
    if (snapshot.onlyFragments.isDefined) partitions.map(p => FragmentGroup(Seq(p)): InputPartition)
    else {
      val keys = lookupKeys
      VersionedScan.groups(SparkSession.active, partitions.toSeq.map(_.readBytes))
        .map(r => FragmentGroup(r.map(partitions), keys): InputPartition).toArray
    }

  /** The output ordinal and type of the first key column when lookups can be applied to rows. */
  private def lookupKey: Option[(Int, org.apache.spark.sql.types.DataType)] =
    KeyLookup.keyField(layout).filter(f => LookupReaders.supports(f.dataType) && readSchema0.fieldNames.contains(f.name))
      .map(f => (readSchema0.fieldIndex(f.name), f.dataType))

  /** The lookup's values for the readers (sorted `long`s), when they apply them. */
  private def lookupKeys: Option[Array[Long]] = for {
    _ <- lookupKey; l <- lookup if LookupReaders.appliesExactly(l, snapshot.onlyFragments.isDefined)
  } yield l.values.map(_.asInstanceOf[Long]).toArray

  override def supportedCustomMetrics(): Array[org.apache.spark.sql.connector.metric.CustomMetric] = ScanMetrics.supported

  override def reportDriverMetrics(): Array[org.apache.spark.sql.connector.metric.CustomTaskMetric] =
    ScanMetrics.values(snapshot.version.effectiveFragments.size, partitions.toSeq)

  private def others = readSchema0.fieldNames.filterNot(keySet.contains).toSeq
  /** Key columns, then the other columns read: the layout of SNAP rows. */
  private def merged = layout.keyFirst(others)

  /**
   * Spark asks whether the scan is columnar while planning, possibly on more than one copy of its plan: answered
   * from the readers' shape, so that no Parquet reader (each broadcasts a Hadoop configuration) is built for it.
   */
  override def columnarSupportMode(): Scan.ColumnarSupportMode =
    if (columnar) Scan.ColumnarSupportMode.SUPPORTED else Scan.ColumnarSupportMode.UNSUPPORTED

  /**
   * The scan's one reader factory: built on first use and shared by every copy of the plan (a runtime filter
   * replaces its readers, see [[filter]]).
   */
  override def createReaderFactory(): PartitionReaderFactory = built.getOrElse {
    // Runtime filters arrive after the factory is built: every scan of a keyed table whose output has an
    // integral first key can apply the lookup values its partitions carry (and `filter` rebuilds the readers).
    val factory = new FragmentReaderFactory(scanReaders, merged, layout.keyColumns.size,
      readSchema0.fieldNames.map(merged.fieldIndex), limit, if (snapshot.onlyFragments.isDefined) None else lookupKey)
    built = Some(factory)
    factory
  }

  /**
   * Whether the scan is columnar: decided once, from the partitions planned first (Spark asks while planning, and
   * the answer must hold for the plan). A runtime filter only removes fragments and objects, so a later plan's
   * DIFFs still fit.
   */
  private lazy val columnar: Boolean = {
    val spark = SparkSession.active
    val format = new ParquetFileFormat()
    // a SNAP read within its fragment's bounds is read as rows (never written so: SNAPs hold their fragment's keys)
    !rowsOnly && limit.isEmpty && partitions.nonEmpty && readSchema0.nonEmpty && format.supportBatch(spark, readSchema0) &&
      !partitions.exists(_.snap.exists(_.bounds.isDefined)) &&
      (!partitions.exists(_.diffs.nonEmpty) || (snapshot.onlyFragments.isEmpty && overlayFits(spark, format, merged)))
  }

  /**
   * Which readers the factory holds for the partitions planned now: a runtime filter plans again and may leave a
   * fragment its SNAP without its DIFFs (their key ranges miss the values), or its DIFFs without the SNAP, so the
   * kinds are taken from the current plan each time readers are built.
   */
  private def shape(ps: Seq[FragmentPartition]): ReaderShape = {
    val limit = maxOverlayRows // the session's setting, read once for every partition
    val overlays = (p: FragmentPartition) => FragmentReaders.overlays(p, limit)
    val underDiffs = ps.filter(p => p.diffs.nonEmpty && p.snap.isDefined)
    ReaderShape(columnar, snapRows = if (columnar) underDiffs.exists(!overlays(_)) else ps.exists(_.snap.isDefined),
      diffRows = ps.exists(_.diffs.nonEmpty), snapBatches = columnar && ps.exists(_.diffs.isEmpty),
      mergedBatches = columnar && underDiffs.exists(overlays))
  }

  private def maxOverlayRows: Long = versioned.spark.session.Warehouses.maxOverlayRows(SparkSession.active)

  /**
   * The readers of the partitions planned now. Without a lookup, one set for every fragment. With one, runs of
   * consecutive planned fragments get their own set, pushing down only their share of the lookup ([[Looks]]):
   * Spark's Parquet reader converts, serializes and evaluates its filter for every object it opens, so readers
   * given the whole lookup cost O(values) per object, and a lookup of scattered keys O(values x fragments). But
   * every set of readers costs its own Hadoop configuration copy and broadcast: [[VersionedScan.readerGroups]]
   * balances the two.
   */
  private def scanReaders: ScanReaders = {
    val p = plan
    p.looks match {
      case None => ScanReaders(readers(shape(p.parts.toSeq), filters, keyFilters))
      case Some(looks) =>
        val runs = lookup.fold(0)(_.runCount)
        // a LookupFileReader costs no more than its filter: one per fragment
        val sets = if (lookupFiles.isDefined) p.parts.length else VersionedScan.readerGroups(p.parts.length, runs)
        val groups = p.parts.toSeq.grouped(math.max(1, math.ceil(p.parts.length.toDouble / sets).toInt)).toSeq
        columnar; objectConf // decided once, before the sets are built in parallel
        // the sets are built on the driver's threads at once (each mostly serializes and stores its broadcasts)
        ScanReaders(readers(shape(Nil), Nil, Nil), versioned.spark.session.Jobs.onDriver(groups) { g =>
          val ls = g.map(part => looks(part.index))
          val (look, diffLook) = (KeyLookup.union(ls.flatMap(_.look)), KeyLookup.union(ls.flatMap(_.diffLook)))
          val r = if (lookupFiles.isDefined) lookupReaders(shape(g), look, diffLook)
            else readers(shape(g), withLookup(filters, look), withLookup(keyFilters, diffLook))
          g.map(_.index -> r)
        }.flatten.toMap)
    }
  }

  /**
   * For a lookup read as rows on the driver ([[LocalLookup]], `rowsOnly`) whose readers keep only the lookup's rows
   * ([[lookupKeys]]): the configurations of [[LookupFileReader]]s of SNAPs and DIFFs, prepared once per scan, when
   * that reader supports the key and columns. Such a lookup opens each fragment for a few rows, and that reader
   * opens an object for less than Spark's.
   */
  private lazy val lookupFiles: Option[VersionedScan.LookupFiles] = for {
    key <- KeyLookup.keyField(layout) if rowsOnly && lookupKeys.isDefined
    diffRead = layout.diffRead(others) if LookupFileReader.supports(key, merged, diffRead)
  } yield {
    val spark = SparkSession.active
    val diffConf = LookupFileReader.conf(spark, layout.diffSchema, diffRead)
    VersionedScan.LookupFiles(key, LookupFileReader.conf(spark, layout.physicalSchema, merged), diffRead, diffConf,
      LookupFileReader(diffConf, diffRead, key, None), versioned.spark.session.Warehouses.localCommitMaxRows(spark))
  }

  /** [[lookupFiles]]' readers of `shape` (rows), SNAPs keeping the rows of `look`'s keys, DIFFs those of `diffLook`. */
  private def lookupReaders(shape: ReaderShape, look: Option[KeyLookup], diffLook: Option[KeyLookup]): FragmentReaders = {
    val f = lookupFiles.get
    FragmentReaders(columnar = false,
      snapRows = Option.when(shape.snapRows)(LookupFileReader(f.snapConf, merged, f.key, look)),
      diffRows = Option.when(shape.diffRows)(LookupFileReader(f.diffConf, f.diffRead, f.key, diffLook)),
      snapBatches = None, mergedBatches = None, diffCacheBytes = 0L, maxOverlayRows = maxOverlayRows,
      hadoopConf = objectConf, sharedDiffs = Option.when(shape.diffRows)((f.wholeDiffs, f.sharedRows)))
  }

  /** How readers reach objects to verify them: looked up once per scan (every set of readers shares it). */
  private lazy val objectConf = ObjectFiles.verifyingBroadcast(SparkSession.active.sparkContext)

  /** The Parquet readers of `shape`, pushing down `snapFilters` (to SNAPs) and `diffFilters` (to DIFFs). */
  private def readers(shape: ReaderShape, snapFilters: Seq[Filter], diffFilters: Seq[Filter]): FragmentReaders = {
    val spark = SparkSession.active
    val format = new ParquetFileFormat()
    // Each reader broadcasts its own copy of the Hadoop configuration: build only the ones this scan's partitions use.
    def reader(schema: StructType, read: StructType, fs: Seq[Filter], batch: Boolean) = format.buildReaderWithPartitionValues(
      spark, schema, new StructType(), read, fs.filter(VersionedScan.safeForParquet), Map(FileFormat.OPTION_RETURNING_BATCH -> batch.toString),
      ObjectFiles.verifying(spark.sparkContext.hadoopConfiguration))
    FragmentReaders(
      shape.columnar,
      snapRows = Option.when(shape.snapRows)(reader(layout.physicalSchema, merged, snapFilters, batch = false)),
      diffRows = Option.when(shape.diffRows)(reader(layout.diffSchema, layout.diffRead(others), diffFilters, batch = false)),
      snapBatches = Option.when(shape.snapBatches)(reader(layout.physicalSchema, readSchema0, snapFilters, batch = true)),
      mergedBatches = Option.when(shape.mergedBatches)(reader(layout.physicalSchema, merged, snapFilters, batch = true)),
      // DIFF reads with key filters may skip pages: their conflated rows are not the whole chain, never cached
      diffCacheBytes = if (diffFilters.isEmpty) versioned.spark.session.Warehouses.diffCacheBytes(spark) else 0L,
      maxOverlayRows = maxOverlayRows,
      hadoopConf = objectConf)
  }

  /**
   * Whether fragments with DIFFs can be read as batches: atomic output types. Each is merged column-wise when its
   * DIFFs are small enough to hold (`maxOverlayRows`), else row by row into batches ([[RowBatches]]).
   */
  private def overlayFits(spark: SparkSession, format: ParquetFileFormat, merged: StructType): Boolean =
    format.supportBatch(spark, merged) && readSchema0.forall(f => RowColumns.supports(f.dataType))

  override def estimateStatistics(): Statistics = {
    val objs = partitions.flatMap(_.objects)
    val metas = snapshot.version.effectiveFragments.flatMap(_.objects).map(snapshot.objects)
    val rows = metas.map(_.rowCount).sum
    new Statistics {
      override def sizeInBytes(): OptionalLong = OptionalLong.of(math.max(1L, objs.map(_.size).sum))
      override def numRows(): OptionalLong = OptionalLong.of(rows)
    }
  }
}

/**
 * The scan's planning rules: which fragments and objects statistics let it skip ([[VersionedScan.Pruning]]) and how
 * the fragments left are packed into input partitions ([[VersionedScan.groups]]).
 */
private[versioned] object VersionedScan {
  /**
   * The first key, the prepared configurations of SNAP reads and of DIFF reads (`diffRead`'s columns), a reader of whole
   * DIFFs, and the most rows of a DIFF shared by fragments that a lookup reads once ([[FragmentReaders.sharedDiffs]]).
   */
  private[read] final case class LookupFiles(key: StructField, snapConf: org.apache.hadoop.conf.Configuration,
                                              diffRead: StructType, diffConf: org.apache.hadoop.conf.Configuration,
                                              wholeDiffs: ObjectFiles.Reader, sharedRows: Long)

  /**
   * Decides from metastore statistics alone whether an object or a fragment may hold rows matching
   * filters. Always conservative: `true` unless the statistics prove that nothing can match.
   */
  final class Pruning(schema: StructType) {
    /** Per-column inclusive bounds (lower, upper), canonical values, either side open; None = unknown. */
    type Bounds = String => Option[(Option[Any], Option[Any])]

    private def typeOf(col: String): Option[DataType] = schema.fields.find(_.name == col).map(_.dataType)

    /** The order of one column's canonical values: the key order ([[versioned.core.format.KeyOrder]]), so pruning and the writer agree. */
    private final class Order(dt: DataType) {
      def le(a: Option[Any], b: Option[Any]): Boolean = a.isEmpty || b.isEmpty || SparkKeys.compareCanonical(dt, a.get, b.get) <= 0
      def lt(a: Option[Any], b: Option[Any]): Boolean = a.isEmpty || b.isEmpty || SparkKeys.compareCanonical(dt, a.get, b.get) < 0
    }

    def mayMatch(f: Filter, bounds: Bounds): Boolean = {
      def cmp(col: String, v: Any)(ok: (Order, Option[Any], Option[Any], Option[Any]) => Boolean): Boolean =
        (for { dt <- typeOf(col); b <- bounds(col); cv <- Values.fromFilter(v, dt) } yield ok(new Order(dt), b._1, b._2, Some(cv)))
          .getOrElse(true)
      f match {
        case And(l, r) => mayMatch(l, bounds) && mayMatch(r, bounds)
        case Or(l, r) => mayMatch(l, bounds) || mayMatch(r, bounds)
        case EqualTo(c, v) => cmp(c, v)((o, lo, hi, x) => o.le(lo, x) && o.le(x, hi))
        case EqualNullSafe(c, v) if v != null => cmp(c, v)((o, lo, hi, x) => o.le(lo, x) && o.le(x, hi))
        case In(c, vs) => vs.isEmpty || anyWithin(c, vs, bounds)
        case LessThan(c, v) => cmp(c, v)((o, lo, _, x) => o.lt(lo, x))
        case LessThanOrEqual(c, v) => cmp(c, v)((o, lo, _, x) => o.le(lo, x))
        case GreaterThan(c, v) => cmp(c, v)((o, _, hi, x) => o.lt(x, hi))
        case GreaterThanOrEqual(c, v) => cmp(c, v)((o, _, hi, x) => o.le(x, hi))
        case _ => true
      }
    }

    /**
     * The values of an `IN` list as the key order sorts them (canonical), converted once per list and column (a scan
     * asks this for every fragment and object it plans); None when a value has no canonical form here (it may match
     * anything) or the column is unknown.
     */
    private val sortedLists = new java.util.IdentityHashMap[Array[Any], Map[String, Option[(DataType, Array[Any])]]]()

    private def sorted(col: String, vs: Array[Any]): Option[(DataType, Array[Any])] = sortedLists.synchronized {
      val known = Option(sortedLists.get(vs)).getOrElse(Map.empty)
      known.getOrElse(col, {
        val out = typeOf(col).flatMap { dt =>
          val cvs = vs.map(Values.fromFilter(_, dt))
          Option.when(cvs.forall(_.isDefined)) {
            val order: Ordering[Any] = (a, b) => SparkKeys.compareCanonical(dt, a, b)
            dt -> cvs.map(_.get).sorted(order)
          }
        }
        sortedLists.put(vs, known + (col -> out))
        out
      })
    }

    /** Whether a value of `vs` may lie within `col`'s bounds: a binary search of the sorted list for the lower bound. */
    private def anyWithin(col: String, vs: Array[Any], bounds: Bounds): Boolean = (for {
      (dt, values) <- sorted(col, vs)
      (lo, hi) <- bounds(col)
    } yield {
      // the first value >= lo (every value when lo is open)
      var (from, to) = (0, values.length)
      while (from < to) {
        val mid = (from + to) >>> 1
        if (lo.exists(SparkKeys.compareCanonical(dt, values(mid), _) < 0)) from = mid + 1 else to = mid
      }
      from < values.length && new Order(dt).le(Some(values(from)), hi)
    }).getOrElse(true) // an unknown column or bounds, or a value without a canonical form: may match

    /** Bounds from an object's min/max statistics. */
    def objectBounds(min: Map[String, Any], max: Map[String, Any]): Bounds = col =>
      for { dt <- typeOf(col); lo <- min.get(col); hi <- max.get(col) if lo != null && hi != null }
        yield (Some(Values.fromJson(lo, dt)), Some(Values.fromJson(hi, dt)))

    /** Bounds of a fragment's key range on its first key column: [lower, upper] (inclusive, conservative). */
    def fragmentBounds(firstKey: String, lower: Option[Seq[Any]], upper: Option[Seq[Any]]): Bounds = col =>
      if (col != firstKey) None
      else typeOf(col).map(dt => (lower.flatMap(l => Option(l.head)).map(Values.fromJson(_, dt)), upper.flatMap(u => Option(u.head)).map(Values.fromJson(_, dt))))
  }
    /**
     * Whether Parquet's own row-group and page statistics may evaluate `f`. Parquet compares floating-point
     * statistics with `Double.compare`, so -0.0 and 0.0 differ there: a comparison with a floating-point
     * zero can skip row groups holding matching rows (plain Parquet reads in Spark 4.3 lose them). Such
     * filters are left to [[Pruning]] (key order, -0.0 = 0.0) and to Spark after the scan.
     */
    def safeForParquet(f: Filter): Boolean = {
      def zero(v: Any): Boolean = v match {
        case d: java.lang.Double => d.doubleValue() == 0.0
        case x: java.lang.Float => x.floatValue() == 0.0f
        case _ => false
      }
      f match {
        case And(l, r) => safeForParquet(l) && safeForParquet(r)
        case Or(l, r) => safeForParquet(l) && safeForParquet(r)
        case Not(c) => safeForParquet(c)
        case EqualTo(_, v) => !zero(v)
        case EqualNullSafe(_, v) => !zero(v)
        case LessThan(_, v) => !zero(v)
        case LessThanOrEqual(_, v) => !zero(v)
        case GreaterThan(_, v) => !zero(v)
        case GreaterThanOrEqual(_, v) => !zero(v)
        case In(_, vs) => !vs.exists(zero)
        case _ => true
      }
    }

  /**
   * How many sets of Parquet readers a scan of `fragments` planned fragments with a key lookup of `runs` runs builds
   * (each for consecutive fragments, pushing down their share of the lookup). A set costs milliseconds to build on
   * the driver (a Hadoop configuration copied and broadcast per reader); a filter costs each object it is pushed to
   * microseconds per run (converted, serialized, evaluated). With g sets, about g x build + fragments x runs / g x
   * run, least at g = sqrt(fragments x runs x run / build); [[RunsPerBuild]] is build / run.
   */
  def readerGroups(fragments: Int, runs: Int): Int =
    math.max(1, math.min(fragments, math.round(math.sqrt(fragments.toDouble * runs / RunsPerBuild)).toInt))

  /**
   * How many lookup runs pushed to one object cost about as much as building one set of readers: ~5 us per run and
   * object (the delete_where sweep of bench/results/scale-100m-s33/dml-profile.md: +1.5 s for 3,100 more keys over
   * 100 fragments on 2 cores) against ~3 ms per set (a MERGE of 1,000 keys over 100 fragments, one set each: ~0.35 s
   * more driver time before its scan; issue 35).
   */
  val RunsPerBuild: Double = 600.0

  /**
   * Packs a scan's fragments into input partitions. Every task has a fixed cost (scheduling, task
   * deserialization, reader setup), so small fragments share a task, sized like Spark's own packing of
   * small files (`spark.sql.files.maxPartitionBytes`, `spark.sql.files.openCostInBytes` per fragment,
   * `spark.sql.files.minPartitionNum` or the default parallelism). Groups are consecutive fragments of
   * about equal weight, and their number is a multiple of the parallelism, so the cores finish together.
   * A fragment is never split.
   */
    /** Groups of `weights` indices (consecutive, in order). */
    def groups(weights: Seq[Long], maxBytes: Long, openCost: Long, parallelism: Int): Seq[Range] = {
      val n = weights.size
      val w = weights.map(_ + openCost)
      val total = w.sum.toDouble
      if (n <= 1 || total <= 0) return if (n == 0) Nil else Seq(0 until n)
      val p = math.max(1, parallelism)
      val split = math.min(maxBytes.toDouble, math.max(openCost.toDouble, total / p))
      val needed = math.max(1, math.ceil(total / split).toInt)
      val g = math.min(n, if (needed == 1) 1 else ((needed + p - 1) / p) * p)
      // Fragment i joins the group its weight's midpoint falls in.
      val cum = w.scanLeft(0L)(_ + _)
      val of = (0 until n).map(i => math.min(g - 1, ((cum(i) + w(i) / 2.0) * g / total).toInt))
      (0 until n).groupBy(of).toSeq.sortBy(_._1).map { case (_, is) => is.min to is.max }
    }

    def groups(spark: SparkSession, weights: Seq[Long]): Seq[Range] = {
      def bytes(key: String, default: String) = JavaUtils.byteStringAsBytes(spark.conf.getOption(key).getOrElse(default))
      val parallelism = spark.conf.getOption("spark.sql.files.minPartitionNum")
        .orElse(spark.conf.getOption("spark.sql.leafNodeDefaultParallelism")).map(_.toInt)
        .getOrElse(spark.sparkContext.defaultParallelism)
      groups(weights, bytes("spark.sql.files.maxPartitionBytes", "128m"), bytes("spark.sql.files.openCostInBytes", "4m"), parallelism)
    }
}
