package versioned.spark.read

import org.apache.spark.paths.SparkPath
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection}
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.sql.execution.datasources.PartitionedFile
import org.apache.spark.sql.types.{ByteType, StructType}
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * Spark's Parquet file readers prepared on the driver, only those a scan's partitions use. Rows and
 * batches lead with the key columns, except `snapBatches` (the output columns of one-SNAP fragments).
 *
 * @param columnar every partition is read as columnar batches (the scan decided the DIFFs fit)
 * @param snapRows SNAP rows in the merged layout (row mode)
 * @param diffRows DIFF rows in the merged layout plus the change kind (any fragment with DIFFs)
 * @param mergedBatches SNAP batches in the merged layout (columnar mode, SNAPs under DIFFs)
 * @param diffCacheBytes budget of the executor's [[DiffCache]] (columnar mode)
 */
private[read] final case class FragmentReaders(
    columnar: Boolean,
    snapRows: Option[PartitionedFile => Iterator[InternalRow]],
    diffRows: Option[PartitionedFile => Iterator[InternalRow]],
    snapBatches: Option[PartitionedFile => Iterator[InternalRow]],
    mergedBatches: Option[PartitionedFile => Iterator[InternalRow]],
    diffCacheBytes: Long)

/**
 * Builds readers for fragment partitions on executors: one SNAP is read as is, a SNAP under DIFFs is
 * merged with the DIFFs conflated first (column-wise by [[OverlayBatchReader]], else row by row).
 *
 * @param mergedSchema key columns, then the other columns read (the layout of SNAP rows)
 * @param outputOrdinals for each output column, its ordinal in `mergedSchema`
 */
private[read] final class FragmentReaderFactory(
    readers: FragmentReaders,
    mergedSchema: StructType,
    keyCount: Int,
    outputOrdinals: Array[Int],
    limit: Option[Int]) extends PartitionReaderFactory {

  private def keyTypes = mergedSchema.fields.take(keyCount).map(_.dataType).toSeq

  override def supportColumnarReads(partition: InputPartition): Boolean = readers.columnar

  override def createColumnarReader(partition: InputPartition): PartitionReader[ColumnarBatch] = {
    val p = partition.asInstanceOf[FragmentPartition]
    if (p.diffs.isEmpty) {
      val it = batches(readers.snapBatches.get, p.snap)
      new PartitionReader[ColumnarBatch] {
        private var current: ColumnarBatch = _
        override def next(): Boolean = if (it.hasNext) { current = it.next(); true } else false
        override def get(): ColumnarBatch = current
        override def close(): Unit = closeAll(Seq(it))
      }
    } else {
      val overlay = DiffCache.getOrLoad(DiffCache.Key(p.diffs.map(_.uri), mergedSchema.catalogString), readers.diffCacheBytes) {
        val copy = identity()
        Conflation(p.diffs.map(load(_, copy)).toArray, keyTypes)
      }
      val snap = p.snap.fold(Iterator.empty[ColumnarBatch])(f => batches(readers.mergedBatches.get, Some(f)))
      new OverlayBatchReader(snap, overlay, keyTypes, outputOrdinals, outputOrdinals.map(mergedSchema(_).dataType),
        mergedSchema.length, OverlayBatchReader.BatchRows, () => closeAll(Seq(snap)))
    }
  }

  private def batches(read: PartitionedFile => Iterator[InternalRow], f: Option[ObjectFile]): Iterator[ColumnarBatch] =
    f.map(open(read, _)).getOrElse(Iterator.empty).asInstanceOf[Iterator[Any]].map(_.asInstanceOf[ColumnarBatch])

  private def open(read: PartitionedFile => Iterator[InternalRow], f: ObjectFile): Iterator[InternalRow] =
    read(PartitionedFile(InternalRow.empty, SparkPath.fromUrlString(f.uri), 0L, f.size, Array.empty[String], 0L, f.size,
      Map.empty))

  /** All rows of a DIFF, copied (in the merged layout plus the change kind). */
  private def load(f: ObjectFile, copy: UnsafeProjection): Array[InternalRow] = {
    val it = open(readers.diffRows.get, f)
    try it.map(r => copy(r).copy(): InternalRow).toArray finally closeAll(Seq(it))
  }

  /** Identity projection of DIFF rows (merged columns + change kind) into unsafe rows. */
  private def identity(): UnsafeProjection = UnsafeProjection.create((0 to mergedSchema.length).map { o =>
    if (o < mergedSchema.length) BoundReference(o, mergedSchema(o).dataType, mergedSchema(o).nullable)
    else BoundReference(o, ByteType, nullable = false)
  })

  private def closeAll(its: Seq[Iterator[_]]): Unit = its.foreach { case c: AutoCloseable => c.close(); case _ => () }

  /**
   * The DIFFs of a chain (oldest first) conflated among themselves: newest change per key, deletes
   * kept, in key order, in the DIFF read layout (merged columns + change kind).
   */
  private def conflated(diffs: Array[Iterator[InternalRow]]): Iterator[InternalRow] =
    if (diffs.length == 1) diffs.head
    else {
      new ReaderIterator(new MergingReader(diffs, Array.fill(diffs.length)(true), mergedSchema.length,
        new KeyComparator(keyTypes), identity(), () => (), keepDeletes = true))
    }

  override def createReader(partition: InputPartition): PartitionReader[InternalRow] = {
    val p = partition.asInstanceOf[FragmentPartition]
    val project = UnsafeProjection.create(outputOrdinals.toSeq.map { o =>
      val f = mergedSchema(o); BoundReference(o, f.dataType, f.nullable)
    })
    val snap = p.snap.map(open(readers.snapRows.get, _))
    val diffs = p.diffs.map(open(readers.diffRows.get, _)).toArray
    val close = () => closeAll(snap.toSeq ++ diffs)
    val reader =
      if (diffs.isEmpty) new SnapshotReader(snap.getOrElse(Iterator.empty), project, close)
      else // DIFFs are conflated first, so the base is merged against one stream: one key comparison per base row.
        new MergingReader((snap.toSeq :+ conflated(diffs)).toArray, (snap.map(_ => false).toSeq :+ true).toArray,
          mergedSchema.length, new KeyComparator(keyTypes), project, close)
    limit.fold(reader)(n => new LimitedReader(reader, n))
  }
}
