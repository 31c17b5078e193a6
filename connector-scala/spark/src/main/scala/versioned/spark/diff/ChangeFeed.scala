package versioned.spark.diff

import scala.collection.mutable
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.expressions.{BoundReference, GenericInternalRow, UnsafeProjection}
import org.apache.spark.sql.execution.datasources.FileFormat
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.functions.{col => _, _}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import versioned.core._
import versioned.core.format.CarryForward
import versioned.spark.format.Columns.col
import versioned.spark.session.TableIdent
import versioned.spark.session.VersionedOptions
import versioned.spark.format.TableLayout
import versioned.spark.read.{Conflation, FragmentBounds, ObjectFiles}

/**
 * The change feed of one table between two images on one first-parent line: one row per changed row
 * identity per commit (`insert`, `delete`, `update_preimage` / `update_postimage`), or the net change of
 * each row identity over the whole range.
 *
 * Per commit C (first parent P), the table's fragments are matched with P's (logical or compacted
 * representation, same bounds): a fragment whose chain is P's chain plus DIFF objects has exactly those
 * DIFFs as C's changes; they are read and conflated on executors, and the before-values of the keys they
 * delete, update or upsert are looked up in P by key. Any other changed fragment (a new SNAP: first load,
 * overwrite, a rewritten layout) is compared as two versions. So the cost follows the changes.
 */
