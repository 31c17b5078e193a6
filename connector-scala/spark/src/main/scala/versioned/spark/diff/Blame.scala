package versioned.spark.diff

import java.sql.Timestamp
import java.util.concurrent.atomic.AtomicLong
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.catalyst.CatalystTypeConverters
import org.apache.spark.sql.execution.datasources.FileFormat
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.functions.{col => _, _}
import org.apache.spark.sql.types._
import org.slf4j.LoggerFactory
import versioned.core._
import versioned.spark.format.Columns.col
import versioned.spark.format.TableLayout
import versioned.spark.read.{FragmentBounds, ObjectFiles, PinnedRead}
import versioned.spark.session.{Jobs, TableIdent}

/**
 * Row blame (docs/BLAME.md): for every row of a table at a revision, the commit of the revision's first-parent
 * line that last changed it (its hash, `seq`, time, author and message). Key-less tables are blamed by row
 * identity (the whole row and its duplicate ordinal), so each copy of a duplicated row has its own commit.
 *
 * The cost follows the history that matters. The driver walks the first-parent line newest first, reading from
 * the metastore only which objects each commit added to the table's chains ([[ChangeFeed.matchFragments]]); a
 * commit that only appended DIFFs changed exactly the keys of those DIFFs, which a Spark job reads (key columns
 * and the change kind, nothing else). Only a commit that rewrote a fragment (a new SNAP: an overwrite, a rewritten
 * layout) is compared whole with its parent. The walk stops at the commit that created the table (or changed its
 * key or, rewriting it, its schema), whose rows are the base, or as soon as every current row is attributed
 * (checked after 1, 2, 4, ... commits, and only when the DIFF rows read could cover the table). The answer is one
 * distributed join of the revision's keys with the newest change of each key: never a read of the table at every
 * commit.
 */
