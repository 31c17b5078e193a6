package versioned.spark.diff

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.RowOrdering
import org.apache.spark.sql.execution.datasources.FileFormat
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.sources._
import org.apache.spark.sql.types._
import versioned.core.{ObjectKind, ObjectMeta, WarehouseConfig}
import versioned.spark.{TableLayout, Values, VersionedOptions}
import versioned.spark.read.{ObjectFile, ObjectFiles}

/**
 * The driver side of the diff that follows the change: one Spark task per few fragments of
 * [[DiffPlan.Fast]] runs [[FragmentDiff]]. Before-values are looked up with the changed keys pushed
 * down to Parquet: when the extra DIFFs hold at most [[MaxFilterKeys]] rows, their first key column is
 * read on the driver and becomes a filter of those values (runs of consecutive integers as ranges);
 * otherwise the key ranges recorded for each extra DIFF (min/max statistics) are the filter.
 */
private[versioned] object FastDiff {
  /** Most extra DIFF rows whose keys are read on the driver to build the exact key filter. */
  val MaxFilterKeys = 10000

  /** Whether the fast path can compare values of this shape (every value type supports equality). */
  def supports(shape: DiffShape): Boolean = shape.exact && shape.values.forall(f => RowOrdering.isOrderable(f.dataType))

  def frame(spark: SparkSession, config: WarehouseConfig, layout: TableLayout, shape: DiffShape, fast: Seq[DiffPlan.Fast],
            metas: Map[String, ObjectMeta]): DataFrame = {
    val nonKey = layout.nonKeyColumns
    val rowSchema = layout.keyFirst(nonKey)
    val conf = ObjectFiles.verifying(spark.sparkContext.hadoopConfiguration)
    val format = new ParquetFileFormat()
    def file(id: String) = ObjectFile.of(config, metas(id))
    // each reader gets its own configuration: building one sets the requested schema in the one it is given
    def reader(data: StructType, read: StructType, fs: Seq[Filter], batch: Boolean): ObjectFiles.Reader =
      format.buildReaderWithPartitionValues(spark, data, new StructType(), read, fs,
        Map(FileFormat.OPTION_RETURNING_BATCH -> batch.toString), new org.apache.hadoop.conf.Configuration(conf))
    val tasks = fast.map { f =>
      val (snap, diffs) = f.prefix.partition(id => metas(id).kind == ObjectKind.Snap)
      FragmentTask(snap.headOption.map(file), diffs.map(file), f.extraFrom.map(file), f.extraTo.map(file))
    }
    val lookups = tasks.filter(t => t.prefixSnap.isDefined || t.prefixDiffs.nonEmpty)
    val filter = if (lookups.isEmpty) None else keyFilter(layout, fast.filter(_.prefix.nonEmpty), metas, file,
      reader(layout.diffSchema, StructType(Seq(layout.keyFields.head)), Nil, batch = false), conf)
    val diffRead = layout.diffRead(nonKey)
    val snapBatches = format.supportBatch(spark, rowSchema)
    val readers = FragmentDiffReaders(
      rowSchema, layout.keyColumns.size,
      layout.keyColumns.indices.filterNot(i => layout.keyColumns(i) == VersionedOptions.DupColumn),
      reader(layout.diffSchema, diffRead, Nil, batch = false),
      Option.when(lookups.exists(_.prefixDiffs.nonEmpty))(reader(layout.diffSchema, diffRead, filter.toSeq, batch = false)),
      Option.when(lookups.exists(_.prefixSnap.isDefined))(reader(layout.physicalSchema, rowSchema, filter.toSeq, snapBatches)),
      snapBatches, shape.resultSchema,
      spark.sparkContext.broadcast(new org.apache.spark.util.SerializableConfiguration(conf)))
    val slices = math.max(1, math.min(tasks.size, 4 * spark.sparkContext.defaultParallelism))
    val rdd = spark.sparkContext.parallelize(tasks, slices).mapPartitions(_.flatMap(FragmentDiff.rows(readers, _)))
    spark.createDataFrame(rdd, shape.resultSchema)
  }

  /**
   * A filter on the first key column that every changed key of the fragments satisfies (None: no
   * filter). Floating-point keys get none (Parquet statistics order -0.0 and NaN differently).
   */
  private def keyFilter(layout: TableLayout, fast: Seq[DiffPlan.Fast], metas: Map[String, ObjectMeta],
                        file: String => ObjectFile, firstKeyReader: => ObjectFiles.Reader,
                        conf: org.apache.hadoop.conf.Configuration): Option[Filter] = {
    val first = layout.keyFields.head
    if (!Values.supported(first.dataType) || first.dataType == FloatType || first.dataType == DoubleType) return None
    val extras = fast.flatMap(f => f.extraFrom ++ f.extraTo).distinct
    if (extras.isEmpty) return None
    val name = first.name
    def lit(canonical: Any): Any = Values.toExternal(canonical, first.dataType)
    val leaves: Seq[Filter] =
      if (extras.map(metas(_).rowCount).sum <= MaxFilterKeys) {
        val read = firstKeyReader
        val values = extras.flatMap { id =>
          val it = ObjectFiles.open(read, file(id), conf)
          try it.map((r: InternalRow) => Values.fromInternal(r, 0, first.dataType)).toVector finally ObjectFiles.close(Seq(it))
        }.distinct
        val (nulls, present) = values.partition(_ == null)
        nulls.headOption.map(_ => IsNull(name): Filter).toSeq ++ runs(present, first.dataType).map {
          case (lo, hi) if lo == hi => EqualTo(name, lit(lo))
          case (lo, hi) => And(GreaterThanOrEqual(name, lit(lo)), LessThanOrEqual(name, lit(hi)))
        }
      } else {
        val ranges = extras.map(metas).filter(_.rowCount > 0).map { m =>
          for { lo <- m.minValues.get(name); hi <- m.maxValues.get(name) } yield {
            val range: Filter = And(GreaterThanOrEqual(name, lit(Values.fromJson(lo, first.dataType))),
              LessThanOrEqual(name, lit(Values.fromJson(hi, first.dataType))))
            if (m.nullCounts.getOrElse(name, 0L) > 0) Or(range, IsNull(name)) else range
          }
        }
        if (ranges.exists(_.isEmpty)) return None // a DIFF without statistics for the key (only nulls)
        ranges.flatten
      }
    if (leaves.isEmpty) None else Some(balancedOr(leaves.toIndexedSeq))
  }

  /** Sorted canonical values as ranges: consecutive integers (dates) merge into one range. */
  private def runs(values: Seq[Any], dt: DataType): Seq[(Any, Any)] = dt match {
    case ByteType | ShortType | IntegerType | LongType | DateType =>
      values.map(_.asInstanceOf[Long]).sorted.foldLeft(List.empty[(Long, Long)]) {
        case ((lo, hi) :: rest, v) if v == hi + 1 => (lo, v) :: rest
        case (acc, v) => (v, v) :: acc
      }.reverse
    case _ => values.map(v => (v, v))
  }

  private def balancedOr(fs: IndexedSeq[Filter]): Filter =
    if (fs.size == 1) fs.head else { val (l, r) = fs.splitAt(fs.size / 2); Or(balancedOr(l), balancedOr(r)) }
}
