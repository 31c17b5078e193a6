package versioned.spark.read

import org.apache.spark.paths.SparkPath
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection}
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.sql.execution.datasources.PartitionedFile
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * Builds readers for fragment partitions on executors. `readSnap` and `readDiff` are Spark's Parquet
 * file readers prepared on the driver; both produce rows whose leading columns are the key.
 *
 * @param mergedSchema key columns, then the other columns read (the layout of SNAP rows)
 * @param outputOrdinals for each output column, its ordinal in `mergedSchema`
 */
private[read] final class FragmentReaderFactory(
    readSnap: PartitionedFile => Iterator[InternalRow],
    readDiff: PartitionedFile => Iterator[InternalRow],
    mergedSchema: StructType,
    keyCount: Int,
    outputOrdinals: Array[Int],
    readBatches: Option[PartitionedFile => Iterator[InternalRow]],
    limit: Option[Int]) extends PartitionReaderFactory {

  /** Chains that are a single SNAP are read as columnar batches straight from Parquet (when all are). */
  override def supportColumnarReads(partition: InputPartition): Boolean = readBatches.isDefined

  override def createColumnarReader(partition: InputPartition): PartitionReader[ColumnarBatch] = {
    val p = partition.asInstanceOf[FragmentPartition]
    val it = p.snap.map(open(readBatches.get, _)).getOrElse(Iterator.empty)
    new PartitionReader[ColumnarBatch] {
      private var current: ColumnarBatch = _
      override def next(): Boolean = if (it.hasNext) { current = it.next().asInstanceOf[Any].asInstanceOf[ColumnarBatch]; true } else false
      override def get(): ColumnarBatch = current
      override def close(): Unit = it match { case c: AutoCloseable => c.close(); case _ => () }
    }
  }

  private def open(read: PartitionedFile => Iterator[InternalRow], f: ObjectFile): Iterator[InternalRow] =
    read(PartitionedFile(InternalRow.empty, SparkPath.fromUrlString(f.uri), 0L, f.size, Array.empty[String], 0L, f.size,
      Map.empty))

  override def createReader(partition: InputPartition): PartitionReader[InternalRow] = {
    val p = partition.asInstanceOf[FragmentPartition]
    val project = UnsafeProjection.create(outputOrdinals.toSeq.map { o =>
      val f = mergedSchema(o); BoundReference(o, f.dataType, f.nullable)
    })
    val snap = p.snap.map(open(readSnap, _))
    val diffs = p.diffs.map(open(readDiff, _)).toArray
    val close = () => (snap.toSeq ++ diffs).foreach { case c: AutoCloseable => c.close(); case _ => () }
    val keys = new KeyComparator(mergedSchema.fields.take(keyCount).map(_.dataType).toSeq)
    val reader =
      if (diffs.isEmpty) new SnapshotReader(snap.getOrElse(Iterator.empty), project, close)
      else {
        // DIFFs are conflated among themselves first (newest wins, deletes kept), so the base is
        // merged against one stream: one key comparison per base row, however long the chain.
        val overlay =
          if (diffs.length == 1) diffs.head
          else {
            val all = mergedSchema.length + 1
            val identity = UnsafeProjection.create((0 until all).map { o =>
              if (o < mergedSchema.length) BoundReference(o, mergedSchema(o).dataType, mergedSchema(o).nullable)
              else BoundReference(o, org.apache.spark.sql.types.ByteType, nullable = false)
            })
            new ReaderIterator(new MergingReader(diffs, Array.fill(diffs.length)(true), mergedSchema.length, keys,
              identity, () => (), keepDeletes = true))
          }
        new MergingReader((snap.toSeq :+ overlay).toArray, (snap.map(_ => false).toSeq :+ true).toArray,
          mergedSchema.length, keys, project, close)
      }
    limit.fold(reader)(n => new LimitedReader(reader, n))
  }
}