private[versioned] object ChangeFeed {
  val ChangeType = "_change_type"
  val CommitVersion = "_commit_version"
  val CommitTimestamp = "_commit_timestamp"
  val Insert = "insert"
  val Delete = "delete"
  val Preimage = "update_preimage"
  val Postimage = "update_postimage"

  /** How many commit versions were compared whole and how many read from their DIFFs (for tests). */
  private[versioned] val compared = new java.util.concurrent.atomic.AtomicLong()
  private[versioned] val fromDiffs = new java.util.concurrent.atomic.AtomicLong()

  /** What the rows show: per commit or net over the range; updates as pre/post images or as delete + insert. */
  final case class Mode(netChanges: Boolean, computeUpdates: Boolean)

  /** The resolved feed: its user-facing layout and the commits it covers, oldest first. */
  final case class Plan(ident: TableIdent, layout: TableLayout, commits: Vector[SeqImage]) {
    def userSchema: StructType = layout.schema
    def schema: StructType = userSchema
      .add(StructField(ChangeType, StringType, nullable = false))
      .add(StructField(CommitVersion, LongType, nullable = false))
      .add(StructField(CommitTimestamp, TimestampType, nullable = false))
    /** The row identity: the primary key, or every column of a key-less table. */
    def rowId: Seq[String] = if (layout.hidden) layout.schema.fieldNames.toSeq else layout.primaryKey
  }

  /** A version: a revision the resolver accepts, or else (all digits) an image's sequence number. */
  def resolveVersion(engine: Engine, repo: String, v: String): SeqImage = {
    val s = Option(v).map(_.trim).getOrElse("")
    if (s.isEmpty) throw new InvalidInputException(ErrorClass.InvalidRevision,
      "A change feed version must be a branch, tag, lock, image hash or prefix (optionally with ~N / ^N) or a commit " +
        "sequence number (the _commit_version column).")
    val digits = s.forall(Character.isDigit)
    try engine.lineage.withSeq(repo, engine.resolve(repo, Revision.Spec(s)).hash) catch {
      case e @ (_: NotFoundException | _: AmbiguousRefException) if digits && !e.isInstanceOf[RepositoryNotFoundException] =>
        scala.util.Try(s.toLong).toOption.flatMap(engine.lineage.bySeq(repo, _)).getOrElse(
          throw new ImageNotFoundException(s"No revision or commit sequence number '$s' in repository '$repo'."))
    }
  }

  /** Commits between two versions (revisions or sequence numbers); `end` None: `head`. */
  def versionRange(engine: Engine, ident: TableIdent, start: String, end: Option[String], startInclusive: Boolean,
                   endInclusive: Boolean, head: => Image): Plan = {
    val from = resolveVersion(engine, ident.repo, start)
    val to = end.map(resolveVersion(engine, ident.repo, _)).getOrElse(engine.lineage.withSeq(ident.repo, head.hash))
    val path = engine.lineage.firstParentPath(ident.repo, from, to).getOrElse(
      throw new InvalidInputException(ErrorClass.InvalidRevision,
        s"Change feed of $ident: start version '$start' (image ${from.image.shortHash}, _commit_version ${from.seq}) " +
          s"is not an ancestor along first parents of end version '${end.getOrElse("the branch head")}' (image " +
          s"${to.image.shortHash}, _commit_version ${to.seq}). Give the older version first, on the same line of history."))
    plan(engine, ident, to, path.filter(i => (startInclusive || i.image.hash != from.image.hash) &&
      (endInclusive || i.image.hash != to.image.hash)))
  }

  /** Commits of the first-parent line of `head` created within the bounds (epoch milliseconds; None: unbounded). */
  def timeRange(engine: Engine, ident: TableIdent, startMs: Option[Long], endMs: Option[Long], startInclusive: Boolean,
                endInclusive: Boolean, head: Image): Plan = {
    val top = engine.lineage.withSeq(ident.repo, head.hash)
    def afterStart(t: Long) = startMs.forall(s => if (startInclusive) t >= s else t > s)
    def beforeEnd(t: Long) = endMs.forall(e => if (endInclusive) t <= e else t < e)
    val line = engine.lineage.firstParentWhile(ident.repo, top)(i => afterStart(i.image.createdMs))
    plan(engine, ident, top, line.filter(i => beforeEnd(i.image.createdMs)))
  }

  private def plan(engine: Engine, ident: TableIdent, end: SeqImage, commits: Vector[SeqImage]): Plan = {
    val endTable = engine.tableOption(ident.repo, end.image.hash, ident.table).getOrElse(
      throw new TableNotFoundException(ident.repo, ident.table, s"image ${end.image.shortHash}"))
    Plan(ident, TableLayout.of(endTable), commits)
  }

  /** One row identity's change in one commit: its physical rows before and after (absent: no row). */
  private final case class Change(commit: Int, key: Seq[Any], before: Option[Row], after: Option[Row])

  /** The feed's rows (of [[Plan.schema]]), in commit order. */
  def rows(spark: SparkSession, engine: Engine, location: Map[String, String], plan: Plan, mode: Mode): Array[InternalRow] = {
    val layout = plan.layout
    val physical = layout.physicalSchema
    val keyIdx = layout.keyColumns.map(physical.fieldIndex)
    val valueIdx = layout.nonKeyColumns.map(physical.fieldIndex)
    val userIdx = layout.schema.fieldNames.map(physical.fieldIndex).toSeq
    val changes = mutable.ArrayBuffer.empty[Change]
    plan.commits.indices.foreach(i => changes ++= commitChanges(spark, engine, location, plan, i))
    def sameValues(a: Row, b: Row) = valueIdx.forall(j => Values.same(a.get(j), b.get(j)))
    // writes that left a row as it was (an upsert of the same values) are no change, nor its last commit
    val real = changes.filter {
      case Change(_, _, Some(b), Some(a)) => !sameValues(b, a)
      case Change(_, _, b, a) => b.isDefined || a.isDefined
    }
    val effective: Seq[Change] =
      if (!mode.netChanges) real.toSeq
      else {
        val byKey = mutable.LinkedHashMap.empty[Seq[Any], Change]
        real.foreach { c =>
          byKey.get(c.key) match {
            case None => byKey(c.key) = c
            case Some(first) => byKey(c.key) = Change(c.commit, c.key, first.before, c.after)
          }
        }
        byKey.values.toSeq.sortBy(_.commit)
      }
    val toInternal = CatalystTypeConverters.createToCatalystConverter(physical)
    val out = mutable.ArrayBuffer.empty[InternalRow]
    def emit(r: Row, kind: String, commit: Int): Unit = {
      val phys = toInternal(r).asInstanceOf[InternalRow]
      val values = new Array[Any](userIdx.size + 3)
      var j = 0
      while (j < userIdx.size) { values(j) = phys.get(userIdx(j), physical(userIdx(j)).dataType); j += 1 }
      val c = plan.commits(commit)
      values(j) = UTF8String.fromString(kind)
      values(j + 1) = c.seq
      values(j + 2) = Math.multiplyExact(c.image.createdMs, 1000L)
      out += new GenericInternalRow(values)
    }
    effective.foreach {
      case Change(i, _, None, Some(a)) => emit(a, Insert, i)
      case Change(i, _, Some(b), None) => emit(b, Delete, i)
      case Change(i, _, Some(b), Some(a)) if !sameValues(b, a) =>
        if (mode.computeUpdates) { emit(b, Preimage, i); emit(a, Postimage, i) }
        else { emit(b, Delete, i); emit(a, Insert, i) }
      case _ => ()
    }
    out.toArray
  }

  private def read(spark: SparkSession, location: Map[String, String], plan: Plan, image: String): DataFrame =
    versioned.spark.read.PinnedRead.table(spark, location, plan.ident, image)

  /** Changes of commit `i` of the plan against its first parent. */
  private def commitChanges(spark: SparkSession, engine: Engine, location: Map[String, String], plan: Plan,
                            i: Int): Seq[Change] = {
    val repo = plan.ident.repo
    val c = plan.commits(i).image
    val now = engine.tableOption(repo, c.hash, plan.ident.table)
    // A commit that changed the schema or key starts a new feed: as the first commit of a range, its rows are
    // inserts; a range reaching further back is refused (a feed has one schema).
    val before = c.parents.headOption.flatMap(p => engine.tableOption(repo, p, plan.ident.table))
      .filterNot(b => i == 0 && !sameLayout(plan, b))
    (before, now) match {
      case (None, None) => Nil
      case (Some(b), Some(n)) if b.fragments == n.fragments && b.schemaJson == n.schemaJson && b.primaryKey == n.primaryKey => Nil
      case _ =>
        Seq(before, now).flatten.foreach(requireLayout(plan, _))
        val metas = engine.objects((now.toSeq ++ before.toSeq).flatMap(_.objectIds).distinct)
        val (diffChains, rewritten) = (before, now) match {
          case (Some(b), Some(n)) =>
            val direct = matchFragments(b, n, metas)
            if (!direct._2) direct else carriedMatch(engine, repo, c.parents.head, b, n, metas).getOrElse(direct)
          case _ => (Nil, true)
        }
        (if (rewritten) compared else fromDiffs).incrementAndGet()
        val diffRows = if (diffChains.isEmpty) Nil else diffChanges(spark, engine, location, plan, i, diffChains, metas, before.isDefined)
        val fromCompare = if (!rewritten) Nil else compareChanges(spark, location, plan, i, before.map(_ => c.parents.head), now.map(_ => c.hash))
        diffRows ++ fromCompare
    }
  }

  private def sameLayout(plan: Plan, t: TableVersion): Boolean = {
    val l = TableLayout.of(t)
    TableLayout.sameColumns(l.schema, plan.layout.schema) && l.primaryKey == plan.layout.primaryKey
  }

  private def requireLayout(plan: Plan, t: TableVersion): Unit = {
    val l = TableLayout.of(t)
    if (!sameLayout(plan, t))
      throw new SchemaMismatchException(s"Table ${plan.ident} changed its schema or primary key within the change feed " +
        s"range (${l.schema.toDDL}, key ${l.primaryKey.mkString("(", ", ", ")")} vs ${plan.layout.schema.toDDL}, key " +
        s"${plan.layout.primaryKey.mkString("(", ", ", ")")}); a change feed has one schema. Start the range after the change.")
  }

  /**
   * Matches each fragment of `n` with a fragment of `b` (logical or compacted) with the same bounds: equal
   * chains are unchanged, a chain extended by DIFFs yields those DIFFs; anything else means a rewrite
   * (`true`): the two versions are then compared as a whole. Each chain of added DIFFs comes with its fragment's
   * bounds, within which they are read (the read rule, `read/FragmentBounds`).
   */
  private[diff] def matchFragments(b: TableVersion, n: TableVersion, metas: Map[String, ObjectMeta]): (Seq[AddedChain], Boolean) = {
    def withUpper(fs: Seq[Fragment]) = fs.zipWithIndex.map { case (f, j) => (f, fs.lift(j + 1).map(_.lower)) }
    val candidates = (Seq(b.fragments) ++ b.compacted.toSeq).flatMap(withUpper)
    val chains = mutable.ArrayBuffer.empty[AddedChain]
    var rewritten = false
    withUpper(n.fragments).foreach { case (f, upper) =>
      val same = candidates.filter { case (g, u) => g.lower == f.lower && u == upper }.map(_._1.objects)
      if (!same.contains(f.objects)) {
        same.filter(p => f.objects.startsWith(p)).map(p => f.objects.drop(p.size))
          .find(added => added.forall(id => metas.get(id).exists(_.kind == ObjectKind.Diff))) match {
          case Some(added) => chains += AddedChain(added, f.lower, upper.flatten)
          case None => rewritten = true
        }
      }
    }
    if (rewritten) (Nil, true) else (chains.toSeq, false)
  }

  /**
   * [[matchFragments]] of `n` against `b` (the version of image `parent`) carried forward from the compacted form of
   * one of `b`'s first-parent ancestors (the kernel's rule, `CarryForward`, without divisions): a commit planned while
   * its parent had no compacted form builds on the compacted chains of the version its driver compacted last, carried
   * to the parent. The nearest such ancestor (at most `CarryForward.Depth` first parents back, while the table keeps
   * its shape) whose compacted objects `n` lists is tried; None when none matches.
   */
  private def carriedMatch(engine: Engine, repo: String, parent: String, b: TableVersion, n: TableVersion,
                           metas: Map[String, ObjectMeta]): Option[(Seq[AddedChain], Boolean)] = {
    val listed = n.fragments.iterator.flatMap(_.objects).toSet
    @scala.annotation.tailrec
    def search(image: String, depth: Int): Option[(Seq[AddedChain], Boolean)] =
      if (depth >= CarryForward.Depth) None
      else engine.image(repo, image).parents.headOption match {
        case None => None
        case Some(p) => engine.tableIfHeld(repo, p, b.name) match {
          case Some(a) if CarryForward.sameShape(b, a) =>
            val tried = a.compacted.filter(_.exists(_.objects.exists(listed))).flatMap(_ =>
              CarryForward.carry(b, a, divisible = false))
              .map(c => matchFragments(b.copy(compacted = Some(c.fragments)), n, metas)).filterNot(_._2)
            if (tried.isDefined) tried else search(p, depth + 1)
          case _ => None
        }
      }
    search(parent, 0)
  }

  /** The DIFFs a commit added to one fragment's chain (oldest first), and the fragment's bounds. */
  private[diff] final case class AddedChain(ids: Seq[String], lower: Option[Seq[Any]], upper: Option[Seq[Any]]) {
    def bounds(layout: TableLayout): FragmentBounds = FragmentBounds(layout.keyColumns, layout.keyTypes, lower, upper)
  }

  /** Reads and conflates the DIFF chains (one task each), then looks up before-values by key in the parent. */
  private def diffChanges(spark: SparkSession, engine: Engine, location: Map[String, String], plan: Plan, i: Int,
                          chains: Seq[AddedChain], metas: Map[String, ObjectMeta], parentHasTable: Boolean): Seq[Change] = {
    val layout = plan.layout
    val readSchema = layout.diffRead(layout.nonKeyColumns)
    val diffSchema = layout.diffSchema
    val backRefs = diffSchema.fields.toSeq.map(f => BoundReference(readSchema.fieldIndex(f.name), f.dataType, f.nullable))
    val conf = ObjectFiles.verifying(spark.sparkContext.hadoopConfiguration)
    val verifyConf = ObjectFiles.verifyingBroadcast(spark.sparkContext)
    val reader = new ParquetFileFormat().buildReaderWithPartitionValues(spark, diffSchema, new StructType(), readSchema,
      Nil, Map(FileFormat.OPTION_RETURNING_BATCH -> "false"), conf)
    val config = engine.config
    val keyTypes = layout.keyTypes
    val files = chains.map(c => c.ids.map(id => c.bounds(layout).file(config, metas(id)))) // the read rule
    val conflated: Array[InternalRow] = spark.sparkContext.parallelize(files, math.max(1, files.size)).flatMap { fs =>
      val back = UnsafeProjection.create(backRefs)
      val sources = fs.map(ObjectFiles.load(reader, _, ObjectFiles.identity(readSchema), verifyConf.value.value)).toArray
      Conflation(sources, keyTypes).iterator.map(r => back(r).copy(): InternalRow)
    }.collect()
    val toRow = CatalystTypeConverters.createToScalaConverter(diffSchema)
    val physical = layout.physicalSchema
    val changeIdx = diffSchema.fieldIndex(VersionedOptions.ChangeColumn)
    val keyIdx = layout.keyColumns.map(physical.fieldIndex)
    val rows = conflated.map(r => toRow(r).asInstanceOf[Row])
    def physicalRow(r: Row) = Row.fromSeq(r.toSeq.take(physical.size))
    def keyOf(r: Row): Seq[Any] = keyIdx.map(j => Values.canonical(r.get(j)))
    // Before-values: only for keys a DIFF deletes, updates or upserts (an Insert had no row).
    // Without value columns (key-less tables, all-key tables) a deleted key is the deleted row.
    val keyIsRow = layout.nonKeyColumns.isEmpty
    val lookup = rows.filter { r =>
      val k = r.getByte(changeIdx)
      k != ChangeKind.Insert && !(keyIsRow && k == ChangeKind.Delete)
    }.map(physicalRow).toIndexedSeq
    val deleted = if (!keyIsRow) Map.empty[Seq[Any], Row]
      else rows.filter(_.getByte(changeIdx) == ChangeKind.Delete).map(physicalRow).map(r => keyOf(r) -> r).toMap
    val previous: Map[Seq[Any], Row] = deleted ++
      (if (!parentHasTable || lookup.isEmpty) Map.empty
       else beforeValues(spark, location, plan, plan.commits(i).image.parents.head, lookup))
    rows.toSeq.map { r =>
      val k = keyOf(r)
      val after = if (r.getByte(changeIdx) == ChangeKind.Delete) None else Some(physicalRow(r))
      Change(i, k, previous.get(k), after)
    }
  }

  /** The parent's rows of the keys of `rows`, by key: a join with the parent's version, pruned by key when few. */
  private def beforeValues(spark: SparkSession, location: Map[String, String], plan: Plan, parent: String,
                           rows: Seq[Row]): Map[Seq[Any], Row] = {
    val layout = plan.layout
    val physical = layout.physicalSchema
    val keys = layout.keyColumns
    val keySchema = StructType(keys.map(physical(_)))
    val keyRows = rows.map(r => Row.fromSeq(keys.map(k => r.get(physical.fieldIndex(k)))))
    var old = read(spark, location, plan, parent)
    val first = keyRows.map(_.get(0)).distinct
    if (first.size <= 10000) old = old.filter(col(keys.head).isin(first: _*))
    val wanted = spark.createDataFrame(java.util.Arrays.asList(keyRows.toIndexedSeq: _*), keySchema)
      .select(keys.map(k => col(k).as(s"_vk_$k")): _*)
    val joined = old.join(wanted, keys.map(k => col(k) <=> col(s"_vk_$k")).reduce(_ && _), "left_semi")
    val keyIdx = keys.map(physical.fieldIndex)
    joined.select(physical.fieldNames.toIndexedSeq.map(col): _*).collect().map(r => keyIdx.map(j => Values.canonical(r.get(j))) -> r).toMap
  }

  /** A whole comparison of the parent's version and the commit's version (absent: an empty table). */
  private def compareChanges(spark: SparkSession, location: Map[String, String], plan: Plan, i: Int,
                             parent: Option[String], image: Option[String]): Seq[Change] = {
    val layout = plan.layout
    val physical = layout.physicalSchema
    val names = physical.fieldNames.toSeq
    def side(img: Option[String], tag: String): DataFrame = {
      val df = img.map(read(spark, location, plan, _))
        .getOrElse(spark.createDataFrame(spark.sparkContext.emptyRDD[Row], physical))
      df.select(names.map(n => col(n).as(s"${tag}_$n")) :+ lit(true).as(s"_$tag"): _*)
    }
    val o = side(parent, "o")
    val n = side(image, "n")
    val keys = layout.keyColumns
    val same = layout.nonKeyColumns.map(v => versioned.spark.format.Columns.same(col(s"o_$v"), col(s"n_$v"), physical(v).dataType)).foldLeft(lit(true))(_ && _)
    val joined = o.join(n, keys.map(k => col(s"o_$k") <=> col(s"n_$k")).reduce(_ && _), "full_outer")
      .filter(col("_o").isNull || col("_n").isNull || !same)
    val width = names.size
    val keyIdx = keys.map(physical.fieldIndex)
    joined.collect().toSeq.map { r =>
      val b = Option.when(!r.isNullAt(width))(Row.fromSeq((0 until width).map(r.get)))
      val a = Option.when(!r.isNullAt(2 * width + 1))(Row.fromSeq((width + 1 until 2 * width + 1).map(r.get)))
      Change(i, keyIdx.map(j => Values.canonical(a.orElse(b).get.get(j))), b, a)
    }
  }

  /** Equality of external values: arrays of bytes by content, NaN equal to NaN. */
  private object Values {
    def canonical(v: Any): Any = v match {
      case a: Array[Byte] => a.toSeq
      case d: java.math.BigDecimal => d.stripTrailingZeros()
      case d: scala.math.BigDecimal => d.bigDecimal.stripTrailingZeros()
      case _ => v
    }
    def same(a: Any, b: Any): Boolean = (a, b) match {
      case (x: Double, y: Double) => java.lang.Double.compare(x, y) == 0 || x == y
      case (x: Float, y: Float) => java.lang.Float.compare(x, y) == 0 || x == y
      case _ => canonical(a) == canonical(b)
    }
  }
}