private[versioned] object Blame {
  val CommitHash = "_commit_hash"
  val CommitVersion = "_commit_version"
  val CommitTimestamp = "_commit_timestamp"
  val CommitAuthor = "_commit_author"
  val CommitMessage = "_commit_message"

  private val log = LoggerFactory.getLogger(getClass)
  private val Ord = "_vblame_ord"
  private val Deleted = "_vblame_deleted"
  private val Index = "_vblame_commit"
  /** A change's order, smaller is newer: commit index (0 = the revision) * Slots + (Slots - 1 - place in its chain). */
  private val Slots = 4096L

  /** Commits the walks looked at and commits compared whole (for tests). */
  private[versioned] val walked = new AtomicLong()
  private[versioned] val comparedWhole = new AtomicLong()

  /** The commit columns that follow the row identity's columns. */
  val CommitFields: Seq[StructField] = Seq(
    StructField(CommitHash, StringType, nullable = false), StructField(CommitVersion, LongType, nullable = false),
    StructField(CommitTimestamp, TimestampType, nullable = false), StructField(CommitAuthor, StringType),
    StructField(CommitMessage, StringType))

  /** The columns identifying a row: the primary key, or every column of a key-less table. */
  def identityColumns(layout: TableLayout): Seq[String] = if (layout.hidden) layout.schema.fieldNames.toSeq else layout.primaryKey

  /** The blame's schema for a table version. */
  def schema(t: TableVersion): StructType = {
    val l = TableLayout.of(t)
    StructType(identityColumns(l).map(l.schema(_)) ++ CommitFields)
  }

  /**
   * At most this many DIFF rows (from the metastore's row counts) make the newest change of each key a broadcast
   * table: the revision's keys are then probed in one scan, never shuffled.
   */
  val BroadcastRows = 2000000L

  /** The walked commits, newest first; the changes found; whether every row is attributed without a base. */
  private final case class Walk(commits: Vector[SeqImage], diffs: Vector[(Long, ObjectMeta, FragmentBounds)], rewritten: Vector[Int],
                                complete: Boolean) {
    /** Whether the changes are few enough to broadcast: only DIFF rows, at most [[BroadcastRows]]. */
    def small: Boolean = rewritten.isEmpty && diffs.iterator.map(_._2.rowCount).sum <= BroadcastRows
  }

  /** The blame of `ident` at `rev`: a DataFrame of [[schema]]; `TABLE_NOT_FOUND` when the table is not there. */
  def frame(spark: SparkSession, engine: Engine, location: Map[String, String], ident: TableIdent, rev: Revision): DataFrame =
    Jobs.described(spark, s"blame $ident") {
      val head = engine.resolve(ident.repo, rev)
      val table = engine.tableOption(ident.repo, head.hash, ident.table).getOrElse(
        throw new TableNotFoundException(ident.repo, ident.table, s"image ${head.shortHash}"))
      val layout = TableLayout.of(table)
      val keys = layout.keyColumns
      val current = PinnedRead.table(spark, location, ident, head.hash).select(keys.map(col): _*)
      val w = walk(spark, engine, location, ident, head, table, layout, current)
      val base = w.commits.size - 1
      log.info(s"Blame of $ident at ${head.shortHash}: ${w.commits.size} commits walked, ${w.diffs.size} DIFF objects, " +
        s"${w.rewritten.size} commits compared whole${if (w.complete) ", every row attributed before the base" else ""}")
      val changes = entries(spark, engine, location, ident, layout, w)
      val blamed = changes match {
        case None => current.withColumn(Index, lit(base))
        case Some(c) =>
          val newest = c.filter(!col(Deleted)).groupBy(keys.map(col): _*).agg(min(col(Ord)).as(Ord))
            .select(keys.map(k => col(k).as(s"_vb_$k")) :+ col(Ord): _*)
          current.join(if (w.small) broadcast(newest) else newest, keys.map(k => col(k) <=> col(s"_vb_$k")).reduce(_ && _), "left")
            .withColumn(Index, coalesce(floor(col(Ord) / Slots).cast(IntegerType), lit(base)))
      }
      val commitRows = w.commits.zipWithIndex.map { case (c, i) =>
        Row(i, c.image.hash, c.seq, new Timestamp(c.image.createdMs), c.image.author, c.image.message)
      }
      val commits = spark.createDataFrame(java.util.Arrays.asList(commitRows: _*),
        StructType(StructField(Index, IntegerType, nullable = false) +: CommitFields))
      blamed.join(broadcast(commits), Index).select((identityColumns(layout) ++ CommitFields.map(_.name)).map(col): _*)
    }

  /** Walks the first-parent line of `head` newest first until the table's base or until every row is attributed. */
  private def walk(spark: SparkSession, engine: Engine, location: Map[String, String], ident: TableIdent, head: Image,
                   headTable: TableVersion, layout: TableLayout, current: DataFrame): Walk = {
    val repo = ident.repo
    val commits = Vector.newBuilder[SeqImage]
    val diffs = Vector.newBuilder[(Long, ObjectMeta, FragmentBounds)]
    val rewritten = Vector.newBuilder[Int]
    lazy val lower = lowerBound(engine, headTable)
    lazy val total = current.count()
    var cur = engine.lineage.withSeq(repo, head.hash)
    var curTable = headTable
    var i = 0
    var diffRows = 0L
    var anyRewrite = false
    var nextCheck = 1
    var complete = false
    // each version's objects, read once: a commit's parent is the next step's commit
    val metas = scala.collection.mutable.HashMap.empty[String, ObjectMeta]
    def metasOf(ts: Seq[TableVersion]): Map[String, ObjectMeta] = {
      val ids = ts.flatMap(_.objectIds).distinct
      metas ++= engine.objects(ids.filterNot(metas.contains))
      ids.flatMap(id => metas.get(id).map(id -> _)).toMap
    }
    var done = false
    while (!done) {
      walked.incrementAndGet()
      commits += cur
      val parent = cur.image.parents.headOption.flatMap(p => engine.tableOption(repo, p, ident.table).map(p -> _))
      parent match {
        case Some((p, pt)) if keyed(pt, layout) || sameLayout(pt, layout) =>
          var base = false
          if (pt.fragments != curTable.fragments) {
            val known = metasOf(Seq(pt, curTable))
            val (chains, rewrote) = ChangeFeed.matchFragments(pt, curTable, known)
            if (!rewrote) chains.foreach(c => c.ids.zipWithIndex.foreach { case (id, pos) =>
              diffs += ((i * Slots + (Slots - 1 - pos), known(id), c.bounds(layout)))
              diffRows += known(id).rowCount
            })
            else if (sameLayout(pt, layout)) { rewritten += i; anyRewrite = true }
            else base = true // a rewrite that also changed the columns: this commit changed every row it kept
          }
          if (base) done = true
          else {
            if (i + 1 == nextCheck) {
              nextCheck *= 2
              // the DIFF rows read so far can only cover the table when there are at least as many
              if ((anyRewrite || diffRows >= lower) && (anyRewrite || diffRows >= total)) {
                val w = Walk(commits.result(), diffs.result(), rewritten.result(), complete = false)
                complete = entries(spark, engine, location, ident, layout, w).exists { c =>
                  c.groupBy(layout.keyColumns.map(col): _*).agg(min(struct(col(Ord), col(Deleted))).as("n"))
                    .filter(!col("n").getField(Deleted)).count() >= total
                }
                done = complete
              }
            }
            if (!done) { cur = engine.lineage.withSeq(repo, p); curTable = pt; i += 1 }
          }
        case _ => done = true // `cur` created the table, or changed its key: its rows are the base
      }
    }
    Walk(commits.result(), diffs.result(), rewritten.result(), complete)
  }

  /** A keyed table whose key (names and types) is the same in `t`: its older DIFFs' keys still identify rows. */
  private def keyed(t: TableVersion, layout: TableLayout): Boolean = {
    val l = TableLayout.of(t)
    !l.hidden && !layout.hidden && l.primaryKey == layout.primaryKey &&
      l.keyTypes.zip(layout.keyTypes).forall { case (a, b) => DataType.equalsIgnoreNullability(a, b) }
  }

  private def sameLayout(t: TableVersion, layout: TableLayout): Boolean = {
    val l = TableLayout.of(t)
    TableLayout.sameColumns(l.schema, layout.schema) && l.primaryKey == layout.primaryKey && l.hidden == layout.hidden
  }

  /** Rows the table holds at least, from the metastore: per chain, its SNAP's rows less every DIFF row after it. */
  private def lowerBound(engine: Engine, t: TableVersion): Long = {
    val chains = t.effectiveFragments.map(_.objects)
    val metas = engine.objects(chains.flatten.distinct)
    chains.map { ids =>
      val ms = ids.flatMap(metas.get)
      val snap = ms.filter(_.kind == ObjectKind.Snap).map(_.rowCount).sum
      math.max(0L, snap - ms.filter(_.kind == ObjectKind.Diff).map(_.rowCount).sum)
    }.sum
  }

  /**
   * Every change the walk found, one row per key and change: the key columns, whether it deleted the key, and its
   * order ([[Ord]]). DIFF objects are read as Spark tasks (key columns and change kind only); a commit that
   * rewrote the table is compared whole with its parent. None when the walk found no change.
   */
  private def entries(spark: SparkSession, engine: Engine, location: Map[String, String], ident: TableIdent,
                      layout: TableLayout, w: Walk): Option[DataFrame] = {
    val keys = layout.keyColumns
    val entrySchema = StructType(layout.keyFields.map(_.copy(nullable = true)) ++
      Seq(StructField(Deleted, BooleanType, nullable = false), StructField(Ord, LongType, nullable = false)))
    val fromDiffs = Option.when(w.diffs.nonEmpty) {
      val readSchema = layout.diffRead(Nil)
      val reader = new ParquetFileFormat().buildReaderWithPartitionValues(spark, layout.diffSchema, new StructType(),
        readSchema, Nil, Map(FileFormat.OPTION_RETURNING_BATCH -> "false"),
        ObjectFiles.verifying(spark.sparkContext.hadoopConfiguration))
      val verifyConf = ObjectFiles.verifyingBroadcast(spark.sparkContext)
      val config = engine.config
      val files = w.diffs.map { case (ord, m, b) => (ord, b.file(config, m)) } // the read rule
      val width = keys.size
      val slices = math.max(1, math.min(files.size, spark.sparkContext.defaultParallelism * 4))
      val rows = spark.sparkContext.parallelize(files, slices).mapPartitions { it =>
        val copy = ObjectFiles.identity(readSchema)
        val toRow = CatalystTypeConverters.createToScalaConverter(readSchema)
        it.flatMap { case (ord, f) =>
          ObjectFiles.load(reader, f, copy, verifyConf.value.value).iterator.map { r =>
            val row = toRow(r).asInstanceOf[Row]
            Row.fromSeq((0 until width).map(row.get) ++ Seq(row.getByte(width) == ChangeKind.Delete, ord))
          }
        }
      }
      spark.createDataFrame(rows, entrySchema)
    }
    val compared = w.rewritten.map { i =>
      comparedWhole.incrementAndGet()
      val c = w.commits(i).image
      wholeChanges(spark, location, ident, layout, c.parents.head, c.hash, i * Slots)
    }
    (fromDiffs.toSeq ++ compared).reduceOption(_ unionByName _)
  }

  /** The keys `image` changed against `parent` (inserted, updated or deleted), compared whole. */
  private def wholeChanges(spark: SparkSession, location: Map[String, String], ident: TableIdent, layout: TableLayout,
                           parent: String, image: String, ord: Long): DataFrame = {
    val names = layout.physicalSchema.fieldNames.toSeq
    def side(img: String, tag: String): DataFrame =
      PinnedRead.table(spark, location, ident, img).select(names.map(n => col(n).as(s"${tag}_$n")) :+ lit(true).as(s"_$tag"): _*)
    val keys = layout.keyColumns
    val same = layout.nonKeyColumns.map(v => versioned.spark.format.Columns.same(col(s"o_$v"), col(s"n_$v"), layout.physicalSchema(v).dataType))
      .foldLeft(lit(true))(_ && _)
    side(parent, "o").join(side(image, "n"), keys.map(k => col(s"o_$k") <=> col(s"n_$k")).reduce(_ && _), "full_outer")
      .filter(col("_o").isNull || col("_n").isNull || !same)
      .select(keys.map(k => coalesce(col(s"n_$k"), col(s"o_$k")).as(k)) ++
        Seq(col("_n").isNull.as(Deleted), lit(ord).as(Ord)): _*)
  }
}
