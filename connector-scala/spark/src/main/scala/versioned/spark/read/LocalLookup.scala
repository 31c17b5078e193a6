package versioned.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.StructType
import versioned.spark.session.TableSnapshot

/**
 * A key lookup small enough to run on the driver: the partitions of a [[VersionedScan]] restricted by a
 * [[KeyLookup]] are read by the driver's threads ([[versioned.spark.session.Jobs.onDriver]], one fragment each)
 * through the reader factory executors use (the same pruning, conflation of DIFFs and object
 * verification), with no Spark job: for a few keys, scheduling a job costs more than reading the pages
 * that hold them. The caller bounds the number of keys ([[MaxKeys]]).
 */
private[versioned] object LocalLookup {
  /** Most values of the first key column looked up on the driver. */
  val MaxKeys = 10000

  /**
   * The rows of `snapshot` (columns `readSchema`, which must hold the first key column) that `filters`
   * (data source filters on its columns, among them a key lookup) may match: every matching row, and
   * possibly others, which the caller filters out.
   */
  def rows(snapshot: TableSnapshot, readSchema: StructType, filters: Seq[Filter]): IndexedSeq[InternalRow] = {
    val scan = new VersionedScan(snapshot, readSchema, filters, rowsOnly = true)
    val groups = scan.planInputPartitions().map(_.asInstanceOf[FragmentGroup])
    if (groups.isEmpty) IndexedSeq.empty
    else {
      val factory = scan.createReaderFactory()
      val single = groups.toSeq.flatMap(g => g.fragments.map(f => g.copy(fragments = Seq(f))))
      versioned.spark.session.Jobs.onDriver(single) { part =>
        val reader = factory.createReader(part)
        try {
          val out = Vector.newBuilder[InternalRow]
          while (reader.next()) out += reader.get().copy()
          out.result()
        } finally reader.close()
      }.flatten.toIndexedSeq
    }
  }

  /**
   * The rows of `snapshot` (looking up `lookup`'s values, [[TableSnapshot.lookingUp]]; columns `readSchema`) whose
   * first key column holds one of those values, as external rows with their schema: [[rows]], exact keys only.
   */
  def exactRows(snapshot: TableSnapshot, readSchema: StructType, lookup: KeyLookup): Seq[org.apache.spark.sql.Row] = {
    val ordinal = readSchema.fieldIndex(lookup.field.name)
    val dt = lookup.field.dataType
    val toRow = org.apache.spark.sql.catalyst.CatalystTypeConverters.createToScalaConverter(readSchema)
    rows(snapshot, readSchema, Nil).filter { r => // `snapshot` carries the lookup (TableSnapshot.lookingUp)
      val key = Option.when(!r.isNullAt(ordinal))(versioned.spark.format.Values.fromInternal(r, ordinal, dt))
      key.exists(k => lookup.mayHold(Some(k), Some(k)))
    }.map(r => toRow(r).asInstanceOf[org.apache.spark.sql.Row])
  }
}
