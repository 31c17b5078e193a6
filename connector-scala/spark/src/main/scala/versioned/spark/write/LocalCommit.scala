package versioned.spark.write

import java.util.concurrent.{Callable, ExecutionException, Executors}
import scala.jdk.CollectionConverters._
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.expressions.{BoundReference, GenericInternalRow, UnsafeProjection}
import org.apache.spark.sql.types.StructType
import versioned.core.{ChangeKind, ObjectKind, ObjectMeta, TableVersion}
import versioned.spark.TableLayout
import versioned.spark.read.KeyComparator

/**
 * Small upserts committed by the driver without Spark jobs. The rows the write tasks kept in memory
 * are checked like [[Validation.check]] (same errors), turned into DIFF rows like [[ChangeSets.append]]
 * with upsert and [[ChangeSets.upsertWithDeletes]], sorted by key, routed with [[Routing.local]] and
 * written by [[ObjectRuns]], as executors do: the same data gives the same objects (ids, files,
 * statistics) and the same table version as the distributed path.
 */
private[versioned] object LocalCommit {

  /** Writes whose changes follow from the data alone (no table read): upsert appends to a keyed table. */
  def applies(req: WriteRequest, layout: TableLayout): Boolean =
    req.mode == WriteMode.Append && req.upsert && !layout.hidden

  /** One DIFF object per touched fragment of `cur`; `rows` are in `schema` (the layout's columns + `deleteColumn`). */
  def writeDiffs(spark: SparkSession, target: ObjectTarget, layout: TableLayout, cur: TableVersion,
                 schema: StructType, deleteColumn: Option[String],
                 rows: IndexedSeq[InternalRow]): (TableVersion, Seq[ObjectMeta]) =
    write(spark, target, layout, cur, sortedByKey(rows, schema, layout), { val f = diffRow(schema, layout, deleteColumn); () => f })

  /** The same for DIFF rows already computed (`WriteMode.Changes`): `rows` hold the DIFF columns in `schema`'s order. */
  def writeChanges(spark: SparkSession, target: ObjectTarget, layout: TableLayout, cur: TableVersion,
                   schema: StructType, rows: IndexedSeq[InternalRow]): (TableVersion, Seq[ObjectMeta]) = {
    val refs = layout.diffSchema.fields.toSeq.map(f => BoundReference(schema.fieldIndex(f.name), f.dataType, f.nullable))
    // one projection per writing thread: an UnsafeProjection reuses its output row
    write(spark, target, layout, cur, sortedByKey(rows, schema, layout, validate = false), () => UnsafeProjection.create(refs))
  }

  /** Changes of a write in `WriteMode.Changes`, on the driver when there are at most `maxRows` (the frame stays cached). */
  def collectSmall(df: DataFrame, maxRows: Long): Option[IndexedSeq[InternalRow]] =
    if (df.count() > maxRows) None
    else Some(df.asInstanceOf[org.apache.spark.sql.classic.Dataset[_]].queryExecution.toRdd.map(_.copy()).collect().toIndexedSeq)

  /** `change` makes the function turning a kept row into a DIFF row, once per writing thread. */
  private def write(spark: SparkSession, target: ObjectTarget, layout: TableLayout, cur: TableVersion,
                    keyed: IndexedSeq[(InternalRow, InternalRow)],
                    change: () => InternalRow => InternalRow): (TableVersion, Seq[ObjectMeta]) = {
    val base = CommitPlanner.baseFragments(cur)
    val fragmentOf = Routing.local(base, layout)
    val sink = ParquetSink.forObjects(spark, layout.diffSchema, ObjectKind.Diff)
    // one object per touched fragment, rows in key order
    val runs = keyed.map { case (key, row) => fragmentOf(key) -> row }.groupBy(_._1).toSeq.sortBy(_._1)
    val written = inParallel(runs) { case (frag, changes) =>
      val objects = new ObjectRuns(sink, target, ObjectKind.Diff, layout.keyColumns)
      val toDiff = change()
      try changes.foreach { case (_, row) => objects.write(frag, toDiff(row)) }
      catch { case e: Throwable => objects.abort(); throw e }
      objects.close()
    }
    CommitPlanner.withDiffs(cur, base, written.flatten)
  }

  /** Object files are written concurrently: creating a file costs more latency than CPU (local file systems fork chmod). */
  private val Threads = 8

  private def inParallel[A, B](items: Seq[A])(f: A => B): Seq[B] =
    if (items.size <= 1) items.map(f)
    else {
      val pool = Executors.newFixedThreadPool(math.min(Threads, items.size), (r: Runnable) => {
        val t = new Thread(r, "versioned-local-commit"); t.setDaemon(true); t
      })
      try pool.invokeAll(items.map(a => (() => f(a)): Callable[B]).asJava).asScala.toSeq.map { fut =>
        try fut.get() catch { case e: ExecutionException => throw e.getCause }
      } finally pool.shutdownNow()
    }

  /**
   * (key, row) pairs in key order; with `validate`, null keys, then duplicate keys, fail as in
   * [[Validation.check]] (computed changes are one row per key already, and key-less tables allow nulls).
   */
  private def sortedByKey(rows: IndexedSeq[InternalRow], schema: StructType, layout: TableLayout,
                          validate: Boolean = true): IndexedSeq[(InternalRow, InternalRow)] = {
    val keys = layout.keyColumns
    val ordinals = keys.map(schema.fieldIndex).toArray
    val types = layout.keyTypes.toArray
    if (validate && rows.exists(r => ordinals.exists(r.isNullAt))) throw Validation.nullKey(keys)
    val cmp = new KeyComparator(layout.keyTypes)
    val byKey: Ordering[(InternalRow, InternalRow)] = (a, b) => cmp.compare(a._1, b._1)
    val keyed = rows.map { r =>
      val key: InternalRow = new GenericInternalRow(ordinals.indices.map(i => r.get(ordinals(i), types(i))).toArray)
      (key, r)
    }.sorted(byKey)
    var i = if (validate) 0 else keyed.length
    while (i < keyed.length) {
      var j = i + 1
      while (j < keyed.length && byKey.equiv(keyed(i), keyed(j))) j += 1
      if (j - i > 1) throw Validation.duplicateKey(keys, j - i,
        types.indices.map(c => CatalystTypeConverters.convertToScala(keyed(i)._1.get(c, types(c)), types(c))))
      i = j
    }
    keyed
  }

  /** A row of the data as a DIFF row: an upsert, or a delete (values null) when `deleteColumn` is true. */
  private def diffRow(schema: StructType, layout: TableLayout, deleteColumn: Option[String]): InternalRow => InternalRow = {
    val fields = layout.physicalSchema.fields
    val source = fields.map(f => schema.fieldIndex(f.name))
    val isKey = fields.map(f => layout.keyColumns.contains(f.name))
    val marker = deleteColumn.map(schema.fieldIndex).getOrElse(-1)
    row => {
      val delete = marker >= 0 && !row.isNullAt(marker) && row.getBoolean(marker)
      val out = new Array[Any](fields.length + 1)
      var i = 0
      while (i < fields.length) {
        if (!delete || isKey(i)) out(i) = row.get(source(i), fields(i).dataType)
        i += 1
      }
      out(fields.length) = if (delete) ChangeKind.Delete else ChangeKind.Upsert
      new GenericInternalRow(out)
    }
  }
}
