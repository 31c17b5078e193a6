package versioned.spark.read

import versioned.spark.format.SparkKeys

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, InterpretedUnsafeProjection, UnsafeProjection}
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.sql.types.{ByteType, DataType, StructField, StructType}
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * Spark's Parquet file readers prepared on the driver, only those a scan's partitions use. Rows and
 * batches lead with the key columns, except `snapBatches` (the output columns of one-SNAP fragments).
 *
 * @param columnar every partition is read as columnar batches (the scan's output types allow it)
 * @param snapRows SNAP rows in the merged layout (row mode, and fragments merged row by row in columnar mode)
 * @param diffRows DIFF rows in the merged layout plus the change kind (any fragment with DIFFs)
 * @param mergedBatches SNAP batches in the merged layout (columnar mode, SNAPs under DIFFs)
 * @param diffCacheBytes budget of the executor's [[DiffCache]] (columnar mode)
 * @param maxOverlayRows most DIFF rows of a fragment merged column-wise (columnar mode); a fragment with more is
 *                       merged row by row and its rows handed out as batches ([[RowBatches]])
 * @param hadoopConf how executors reach objects to verify them
 * @param sharedDiffs for a driver lookup ([[LocalLookup]]), a reader of whole DIFFs (no lookup pushed down) and the
 *                    most rows of a DIFF shared by fragments that the factory reads once for all of them
 *                    ([[ObjectFiles.SharedLoads]]), instead of once per fragment with its share of the lookup
 */
private[read] final case class FragmentReaders(
    columnar: Boolean,
    snapRows: Option[ObjectFiles.Reader],
    diffRows: Option[ObjectFiles.Reader],
    snapBatches: Option[ObjectFiles.Reader],
    mergedBatches: Option[ObjectFiles.Reader],
    diffCacheBytes: Long,
    maxOverlayRows: Long,
    hadoopConf: org.apache.spark.broadcast.Broadcast[org.apache.spark.util.SerializableConfiguration],
    sharedDiffs: Option[(ObjectFiles.Reader, Long)] = None) {
  def conf: org.apache.hadoop.conf.Configuration = hadoopConf.value.value
  /** Whether the fragment's DIFFs are merged column-wise ([[Overlay]]), in columnar mode. */
  def overlays(p: FragmentPartition): Boolean = FragmentReaders.overlays(p, maxOverlayRows)
}

private[read] object FragmentReaders {
  /** Whether `p`'s DIFFs are few enough (at most `maxOverlayRows` rows) to be held and merged column-wise. */
  def overlays(p: FragmentPartition, maxOverlayRows: Long): Boolean = p.diffRows <= maxOverlayRows
}

/**
 * The readers of a scan: a fragment in `byFragment` is read with its own (a key lookup's share of the fragment pushed
 * down, [[VersionedScan]]), any other with `default`.
 */
private[read] final case class ScanReaders(default: FragmentReaders, byFragment: Map[Int, FragmentReaders] = Map.empty) {
  def of(p: FragmentPartition): FragmentReaders = byFragment.getOrElse(p.index, default)
}

/**
 * Builds readers for fragment partitions on executors: one SNAP is read as is, a SNAP under DIFFs is
 * merged with the DIFFs conflated first (column-wise by [[OverlayBatchReader]], else row by row).
 *
 * @param mergedSchema key columns, then the other columns read (the layout of SNAP rows)
 * @param outputOrdinals for each output column, its ordinal in `mergedSchema`
 * @param lookupKey the output ordinal and type of the first key column, when a partition's lookup keys
 *                  can be applied to rows ([[LookupReaders]])
 */
private[read] final class FragmentReaderFactory(
    initialReaders: ScanReaders,
    mergedSchema: StructType,
    keyCount: Int,
    outputOrdinals: Array[Int],
    limit: Option[Int],
    lookupKey: Option[(Int, DataType)] = None) extends PartitionReaderFactory {

  /**
   * Replaced on the driver when a runtime filter reaches the scan after the factory was built, before any task
   * is sent ([[VersionedScan.filter]]): the same kinds of reader, with the key lookup pushed down to Parquet.
   */
  @volatile private[read] var readers: ScanReaders = initialReaders

  private def keyTypes = mergedSchema.fields.take(keyCount).map(_.dataType).toSeq

  /** The shared DIFFs this factory's readers loaded whole ([[FragmentReaders.sharedDiffs]]), by their readers. */
  @transient private lazy val shared = new java.util.concurrent.ConcurrentHashMap[ObjectFiles.Reader, ObjectFiles.SharedLoads]()

  override def supportColumnarReads(partition: InputPartition): Boolean = readers.default.columnar

  override def createColumnarReader(partition: InputPartition): PartitionReader[ColumnarBatch] = {
    val reader = new SequentialReader(fragments(partition).map(p => () => columnarReader(p)))
    lookup(partition).fold[PartitionReader[ColumnarBatch]](reader) { case (o, dt, keys) => new LookupReaders.Batches(reader, o, dt, keys) }
  }

  private def lookup(partition: InputPartition): Option[(Int, DataType, Array[Long])] =
    for { (o, dt) <- lookupKey; keys <- partition.asInstanceOf[FragmentGroup].keys } yield (o, dt, keys)

  private def fragments(partition: InputPartition): Seq[FragmentPartition] = partition.asInstanceOf[FragmentGroup].fragments

  private def columnarReader(p: FragmentPartition): PartitionReader[ColumnarBatch] = {
    val readers = this.readers.of(p)
    if (p.diffs.nonEmpty && !readers.overlays(p)) {
      // too many DIFF rows to hold: merged as a stream, one key comparison per SNAP row
      FragmentReaderFactory.rowMerged.incrementAndGet()
      new RowBatches(rowReader(p, None), outputOrdinals.map(mergedSchema(_).dataType), OverlayBatchReader.BatchRows)
    } else if (p.diffs.isEmpty) {
      val it = ObjectFiles.openBatches(readers.snapBatches.get, p.snap.get, readers.conf)
      new PartitionReader[ColumnarBatch] {
        private var current: ColumnarBatch = _
        override def next(): Boolean = if (it.hasNext) { current = it.next(); true } else false
        override def get(): ColumnarBatch = current
        override def close(): Unit = ObjectFiles.close(Seq(it))
      }
    } else {
      val key = DiffCache.Key(p.diffs.map(_.readName), mergedSchema.catalogString)
      val overlay = DiffCache.getOrLoad(key, readers.diffCacheBytes) { prefix =>
        val copy = identity()
        // the conflated rows of a cached prefix of the chain stand for its DIFFs (conflation is associative)
        val (cached, from) = prefix.fold((Array.empty[Array[InternalRow]], 0)) { case (o, n) => (Array(o.rows.toArray), n) }
        Overlay(Conflation(cached ++ p.diffs.drop(from).map(ObjectFiles.load(readers.diffRows.get, _, copy, readers.conf)),
          keyTypes), keyTypes, mergedSchema.length)
      }
      val snap = p.snap.fold(Iterator.empty[ColumnarBatch])(ObjectFiles.openBatches(readers.mergedBatches.get, _, readers.conf))
      new OverlayBatchReader(snap, overlay, keyTypes, outputOrdinals, outputOrdinals.map(mergedSchema(_).dataType),
        OverlayBatchReader.BatchRows, () => ObjectFiles.close(Seq(snap)))
    }
  }

  /** Identity projection of DIFF rows (merged columns + change kind) into unsafe rows. */
  private def identity(): UnsafeProjection =
    ObjectFiles.identity(mergedSchema.add(StructField("change", ByteType, nullable = false)))

  /**
   * The DIFFs of a chain (oldest first) conflated among themselves: newest change per key, deletes
   * kept, in key order, in the DIFF read layout (merged columns + change kind).
   */
  private def conflated(diffs: Array[Iterator[InternalRow]]): Iterator[InternalRow] =
    if (diffs.length == 1) diffs.head
    else {
      new ReaderIterator(new MergingReader(diffs, Array.fill(diffs.length)(true), mergedSchema.length,
        SparkKeys.order(keyTypes), identity(), () => (), keepDeletes = true))
    }

  override def createReader(partition: InputPartition): PartitionReader[InternalRow] = {
    val keys = lookup(partition).map { case (_, dt, ks) => (dt, ks) }
    // with a lookup, each object's rows of other keys are dropped as read, before any merge (rowReader)
    val reader = new SequentialReader(fragments(partition).map(p => () => rowReader(p, keys)))
    limit.fold[PartitionReader[InternalRow]](reader)(n => new LimitedReader(reader, n))
  }

  /**
   * The rows of one fragment. With `keys` (the lookup's values of the first key column, of its type), the rows
   * of SNAP and DIFFs are restricted to those keys before they are merged: Parquet returns whole pages, and
   * every version of a key lies in the same restriction, so the merge yields exactly its rows of those keys.
   */
  private def rowReader(p: FragmentPartition, keys: Option[(DataType, Array[Long])]): PartitionReader[InternalRow] = {
    val outputs = outputOrdinals.toSeq.map { o => val f = mergedSchema(o); BoundReference(o, f.dataType, f.nullable) }
    // with keys, only their rows reach the projection: interpreted, which costs nothing to build (a lookup of scattered
    // keys opens every fragment for a few rows, where generating the projection's code costs more than projecting them)
    val project = if (keys.isDefined) InterpretedUnsafeProjection.createProjection(outputs) else UnsafeProjection.create(outputs)
    val readers = this.readers.of(p)
    val snap = p.snap.map(ObjectFiles.open(readers.snapRows.get, _, readers.conf))
    val diffs = p.diffs.map { f =>
      readers.sharedDiffs.flatMap { case (whole, max) =>
        shared.computeIfAbsent(whole, _ => new ObjectFiles.SharedLoads(max)).rows(whole, f, identity(), readers.conf)
      }.fold(ObjectFiles.open(readers.diffRows.get, f, readers.conf))(_.iterator)
    }.toArray
    val close = () => ObjectFiles.close(snap.toSeq ++ diffs)
    // SNAP and DIFF rows lead with the key columns
    def restrict(rows: Iterator[InternalRow]) = keys.fold(rows) { case (dt, ks) => LookupReaders.restrict(rows, 0, dt, ks) }
    if (diffs.isEmpty) new SnapshotReader(snap.fold(Iterator.empty[InternalRow])(restrict), project, close)
    else // DIFFs are conflated first, so the base is merged against one stream: one key comparison per base row.
      new MergingReader((snap.map(restrict).toSeq :+ conflated(diffs.map(restrict))).toArray,
        (snap.map(_ => false).toSeq :+ true).toArray, mergedSchema.length, SparkKeys.order(keyTypes), project, close)
  }
}

private[read] object FragmentReaderFactory {
  /** Fragments merged row by row within columnar scans in this JVM (tests: which merge read a fragment). */
  val rowMerged = new java.util.concurrent.atomic.AtomicLong()
}
