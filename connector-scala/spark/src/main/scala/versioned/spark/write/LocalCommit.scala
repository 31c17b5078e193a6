package versioned.spark.write

import versioned.core.format.{KeyRules, TailFragment, WriteMode}

import versioned.spark.format.SparkKeys

import scala.jdk.CollectionConverters._
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Expression, GenericInternalRow}
import org.apache.spark.sql.types.StructType
import versioned.core.{Fragment, ObjectKind, ObjectMeta, TableVersion}
import versioned.spark.format.{SparkKeys, TableLayout, Values}
import versioned.spark.session.TableSnapshot
import versioned.spark.diff.PriorImages
import versioned.spark.read.{KeyLookup, LocalLookup}

/**
 * Small upserts and inserts committed by the driver without Spark jobs. The rows the write tasks kept in memory
 * are checked by the kernel's `KeyRules.checkSorted` (the rule and errors of [[Validation.check]]), inserts also against
 * the table (a key lookup on the driver, [[LocalLookup]]: the rule and error of [[ChangeSets.append]]), turned into
 * DIFF rows by the expressions of [[ChangeSets.byKey]] (or of [[ChangeSets.append]]), sorted by key, routed with [[Routing.local]] and
 * written by [[ObjectRuns]], as executors do: the same data gives the same objects (ids, files,
 * statistics) and the same table version as the distributed path.
 */
