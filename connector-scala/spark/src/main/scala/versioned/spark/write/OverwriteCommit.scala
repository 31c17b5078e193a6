package versioned.spark.write

import versioned.spark.format.SparkKeys
import versioned.core.format.KeyOrder

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection}
import org.apache.spark.sql.execution.datasources.FileFormat
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.types.StructType
import versioned.core.{ObjectKind, ObjectMeta, TableVersion}
import versioned.spark.session.Warehouses
import versioned.spark.format.Values
import versioned.spark.read.{ObjectFile, ObjectFiles}

/**
 * The driver's part of an [[OverwriteWrite]]: from the tasks' results, either the finished new version
 * (DIFFs over the base version) or the write's rows to plan as before.
 */
private[versioned] object OverwriteCommit {
  private val log = org.slf4j.LoggerFactory.getLogger(getClass)
  /** One-pass overwrites planned again from their rows (overlapping ranges, a moved head...), for tests. */
  val fallbacks = new java.util.concurrent.atomic.AtomicLong()

  /** A task's run of keys (internal key rows) and what it wrote. */
  private final case class Run(part: OverwritePart, first: InternalRow, last: InternalRow)

  def input(spark: SparkSession, t: OverwriteTask, base: TableVersion, parts: Seq[OverwritePart]): StagedInput = {
    val keys = t.layout.keyColumns
    if (parts.exists(_.nullKey)) throw Validation.nullKey(keys, None)
    val types = t.layout.keyTypes
    val cmp = SparkKeys.order(types)
    def row(values: Seq[Any]): InternalRow = Values.internalRow(values, types)
    val runs = parts.filter(_.rows > 0).map(p => Run(p, row(p.firstKey.get), row(p.lastKey.get)))
      .sortWith((a, b) => cmp.compare(a.first, b.first) < 0)
    parts.flatMap(_.repeated).headOption.foreach { case (values, _) =>
      val n = rowsWith(t, runs, row(values), cmp) + parts.flatMap(_.repeated).filter(_._1 == values).map(_._2).sum
      throw Validation.duplicateKey(keys, n, values.zip(types).map { case (v, dt) => Values.toExternal(v, dt) }, None)
    }
    val update = if (SnapshotWrite.disjoint(runs, cmp)(_.first, _.last)) complete(spark, t, base, runs, cmp, row) else None
    if (update.isEmpty) {
      fallbacks.incrementAndGet()
      log.info(s"Overwrite of ${base.name}: the tasks' key ranges overlap or leave many current rows outside them; " +
        s"planned from the rows (${runs.size} tasks)")
    }
    new StagedInput {
      override val schema: StructType = StagedWrite.nullable(t.layout.physicalSchema).asInstanceOf[StructType]
      override def localRows: Option[IndexedSeq[InternalRow]] = None
      override def overwrite: Option[PrewrittenOverwrite] = Some(PrewrittenOverwrite(base, update))
      override lazy val frame: DataFrame = OverwriteCommit.rows(spark, t, runs)
    }
  }

  /**
   * The new version from disjoint runs: deletes of the current keys outside every run (read on the driver,
   * at most `localCommitMaxRows` stored rows, else None), then one DIFF per fragment.
   */
  private def complete(spark: SparkSession, t: OverwriteTask, base: TableVersion, runs: Seq[Run], cmp: KeyOrder[InternalRow],
                       row: Seq[Any] => InternalRow): Option[(TableVersion, Seq[ObjectMeta])] = {
    val route = Routing.local(t.fragments, t.layout)
    val lastFragment = t.fragments.size - 1
    // the key ranges (exclusive bounds, None: unbounded) that may hold current keys no task saw
    val gaps: Seq[(Option[InternalRow], Option[InternalRow])] =
      if (runs.isEmpty) Seq((None, None)).filter(_ => t.chain.fragments.nonEmpty)
      else {
        val head = runs.head
        val beforeFirst = Option.when(head.part.before || (0 until route(head.first)).exists(t.chain.nonEmpty))((None, Some(head.first)))
        val between = runs.zip(runs.drop(1)).collect {
          case (a, b) if a.part.after.exists(k => cmp.compare(row(k), b.first) < 0) => (Some(a.last), Some(b.first))
        }
        val afterLast = Option.when(runs.last.part.after.isDefined)((Some(runs.last.last), None))
        beforeFirst.toSeq ++ between ++ afterLast
      }
    val gapFragments = gaps.map { case (lo, hi) => (lo, hi, lo.fold(0)(route) to hi.fold(lastFragment)(route)) }
    val toRead = gapFragments.flatMap(_._3).distinct.map(t.chain.storedRows).sum
    if (toRead > Warehouses.localCommitMaxRows(spark)) return None
    val diff = t.rules.evaluator()
    val deletes = gapFragments.flatMap { case (lo, hi, frags) =>
      frags.flatMap { f =>
        val it = t.chain.rows(f)
        try it.filter(k => lo.forall(cmp.compare(_, k) < 0) && hi.forall(cmp.compare(k, _) < 0))
          .map(k => f -> diff(k, null).copy()).toVector
        finally ObjectFiles.close(Seq(it))
      }
    }.groupBy(_._1).map { case (f, rs) => f -> rs.map(_._2) }
    val pieces = runs.flatMap(_.part.objects).groupBy(_.fragment)
    val single = pieces.collect { case (f, Seq(w)) if !deletes.contains(f) => w }.toSeq
    val toMerge = (pieces.keySet ++ deletes.keySet).toSeq.filterNot(f => single.exists(_.fragment == f)).sorted
    val merged = merge(spark, t, toMerge.map(f => (f, pieces.getOrElse(f, Nil), deletes.getOrElse(f, Nil))))
    log.info(s"Overwrite of ${base.name}: ${runs.size} tasks, ${single.size + merged.size} DIFFs " +
      s"(${merged.size} merged), ${deletes.values.map(_.size).sum} deletes outside the tasks' ranges")
    Some(CommitPlanner.withDiffs(base, t.fragments, (single ++ merged).sortBy(_.fragment)))
  }

  /** One DIFF per fragment from several tasks' DIFFs and driver-side deletes (disjoint keys), written on the driver. */
  private def merge(spark: SparkSession, t: OverwriteTask,
                    work: Seq[(Int, Seq[WrittenObject], Seq[InternalRow])]): Seq[WrittenObject] = if (work.isEmpty) Nil else {
    val schema = t.layout.diffSchema
    val conf = ObjectFiles.verifying(spark.sparkContext.hadoopConfiguration)
    val read = new ParquetFileFormat().buildReaderWithPartitionValues(spark, schema, new StructType(), schema, Nil,
      Map(FileFormat.OPTION_RETURNING_BATCH -> "false"), conf)
    val copy = ObjectFiles.identity(schema)
    val keyOf = UnsafeProjection.create(t.layout.keyColumns.map(k => BoundReference(schema.fieldIndex(k), schema(k).dataType, true)))
    val cmp = SparkKeys.order(t.layout.keyTypes)
    val byKey: Ordering[(InternalRow, InternalRow)] = (a, b) => cmp.compare(a._1, b._1)
    work.flatMap { case (f, objects, deletes) =>
      val rows = objects.flatMap(w => ObjectFiles.load(read, file(t, w.meta), copy, conf)) ++ deletes
      val sorted = rows.map(r => (keyOf(r).copy(): InternalRow, r)).sorted(byKey)
      new ObjectRuns(t.sink, t.target, ObjectKind.Diff, t.layout.keyColumns).writing(out =>
        sorted.foreach { case (_, r) => out.write(f, r) })
    }
  }

  /**
   * The tasks that have `key` (a task reports only the rows of a key beyond its first): those whose range
   * holds it and whose rows, the base version's with the task's DIFFs, have it (read on the driver).
   */
  private def rowsWith(t: OverwriteTask, runs: Seq[Run], key: InternalRow, cmp: KeyOrder[InternalRow]): Long = {
    val f = Routing.local(t.fragments, t.layout)(key)
    runs.count { r =>
      cmp.compare(r.first, key) <= 0 && cmp.compare(key, r.last) <= 0 && {
        val it = t.chain.rows(f, r.part.objects.filter(_.fragment == f).map(w => file(t, w.meta)))
        try it.exists(cmp.compare(_, key) == 0) finally ObjectFiles.close(Seq(it))
      }
    }.toLong
  }

  /** A held object in the write lease's staging area. */
  private def file(t: OverwriteTask, m: ObjectMeta): ObjectFile =
    ObjectFile(t.target.reusedUri(m.id), m.sizeBytes, m.rowCount, m.id, m.checksum)

  /**
   * The write's rows: for each task, the base version's rows of its key range with the task's DIFFs applied
   * (read with one Spark task per write task), in the physical layout.
   */
  private def rows(spark: SparkSession, t: OverwriteTask, runs: Seq[Run]): DataFrame = {
    val layout = t.layout
    val merged = StagedWrite.nullable(layout.keyFirst(layout.nonKeyColumns)).asInstanceOf[StructType]
    val physical = layout.physicalSchema.fieldNames.toSeq
    if (runs.isEmpty) return spark.createDataFrame(spark.sparkContext.emptyRDD[Row], merged).select(physical.map(versioned.spark.format.Columns.col): _*)
    val route = Routing.local(t.fragments, layout)
    val specs = runs.map { r =>
      (r.part.firstKey.get, r.part.lastKey.get, route(r.first), route(r.last), r.part.objects.map(w => w.fragment -> file(t, w.meta)))
    }
    val chain = t.chain
    val types = layout.keyTypes
    val rdd = spark.sparkContext.parallelize(specs, specs.size).mapPartitions { it =>
      val cmp = SparkKeys.order(types)
      val toRow = CatalystTypeConverters.createToScalaConverter(merged)
      it.flatMap { case (first, last, from, to, objects) =>
        val (lo, hi) = (Values.internalRow(first, types), Values.internalRow(last, types))
        (from to to).iterator.flatMap { f =>
          chain.rows(f, objects.filter(_._1 == f).map(_._2))
            .filter(k => cmp.compare(lo, k) <= 0 && cmp.compare(k, hi) <= 0).map(r => toRow(r).asInstanceOf[Row])
        }
      }
    }
    spark.createDataFrame(rdd, merged).select(physical.map(versioned.spark.format.Columns.col): _*)
  }
}
