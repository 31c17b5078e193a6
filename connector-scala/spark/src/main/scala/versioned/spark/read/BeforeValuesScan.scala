package versioned.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, CreateNamedStruct, Expression, Literal}
import org.apache.spark.sql.connector.catalog.MetadataColumn
import org.apache.spark.sql.connector.expressions.NamedReference
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.read._
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarArray, ColumnarBatch, ColumnarMap}
import org.apache.spark.unsafe.types.UTF8String
import versioned.spark.format.TableLayout
import versioned.spark.session.VersionedOptions.BeforeColumn

/**
 * Adds `_vbefore` to the rows or batches of a versioned scan that reads every non-key column; runtime
 * filters, statistics and metrics are the inner scan's. Keyed tables expose `_vbefore`, the struct of a row's
 * non-key columns as read: UPDATE and MERGE require it ([[versioned.spark.rowlevel.VersionedDeltaOperation]]), so
 * the commit has the old values of the rows they change (to drop updates that change nothing) without looking them
 * up again. [[VersionedScanBuilder]] builds this scan only when `_vbefore` is requested.
 */
private[read] final class BeforeValuesScan(inner: VersionedScan, output: StructType, layout: TableLayout)
  extends Scan with Batch with SupportsReportStatistics with SupportsRuntimeV2Filtering {
  private val read = inner.readSchema()
  /** For each output column, its ordinal in the inner rows, or (for `_vbefore`) the ordinals of its fields. */
  private val sources: Array[Either[Int, Array[Int]]] = output.fields.map { f =>
    if (f.name == BeforeColumn) Right(layout.nonKeyColumns.map(read.fieldIndex).toArray) else Left(read.fieldIndex(f.name))
  }

  override def readSchema(): StructType = output
  override def description(): String = s"${inner.description()} with $BeforeColumn"
  override def toBatch: Batch = this
  override def planInputPartitions(): Array[InputPartition] = inner.planInputPartitions()
  override def estimateStatistics(): Statistics = inner.estimateStatistics()
  override def filterAttributes(): Array[NamedReference] = inner.filterAttributes()
  override def filter(predicates: Array[Predicate]): Unit = inner.filter(predicates)
  override def supportedCustomMetrics(): Array[CustomMetric] = inner.supportedCustomMetrics()
  override def reportDriverMetrics(): Array[CustomTaskMetric] = inner.reportDriverMetrics()

  override def createReaderFactory(): PartitionReaderFactory = {
    def ref(i: Int): Expression = BoundReference(i, read(i).dataType, read(i).nullable)
    val exprs = sources.toSeq.map {
      case Left(i) => ref(i)
      case Right(fields) => CreateNamedStruct(fields.toSeq.flatMap(i => Seq(Literal(read(i).name), ref(i))))
    }
    new BeforeValuesReaderFactory(inner.createReaderFactory(), exprs, sources, output)
  }
}

private[read] final class BeforeValuesReaderFactory(inner: PartitionReaderFactory, exprs: Seq[Expression],
                                                        sources: Array[Either[Int, Array[Int]]], output: StructType)
  extends PartitionReaderFactory {

  override def supportColumnarReads(partition: InputPartition): Boolean = inner.supportColumnarReads(partition)

  private val rows = new ProjectingReaderFactory(inner, exprs)

  override def createReader(partition: InputPartition): PartitionReader[InternalRow] = rows.createReader(partition)

  /** The inner batches' vectors, rearranged; `_vbefore` is a struct view over the non-key columns' vectors. */
  override def createColumnarReader(partition: InputPartition): PartitionReader[ColumnarBatch] = {
    val reader = inner.createColumnarReader(partition)
    new PartitionReader[ColumnarBatch] {
      override def next(): Boolean = reader.next()
      override def get(): ColumnarBatch = {
        val b = reader.get()
        val cols = sources.zip(output.fields).map {
          case (Left(i), _) => b.column(i)
          case (Right(fields), f) => new StructView(f.dataType.asInstanceOf[StructType], fields.map(b.column)): ColumnVector
        }
        new ColumnarBatch(cols, b.numRows())
      }
      override def close(): Unit = reader.close()
    }
  }
}

/** A non-null struct vector whose fields are other vectors of the same batch (owned by that batch). */
private[read] final class StructView(dt: StructType, children: Array[ColumnVector]) extends ColumnVector(dt) {
  private def unsupported = throw new UnsupportedOperationException("a struct vector has only fields")
  override def close(): Unit = ()
  override def hasNull: Boolean = false
  override def numNulls(): Int = 0
  override def isNullAt(rowId: Int): Boolean = false
  override def getChild(ordinal: Int): ColumnVector = children(ordinal)
  override def getBoolean(rowId: Int): Boolean = unsupported
  override def getByte(rowId: Int): Byte = unsupported
  override def getShort(rowId: Int): Short = unsupported
  override def getInt(rowId: Int): Int = unsupported
  override def getLong(rowId: Int): Long = unsupported
  override def getFloat(rowId: Int): Float = unsupported
  override def getDouble(rowId: Int): Double = unsupported
  override def getArray(rowId: Int): ColumnarArray = unsupported
  override def getMap(ordinal: Int): ColumnarMap = unsupported
  override def getDecimal(rowId: Int, precision: Int, scale: Int): Decimal = unsupported
  override def getUTF8String(rowId: Int): UTF8String = unsupported
  override def getBinary(rowId: Int): Array[Byte] = unsupported
}

private[versioned] object BeforeValuesScan {
  /** The struct type of `_vbefore`; None for a table without non-key columns (there is nothing to carry). */
  def beforeType(layout: TableLayout): Option[StructType] =
    Option.when(!layout.hidden && layout.nonKeyColumns.nonEmpty)(StructType(layout.nonKeyColumns.map(layout.schema(_))))

  /** The `_vbefore` metadata column of a keyed table with non-key columns. */
  def column(layout: TableLayout): Option[MetadataColumn] = beforeType(layout).map { t =>
    new MetadataColumn {
      override def name(): String = BeforeColumn
      override def dataType(): DataType = t
      override def isNullable: Boolean = true
      override def comment(): String = "the row's non-key columns as read (old values for UPDATE and MERGE)"
    }
  }
}
