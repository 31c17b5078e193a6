package versioned.spark.read

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.datasources.FileFormat
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.types.StructType
import versioned.core.{ObjectKind, ObjectMeta}
import versioned.spark.session.TableSnapshot

/**
 * The rows of one table version's fragments, merged as a scan merges them ([[FragmentReaderFactory]]'s
 * row reader: the SNAP under its DIFFs, newest change per key, deletes hidden), in key order, key columns
 * first ([[versioned.spark.format.TableLayout.keyFirst]] of every other column). Built on the driver, used on
 * executors and the driver (a write that compares its rows with the version it replaces).
 *
 * @param fragments the version's non-empty fragments by index into its effective fragments
 */
private[versioned] final class ChainRows(factory: FragmentReaderFactory, val fragments: Map[Int, FragmentPartition])
  extends Serializable {

  /** The merged rows of fragment `index` (none when it is empty), with `extra` DIFFs after its own. */
  def rows(index: Int, extra: Seq[ObjectFile] = Nil): Iterator[InternalRow] = {
    val p = fragments.getOrElse(index, FragmentPartition(index, None, Nil))
    val chain = p.copy(diffs = p.diffs ++ extra)
    if (chain.objects.isEmpty) Iterator.empty
    else new ChainRows.Rows(factory.createReader(FragmentGroup(Seq(chain))))
  }

  /** Whether fragment `index` has objects with rows. */
  def nonEmpty(index: Int): Boolean = fragments.contains(index)

  /** Rows in the objects of fragment `index` (an upper bound of its merged rows). */
  def storedRows(index: Int): Long = fragments.get(index).fold(0L)(_.objects.map(_.rows).sum)
}

private[versioned] object ChainRows {
  /** The readers of `snapshot`'s effective fragments; DIFFs may be added to a chain ([[ChainRows.rows]]). */
  def of(spark: SparkSession, snapshot: TableSnapshot): ChainRows = {
    val layout = snapshot.layout
    val merged = layout.keyFirst(layout.nonKeyColumns)
    // each reader writes its requested schema into the configuration it is given: one copy per reader
    def conf = ObjectFiles.verifying(spark.sparkContext.hadoopConfiguration)
    val format = new ParquetFileFormat()
    def reader(schema: StructType, read: StructType) = format.buildReaderWithPartitionValues(
      spark, schema, new StructType(), read, Nil, Map(FileFormat.OPTION_RETURNING_BATCH -> "false"), conf)
    val readers = FragmentReaders(columnar = false,
      snapRows = Some(reader(layout.physicalSchema, merged)),
      diffRows = Some(reader(layout.diffSchema, layout.diffRead(layout.nonKeyColumns))),
      snapBatches = None, mergedBatches = None, diffCacheBytes = 0L, maxOverlayRows = Long.MaxValue,
      hadoopConf = ObjectFiles.verifyingBroadcast(spark.sparkContext))
    val factory = new FragmentReaderFactory(ScanReaders(readers), merged, layout.keyColumns.size, merged.indices.toArray, None)
    val frags = snapshot.version.effectiveFragments
    val bounds = FragmentBounds.of(layout, frags)
    val fragments = frags.zipWithIndex.flatMap { case (f, i) =>
      def file(m: ObjectMeta) = bounds(i).file(snapshot.config, m) // the read rule
      val metas = f.objects.map(snapshot.objects)
      val snap = metas.headOption.filter(m => m.kind == ObjectKind.Snap && m.rowCount > 0)
      val diffs = metas.filter(m => m.kind == ObjectKind.Diff && m.rowCount > 0)
      if (snap.isEmpty && diffs.isEmpty) None else Some(i -> FragmentPartition(i, snap.map(file), diffs.map(file)))
    }.toMap
    new ChainRows(factory, fragments)
  }

  /** A reader's rows as an iterator that closes the reader when done (or when closed early). */
  final class Rows(r: org.apache.spark.sql.connector.read.PartitionReader[InternalRow])
    extends Iterator[InternalRow] with AutoCloseable {
    private var ready = false
    private var more = true
    override def hasNext: Boolean = {
      if (!ready && more) { more = r.next(); ready = true; if (!more) r.close() }
      more
    }
    override def next(): InternalRow = { hasNext; ready = false; r.get() }
    override def close(): Unit = if (more) { more = false; r.close() }
  }
}