private[versioned] object LocalCommit {

  /**
   * Whether the driver can look the keys of `rows` rows up in the table: at most [[LocalLookup.MaxKeys]] rows, the
   * table's version is committed (`lookup`), and its first key column takes lookups.
   */
  def lookupFits(layout: TableLayout, rows: Int, lookup: Boolean): Boolean =
    !layout.hidden && lookup && rows <= LocalLookup.MaxKeys && KeyLookup.supports(layout.keyFields.head.dataType)

  /**
   * Whether the driver can check that the keys of an insert's `rows` (in `schema`) are new (the kernel's
   * `CommitPath.Produced.keysCheckable`, which lets inserts commit on the driver): the table's version is
   * committed (`existing`), its first key column takes lookups, and at most [[LocalLookup.MaxKeys]] of the keys
   * need a lookup: those that an object of the table may hold by its statistics ([[StoredKeyRanges]]; a key
   * outside every object's range is new without one, as every key of a stream of ascending ids is).
   */
  def keysCheckable(layout: TableLayout, schema: StructType, rows: IndexedSeq[InternalRow],
                    existing: Option[StoredTable]): Boolean =
    lookupFits(layout, rows.size, existing.isDefined) || (lookupFits(layout, 0, existing.isDefined) && {
      val ranges = existing.get.ranges
      val (o, dt) = (schema.fieldIndex(layout.keyColumns.head), layout.keyFields.head.dataType)
      rows.iterator.filter(r => r.isNullAt(o) || ranges.mayHold(Values.fromInternal(r, o, dt))).take(LocalLookup.MaxKeys + 1)
        .size <= LocalLookup.MaxKeys
    })

  /** Whether an append inserts its rows (each key must be new) rather than upserting them. */
  def inserts(req: WriteRequest): Boolean = !req.upsert && req.deleteColumn.isEmpty

  /**
   * The table a small append looks its keys up in (`existing`, when the driver can read it): always for inserts
   * (KEY_EXISTS); for upserts and deletes only to tell a write that changes nothing, which is not worth a lookup
   * when the commit is made anyway (`allowEmpty`: every batch of a streaming query), so that write is blind, as a
   * large upsert is (unchanged rows give an empty diff).
   */
  def lookedUp(req: WriteRequest, existing: Option[StoredTable]): Option[StoredTable] =
    existing.filter(_ => inserts(req) || !req.allowEmpty)

  /**
   * The most rows a write's tasks keep in memory for a commit on the driver, of `maxRows` allowed: inserts too,
   * as their keys are checked by their fragments' key ranges first ([[keysCheckable]]; an insert whose keys
   * need too many lookups is staged by the driver and planned with Spark jobs).
   */
  def maxKeptRows(req: WriteRequest, maxRows: Long): Long =
    if (req.mode != WriteMode.Append) 0L else maxRows

  /**
   * Where a commit finds the metadata of stored objects, when its DIFFs record before-images
   * ([[versioned.spark.diff.PriorImages]]).
   */
  type Priors = Option[Seq[String] => Map[String, ObjectMeta]]

  /**
   * One DIFF object per touched fragment of `cur`; `rows` are in `schema` (the layout's columns + `deleteColumn`).
   * `existing` is the committed table `cur` is, when the driver can look keys up in it. With `inserts`, KEY_EXISTS
   * when a key is in it. Otherwise (upserts and deletes by key), when no row would change the table ([[changing]]),
   * `cur` itself is returned with no object, and the commit has nothing to record; a write that changes something
   * writes all its rows, as the distributed path does (the same data gives the same objects on both paths). The
   * lookup is best effort: when the table cannot be read (a damaged object), the upsert is written blind, as before.
   */
  def writeDiffs(spark: SparkSession, target: ObjectTarget, layout: TableLayout, cur: TableVersion,
                 schema: StructType, deleteColumn: Option[String],
                 rows: IndexedSeq[InternalRow], priors: Priors, inserts: Boolean,
                 existing: Option[StoredTable] = None, table: Option[StoredTable] = None): (TableVersion, Seq[ObjectMeta]) = {
    val sorted = sortedByKey(rows, schema, layout)
    val stored = existing.filter(_ => cur.effectiveFragments.nonEmpty)
    if (inserts) stored.foreach(s => requireNew(sorted, layout, s))
    // best effort: an upsert is a blind write, so a table it cannot read now (a damaged object) never fails it
    val unchanged = !inserts && stored.filter(_ => lookupFits(layout, rows.size, lookup = true)).exists(s =>
      scala.util.Try(!changesAny(sorted, schema, deleteColumn, layout, s.snapshot)).getOrElse(false))
    if (sorted.isEmpty || unchanged) (cur, Nil)
    else if (deleteColumn.isEmpty && priors.isEmpty && tailFragment(spark, layout, cur, sorted, table.orElse(existing)))
      writeTail(spark, target, layout, cur, schema, sorted)
    else write(spark, target, layout, cur, sorted, diffRows(spark, schema, layout, deleteColumn, inserts), priors)
  }

  /**
   * Whether the `sorted` rows of an append (no deletes) go to a new last fragment of `cur` (the kernel's
   * `TailFragment` rule; `spark.versioned.write.tailFragments`): decided from the records of the committed version's
   * objects (`table`, already read for the commit), never for a key-less table; an append under the rule's minimum
   * rows is refused before the last fragment's records are looked at.
   */
  private def tailFragment(spark: SparkSession, layout: TableLayout, cur: TableVersion,
                           sorted: IndexedSeq[(InternalRow, InternalRow)], table: Option[StoredTable]): Boolean = {
    val settings = versioned.spark.session.Settings.of(spark)
    val fragmentRows = settings.fragmentRows
    val frags = cur.effectiveFragments
    settings.tailFragments && !layout.hidden && frags.nonEmpty && sorted.size >= TailFragment.minRows(fragmentRows) && table.exists { t =>
      val objects = t.snapshot.objects
      val first = layout.keyFields.head
      frags.last.objects.forall(objects.contains) && TailFragment.applies(SparkKeys.keyTypeOf(first.dataType), first.name,
        sorted.size.toLong, Values.fromInternal(sorted.head._1, 0, first.dataType), frags, objects, fragmentRows)
    }
  }

  /** The `sorted` rows as one SNAP, a new last fragment of `cur` bounded below by their smallest key. */
  private def writeTail(spark: SparkSession, target: ObjectTarget, layout: TableLayout, cur: TableVersion,
                        schema: StructType, sorted: IndexedSeq[(InternalRow, InternalRow)]): (TableVersion, Seq[ObjectMeta]) = {
    val written = snapObjects(spark, target, layout, schema, sorted)
    val frags = written.foldLeft(cur.effectiveFragments)((fs, w) => TailFragment.appended(fs, w.firstKey, w.meta.id))
    (cur.copy(fragments = frags, compacted = None), written.map(_.meta))
  }

  /** The rows of `snapshot` holding the keys of the `keyed` rows (first key column looked up, then exact keys), by key. */
  private def stored(keyed: IndexedSeq[(InternalRow, InternalRow)], layout: TableLayout,
                     snapshot: TableSnapshot): java.util.TreeMap[InternalRow, InternalRow] = {
    val types = layout.keyTypes
    val schema = layout.physicalSchema
    val ordinals = layout.keyColumns.map(schema.fieldIndex).toArray
    val cmp = SparkKeys.order(types)
    val byKey: java.util.Comparator[InternalRow] = (a, b) => cmp.compare(a, b)
    val found = new java.util.TreeMap[InternalRow, InternalRow](byKey)
    val canonical = keyed.map(k => Values.fromInternal(k._1, 0, layout.keyFields.head.dataType)).distinct
    LocalLookup.rows(snapshot.lookingUp(canonical), schema, Nil).foreach { r =>
      found.put(new GenericInternalRow(ordinals.indices.map(i => r.get(ordinals(i), types(i))).toArray), r)
    }
    found
  }

  /**
   * Whether any of the `keyed` upserts and deletes (rows in `schema`) changes `snapshot`: an upsert of a row stored
   * with the same values, and a delete of a key not stored, change nothing (as git, an unchanged row is not a change).
   * Values compare by their binary form, so a difference only in representation (-0.0 and 0.0) still counts as a change.
   */
  private def changesAny(keyed: IndexedSeq[(InternalRow, InternalRow)], schema: StructType, deleteColumn: Option[String],
                         layout: TableLayout, snapshot: TableSnapshot): Boolean =
    keyed.nonEmpty && {
      val columns = layout.schema.fields.toSeq
      def values(in: StructType) = ObjectWriter.projection(columns.map(f =>
        BoundReference(in.fieldIndex(f.name), f.dataType, nullable = true)), keyed.size)
      val incoming = values(schema)
      val current = values(layout.physicalSchema)
      val deleted = deleteColumn.map(schema.fieldIndex)
      // Looked up in growing chunks of keys, stopping at the first change: a write that changes rows nearly always
      // shows it in its first keys, so it reads the pages of a few keys, not of all of them.
      lookupChunks(keyed.size).exists { case (from, until) =>
        val chunk = keyed.slice(from, until)
        val found = stored(chunk, layout, snapshot)
        chunk.exists { case (key, row) =>
          val before = Option(found.get(key))
          if (deleted.exists(d => !row.isNullAt(d) && row.getBoolean(d))) before.isDefined
          else before.forall(b => incoming(row) != current(b))
        }
      }
    }

  /**
   * The (from, until) ranges of `n` keys looked up one after another to tell whether a write changes anything: 1
   * key, then 16, 256, ... (each 16 times the last), so a write that changes nothing costs a few lookups more
   * than one of every key, and one that changes its first key costs one lookup of one key.
   */
  private[write] def lookupChunks(n: Int): Iterator[(Int, Int)] =
    Iterator.iterate((0, 1L)) { case (from, size) => ((from + size).toInt, size * 16) }
      .takeWhile(_._1 < n).map { case (from, size) => (from, math.min(n.toLong, from + size).toInt) }

  /** KEY_EXISTS (as [[ChangeSets.append]] raises it) for the first of the `keyed` rows whose key `table` holds. */
  private def requireNew(keyed: IndexedSeq[(InternalRow, InternalRow)], layout: TableLayout, table: StoredTable): Unit = {
    // only keys that an object of the table may hold by its statistics are looked up
    val (ranges, snapshot) = (table.ranges, table.snapshot)
    val dt = layout.keyFields.head.dataType
    val candidates = keyed.filter(k => k._1.isNullAt(0) || ranges.mayHold(Values.fromInternal(k._1, 0, dt)))
    if (candidates.nonEmpty) {
      val types = layout.keyTypes
      val present = stored(candidates, layout, snapshot)
      candidates.find(k => present.containsKey(k._1)).foreach { case (k, _) =>
        throw ChangeSets.keyExists(layout.primaryKey, SparkKeys.external(types)(k))
      }
    }
  }

  /**
   * A new SNAP of `rows` (in `schema`, keyed by `layout`, at most one fragment's worth) written by the driver: the
   * rows validated (the kernel's `KeyRules.checkSorted`) and sorted by key, in one object, as [[CommitPlanner.writeSnapshot]]
   * writes them with jobs (one fragment: the same object). No rows: a table with no fragment, as there.
   */
  def writeSnapshot(spark: SparkSession, target: ObjectTarget, layout: TableLayout, schema: StructType,
                    rows: IndexedSeq[InternalRow], table: String): (TableVersion, Seq[ObjectMeta]) = {
    val written = snapObjects(spark, target, layout, schema, sortedByKey(rows, schema, layout))
    (TableVersion(table, layout.schemaJson, layout.primaryKey, layout.hidden, written.map(w => Fragment(None, Seq(w.meta.id)))),
      written.map(_.meta))
  }

  /** `sorted` (key, row) pairs, rows in `schema`, as one SNAP object of the layout's columns. */
  private def snapObjects(spark: SparkSession, target: ObjectTarget, layout: TableLayout, schema: StructType,
                          sorted: IndexedSeq[(InternalRow, InternalRow)]): Seq[WrittenObject] = {
    val project = ObjectWriter.projection(layout.physicalSchema.fields.toSeq.map(f =>
      BoundReference(schema.fieldIndex(f.name), f.dataType, f.nullable)), sorted.size)
    new ObjectRuns(ParquetSink.forObjects(spark, layout.physicalSchema, ObjectKind.Snap), target, ObjectKind.Snap,
      layout.keyColumns, overlap = sorted.size >= ObjectWriter.OverlapMinRows, expectedRows = sorted.size).writing(objects => sorted.foreach { case (_, row) => objects.write(0, project(row)) })
  }

  /** The same for DIFF rows already computed (`WriteMode.Changes`): `rows` hold the DIFF columns in `schema`'s order. */
  def writeChanges(spark: SparkSession, target: ObjectTarget, layout: TableLayout, cur: TableVersion,
                   schema: StructType, rows: IndexedSeq[InternalRow], priors: Priors): (TableVersion, Seq[ObjectMeta]) = {
    val refs = layout.diffSchema.fields.toSeq.map(f => BoundReference(schema.fieldIndex(f.name), f.dataType, f.nullable))
    // one projection per writing thread: an UnsafeProjection reuses its output row
    write(spark, target, layout, cur, sortedByKey(rows, schema, layout, validate = false), n => ObjectWriter.projection(refs, n), priors)
  }

  /** Changes of a write in `WriteMode.Changes`, on the driver when there are at most `maxRows` (one job; the frame stays cached). */
  def collectSmall(df: DataFrame, maxRows: Long): Option[IndexedSeq[InternalRow]] = collectOrCount(df, maxRows).toOption

  /**
   * One job over `df` (cached by the caller when it is used again): its rows when there are at most `maxRows`,
   * else only how many there are. A partition sends its rows only when it holds at most `maxRows`.
   */
  def collectOrCount(df: DataFrame, maxRows: Long): Either[Long, IndexedSeq[InternalRow]] = {
    val qe = df.asInstanceOf[org.apache.spark.sql.classic.Dataset[_]].queryExecution
    // a SQL execution of its own, as a Dataset action is: its scans' metrics and listeners see it
    val parts = org.apache.spark.sql.execution.SQLExecution.withNewExecutionId(qe, Some("collect")) {
      qe.toRdd.mapPartitions { it =>
        val kept = scala.collection.mutable.ArrayBuffer.empty[InternalRow]
        var n = 0L
        while (it.hasNext) {
          val row = it.next()
          n += 1
          if (n <= maxRows) kept += row.copy() else if (kept.nonEmpty) kept.clear()
        }
        Iterator.single((n, kept.toArray))
      }.collect()
    }
    val total = parts.map(_._1).sum
    if (total <= maxRows) Right(parts.iterator.flatMap(_._2).toIndexedSeq) else Left(total)
  }

  /**
   * Every row of `df`, known to be small: a frame computed from driver-local rows by projections and filters
   * is evaluated on the driver by Spark's planner (a local relation), without a job.
   */
  def collect(df: DataFrame): IndexedSeq[InternalRow] =
    df.asInstanceOf[org.apache.spark.sql.classic.Dataset[_]].queryExecution.executedPlan.executeCollect().map(_.copy())
      .toIndexedSeq

  /**
   * `change` makes the function turning a kept row into a DIFF row, once per writing thread, given the rows that thread
   * writes ([[ObjectWriter.projection]]). With `priors`, each
   * DIFF row also records the key's row in its fragment's chain (looked up first).
   */
  private def write(spark: SparkSession, target: ObjectTarget, layout: TableLayout, cur: TableVersion,
                    keyed: IndexedSeq[(InternalRow, InternalRow)],
                    change: Int => InternalRow => InternalRow, priors: Priors): (TableVersion, Seq[ObjectMeta]) = {
    val base = CommitPlanner.baseFragments(cur)
    val fragmentOf = Routing.local(base, layout)
    // one object per touched fragment, rows in key order
    val runs = keyed.map(kr => fragmentOf(kr._1) -> kr).groupBy(_._1).toSeq.sortBy(_._1).map { case (f, g) => f -> g.map(_._2) }
    if (versioned.core.format.CommitPath.sharedDiff(keyed.size.toLong, runs.size, priors.isDefined,
        versioned.spark.session.Settings.of(spark).sharedDiffMaxRows))
      return writeShared(spark, target, layout, cur, base, keyed, change, runs.map(_._1))
    val before = priors.flatMap(metas =>
      PriorImages.lookup(spark, target.config, layout, base, runs.map { case (f, kr) => f -> kr.map(_._1).toArray }, metas))
    val sink = ParquetSink.forObjects(spark, if (before.isDefined) PriorImages.diffSchema(layout) else layout.diffSchema, ObjectKind.Diff)
    val written = versioned.spark.session.Jobs.onDriver(runs) { case (frag, changes) =>
      val toDiff = change(changes.size)
      val recorded = before.map(_(frag))
      // a large object: its hash and statistics on a second core while this thread encodes its Parquet
      new ObjectRuns(sink, target, ObjectKind.Diff, layout.keyColumns, overlap = changes.size >= ObjectWriter.OverlapMinRows,
        expectedRows = changes.size).writing(objects =>
        changes.iterator.zipWithIndex.foreach { case ((_, row), i) =>
          val d = toDiff(row)
          objects.write(frag, recorded.fold(d)(_.attach(d, i)))
        })
    }
    CommitPlanner.withDiffs(cur, base, written.flatten)
  }

  /**
   * The change set `keyed` (in key order) as one shared DIFF appended to the chain of each fragment of `touched`
   * (format version 2): each reads its key range of it (the read rule). It has no parent (it follows several chains).
   */
  private def writeShared(spark: SparkSession, target: ObjectTarget, layout: TableLayout, cur: TableVersion,
                          base: Seq[Fragment], keyed: IndexedSeq[(InternalRow, InternalRow)],
                          change: Int => InternalRow => InternalRow, touched: Seq[Int]): (TableVersion, Seq[ObjectMeta]) = {
    val writer = new ObjectWriter(ParquetSink.forSharedDiffs(spark, layout.diffSchema), target, ObjectKind.Diff,
      expectedRows = keyed.size)
    val toDiff = change(keyed.size)
    try keyed.foreach { case (_, row) => writer.write(toDiff(row)) } catch { case e: Throwable => writer.abort(); throw e }
    val meta = writer.close().copy(parents = Nil, shared = true)
    val on = touched.toSet
    val frags = base.zipWithIndex.map { case (f, i) => if (on(i)) f.copy(objects = f.objects :+ meta.id) else f }
    (cur.copy(fragments = frags, compacted = None, format = versioned.core.TableFormat.SharedObjects), Seq(meta))
  }

  /**
   * (key, row) pairs in key order; with `validate`, checked by the kernel's `KeyRules.checkSorted` (computed changes
   * are one row per key already, and key-less tables allow nulls).
   */
  private def sortedByKey(rows: IndexedSeq[InternalRow], schema: StructType, layout: TableLayout,
                          validate: Boolean = true): IndexedSeq[(InternalRow, InternalRow)] = {
    val keys = layout.keyColumns
    val ordinals = keys.map(schema.fieldIndex).toArray
    val types = layout.keyTypes.toArray
    val cmp = SparkKeys.order(layout.keyTypes)
    val byKey: Ordering[(InternalRow, InternalRow)] = (a, b) => cmp.compare(a._1, b._1)
    val keyed = rows.map { r =>
      val values = new Array[Any](ordinals.length)
      var i = 0
      while (i < ordinals.length) { values(i) = r.get(ordinals(i), types(i)); i += 1 }
      (new GenericInternalRow(values): InternalRow, r)
    }.sorted(byKey)
    if (validate) KeyRules.checkSorted(keyed.map(_._1), cmp, keys, None)(SparkKeys.external(layout.keyTypes))
    keyed
  }

  /**
   * The DIFF rows of [[ChangeSets.byKey]] for rows held on the driver: its expressions, taken from the
   * analyzed plan over an empty relation of `schema`, bound to the rows; one projection per writing
   * thread (an UnsafeProjection reuses its output row).
   */
  private def diffRows(spark: SparkSession, schema: StructType, layout: TableLayout,
                       deleteColumn: Option[String], inserts: Boolean): Int => InternalRow => InternalRow = {
    val key = DiffRowsKey(schema, layout, deleteColumn, inserts, spark.sessionState.conf.caseSensitiveAnalysis)
    val bound = Option(boundDiffRows.get(key)).getOrElse {
      val exprs = LocalRules.projection(spark, schema, "a small write")(df =>
        if (inserts) ChangeSets.append(df, None, layout, upsert = false) else ChangeSets.byKey(df, deleteColumn, layout))
      if (boundDiffRows.size >= MaxCachedShapes) boundDiffRows.clear()
      boundDiffRows.put(key, exprs)
      exprs
    }
    n => ObjectWriter.projection(bound, n)
  }

  /** What the bound expressions of [[diffRows]] depend on: the rows' schema, the table, the resolution of names. */
  private final case class DiffRowsKey(schema: StructType, layout: TableLayout, deleteColumn: Option[String],
                                       inserts: Boolean, caseSensitive: Boolean)
  /**
   * [[diffRows]]' expressions by shape: analyzing the plan they come from costs a small commit several
   * milliseconds, and a table takes the same shape commit after commit. Expressions are immutable.
   */
  private val boundDiffRows = new java.util.concurrent.ConcurrentHashMap[DiffRowsKey, Seq[Expression]]()
  private val MaxCachedShapes = 256
}
