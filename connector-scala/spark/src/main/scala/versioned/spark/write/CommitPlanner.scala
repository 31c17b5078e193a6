package versioned.spark.write

import versioned.core.format.WriteMode

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.expressions.Window
import org.apache.spark.sql.functions.{col => _, _}
import org.apache.spark.sql.types.StructType
import org.apache.spark.storage.StorageLevel
import versioned.spark.format.Columns.col
import versioned.core._
import versioned.core.format.{CarryForward, CommitPath}
import versioned.spark.session._
import versioned.spark.format._

/**
 * Turns a DataFrame into exactly one commit: validates, decides SNAP vs DIFF (Splitgraph's rules),
 * computes conflated changes, writes objects on executors, then records the image in one metastore
 * transaction that moves the branch by compare-and-swap. Small upserts whose rows are already on the
 * driver are computed and written there instead ([[LocalCommit]]), with the same result.
 */
private[versioned] object CommitPlanner {

  def commit(engine: Engine, req: WriteRequest, rawInput: DataFrame): CommitResult =
    commit(engine, req, StagedInput(rawInput))

  /**
   * One commit. Objects are written under `lease` (a write that staged its rows brings the lease it
   * staged them under; otherwise one is opened for the commit). The write is done when the image is
   * recorded: compaction afterwards runs off the commit path and is best effort ([[Compactions]]).
   */
  def commit(engine: Engine, request: WriteRequest, staged: StagedInput, lease: Option[Lease] = None): CommitResult = {
    // a stream's batch: nothing to commit when the branch has it already ([[StreamBatches]]); else one commit that records it
    val req = request.stream.fold(request) { b =>
      val branch = request.branch.getOrElse(engine.defaultBranchOrConfig(request.ident.repo))
      StreamBatches.replayed(engine, request.ident.repo, branch, request.ident.table, b).foreach(r => return r)
      request.copy(message = StreamBatches.message(request.message, b, request.ident.table, branch), allowEmpty = true)
    }
    val spark = SparkSession.active
    // every setting, including the compaction ones used after the commit, is valid before anything is written
    val settings = Settings.of(spark)
    val result = Jobs.described(spark, s"commit ${req.ident}${req.branch.map("@" + _).getOrElse("")}") {
      lease match {
        case Some(l) => record(spark, engine, req, staged, l)
        case None => engine.leases.withLease(req.ident.repo, "commit")(record(spark, engine, req, staged, _))
      }
    }
    compactAfter(spark, engine, req, result.image, settings)
    result
  }

  /**
   * Compaction of `req`'s table after the commit of `image` ([[Compactions]]: in a background thread of the
   * driver by default): best effort, a failure is logged, never raised.
   */
  def compactAfter(spark: SparkSession, engine: Engine, req: WriteRequest, image: Image, settings: Settings): Unit =
    Compactions.afterCommit(spark, engine, req, image, settings)

  /**
   * Plans the write on the head it builds on and records it. When the branch moved meanwhile and the
   * commits in between changed this table too, the write is planned again on the new head (bounded
   * retries with backoff, [[Rebase]]) if it can be: a write of given data always can; computed changes
   * (DML) can when the concurrent commits touched none of their keys. Otherwise the conflict is raised.
   */
  private def record(spark: SparkSession, engine: Engine, req: WriteRequest, staged: StagedInput, lease: Lease): CommitResult = {
    val target = ObjectTarget(engine.config, lease.id)
    req.deleteColumn.foreach(ChangeSets.checkDeleteColumn(staged.schema, _))
    val repo = req.ident.repo
    val branch = req.branch.getOrElse(engine.defaultBranchOrConfig(repo))
    val current = engine.writableHead(repo, branch)
    // computed changes build on the image they were computed from
    val planned = req.expectedHead.fold(current)(h => Some(engine.image(repo, h)))
    Rebase.retrying(engine, planned) { head =>
      val update = if (req.replaceWhere.isDefined) ReplaceWhere.plan(spark, engine, req, staged, head, target)
        else plan(spark, engine, req, staged, head, target)
      engine.commit(repo, branch, head.map(_.hash), Map(req.ident.table -> update), req.author, req.message, Some(lease),
        allowEmpty = req.allowEmpty)
    } { (from, to) => req.mode != WriteMode.Changes || Rebase.disjointChanges(spark, engine, req, staged.frame, from, to) }
  }

  /** The new version of the table when `staged` is written on `head` (objects written, nothing recorded). */
  def plan(spark: SparkSession, engine: Engine, req: WriteRequest, staged: StagedInput, head: Option[Image],
           target: ObjectTarget): TableUpdate.Put = {
    val current = head.flatMap(h => engine.tableOption(req.ident.repo, h.hash, req.ident.table)).map(carriedBase(engine, req.ident, _))
    plan(spark, req, staged, Base(current, () => versioned.spark.read.PinnedRead.table(spark, req.locationOptions, req.ident, head.get.hash),
      Some(() => TableSnapshot.of(engine, req.ident.repo, head.get, current.get))), target)
  }

  /**
   * The representation of the head's version `v` a commit builds on: its compacted form, or, while a compaction
   * has not recorded one yet (a stream commits faster than it compacts), the compacted chains of the version this
   * driver compacted last carried forward by the kernel's rule, without divisions ([[CarryForward]],
   * [[CompactedHints]]); else its logical chains. So a commit's chains, and with them the metadata every later
   * commit reads, writes and hashes, stay as long as the compacted ones instead of growing with the history.
   */
  private def carriedBase(engine: Engine, ident: TableIdent, v: TableVersion): TableVersion =
    if (v.compacted.isDefined) v
    else CompactedHints.version(engine, ident.repo, ident.table).flatMap(CarryForward.carry(v, _, divisible = false))
      .fold(v)(c => v.copy(compacted = Some(c.fragments)))

  /**
   * The version a write builds on: the table (None: it does not exist yet) and a read of its rows with
   * the hidden duplicate ordinal of key-less tables, called only when the table exists. A committed
   * version, or one a transaction has not committed yet. `snapshot` (a committed version) lets the driver look
   * keys up in it without a Spark job ([[LocalCommit]]).
   */
  final case class Base(table: Option[TableVersion], read: () => DataFrame, snapshot: Option[() => TableSnapshot] = None)

  /** The new version of the table when `staged` is written on `base` (objects written, nothing recorded). */
  def plan(spark: SparkSession, req: WriteRequest, staged: StagedInput, base: Base, target: ObjectTarget): TableUpdate.Put = {
    val inputSchema = req.deleteColumn.fold(staged.schema)(c => StructType(staged.schema.filterNot(_.name == c)))
    val current = base.table
    val pk = req.primaryKey.orElse(current.map(_.primaryKey)).getOrElse(Seq.empty)
    val userSchema = if (req.mode == WriteMode.Changes) StructType(inputSchema.filterNot(f =>
      Seq(VersionedOptions.ChangeColumn, VersionedOptions.DupColumn).exists(_.equalsIgnoreCase(f.name)))) else inputSchema
    val layout = TableLayout.create(userSchema, pk)
    if (req.upsert && req.deleteColumn.isEmpty && layout.hidden) throw Errors.invalidOption(
      s"An upsert needs a primary key, and ${req.ident} has none: its rows are their own identity, so an upsert " +
        "could only append copies. Give the table a key (primaryKey on its first write, or ALTER TABLE ... ADD " +
        "PRIMARY KEY), or append without upsert. Nothing was committed.")
    val currentLayout = current.map(TableLayout.of)
    val onHead = VersionedWriteBuilder.target(current, layout)
    val sameShape = onHead.sameShape
    if (current.isDefined && !sameShape && req.mode != WriteMode.Overwrite) {
      val c = currentLayout.get
      val verb = if (req.upsert) "upsert into" else if (req.mode == WriteMode.Changes) "write changes to" else "append to"
      throw new SchemaMismatchException(s"Cannot $verb ${req.ident}: the table has columns " +
        s"${c.schema.toDDL} with primary key (${c.primaryKey.mkString(", ")}), the data has ${layout.schema.toDDL} " +
        s"with key (${pk.mkString(", ")}). Align the DataFrame, or use mode 'overwrite' to replace the schema.")
    }
    // where the objects of before-images' chains are found (write option beforeImages)
    val priors: LocalCommit.Priors = Option.when(req.beforeImages)(ids => Warehouses.engine(spark, req.locationOptions).objects(ids))
    // the committed version, loaded once, and its key ranges built once (the inserts' key check reads them twice)
    val stored = base.snapshot.map(new StoredTable(_))
    val produced = CommitPath.Produced(staged.localRows.isDefined, staged.overwrite.isDefined, staged.snapshot.isDefined,
      keysCheckable = staged.localRows.exists(rows => LocalCommit.keysCheckable(layout, staged.schema, rows, stored)),
      oneFragment = staged.localRows.exists(_.size <= Warehouses.fragmentRows(spark)))
    val shaped = current.filter(_ => sameShape)
    val (version, objects) = CommitPath.step(VersionedWriteBuilder.request(req), onHead, produced) match {
      // small upserts: changes follow from the data alone, so the driver writes the DIFFs itself; small inserts
      // too, once the driver has looked their keys up in the table
      case CommitPath.LocalAppend =>
        LocalCommit.writeDiffs(spark, target, layout, current.get, staged.schema, req.deleteColumn, staged.localRows.get,
          priors, LocalCommit.inserts(req), LocalCommit.lookedUp(req, stored), table = stored)
      // a new SNAP of a few keyed rows (a transaction's first write of a table): the driver writes it, no job
      case CommitPath.LocalSnapshot =>
        LocalCommit.writeSnapshot(spark, target, layout, staged.schema, staged.localRows.get, req.ident.table)
      // computed changes already collected by the caller (a small merge)
      case CommitPath.LocalChanges =>
        LocalCommit.writeChanges(spark, target, layout, current.get, staged.schema, staged.localRows.get, priors)
      case CommitPath.ComputedChanges =>
        planChanges(spark, target, req, staged.frame, layout, current.get, base.read, priors)
      // a keyed overwrite whose tasks computed its DIFFs over the version on `head`, else planned from its rows
      case CommitPath.TaskDiffs =>
        staged.overwrite.get.on(current.get).getOrElse(planDistributed(spark, target, req, staged.frame, layout, current, base.read))
      case CommitPath.TaskSnapshot => prewritten(spark, target, req, staged, layout, shaped, base.read)
      case CommitPath.Distributed => planDistributed(spark, target, req, staged.frame, layout, shaped, base.read)
    }
    TableUpdate.Put(version, objects)
  }

  /**
   * Computed changes (DML, deleteWhere): written by the driver when there are few (no shuffle), else
   * with Spark jobs; the frame stays cached meanwhile so it is computed once.
   */
  private def planChanges(spark: SparkSession, target: ObjectTarget, req: WriteRequest, changes: DataFrame, layout: TableLayout,
                          cur: TableVersion, read: () => DataFrame, priors: LocalCommit.Priors): (TableVersion, Seq[ObjectMeta]) = {
    val owned = changes.storageLevel == StorageLevel.NONE // DML hands over a cached frame already
    val cached = if (owned) changes.persist(StorageLevel.MEMORY_AND_DISK) else changes
    try LocalCommit.collectSmall(cached, Warehouses.localCommitMaxRows(spark)) match {
      case Some(rows) => LocalCommit.writeChanges(spark, target, layout, cur, cached.schema, rows, priors)
      case None => planDistributed(spark, target, req, cached, layout, Some(cur), read)
    } finally if (owned) cached.unpersist()
  }

  /**
   * Rows the write tasks already wrote as SNAP objects ([[SnapshotWrite]]). When the objects are fragments
   * (valid keys, runs that do not overlap) and the write still makes that SNAP (no table with the data's
   * shape on `head`), they are the new version; otherwise the objects are the staged rows, planned as
   * usual (and validated, unless they were found valid already).
   */
  private def prewritten(spark: SparkSession, target: ObjectTarget, req: WriteRequest, staged: StagedInput,
                         layout: TableLayout, current: Option[TableVersion],
                         read: () => DataFrame): (TableVersion, Seq[ObjectMeta]) = {
    val s = staged.snapshot.get
    if (s.fragments && current.isEmpty && s.layout == layout) s.version(req.ident.table)
    else planDistributed(spark, target, req, staged.frame, layout, current, read,
      validated = s.fragments && s.layout.keyColumns == layout.keyColumns)
  }

  /**
   * Validation (unless the rows were `validated` already), SNAP or DIFF with Spark jobs; `current` is the
   * table when the data has its shape.
   */
  private def planDistributed(spark: SparkSession, target: ObjectTarget, req: WriteRequest, rawInput: DataFrame,
                              layout: TableLayout, current: Option[TableVersion],
                              read: () => DataFrame, validated: Boolean = false): (TableVersion, Seq[ObjectMeta]) = {
    val marked = req.deleteColumn.map(_ => rawInput)
    val input = req.deleteColumn.fold(rawInput)(c => rawInput.select(rawInput.columns.filter(_ != c).map(col).toIndexedSeq: _*))
    if (req.mode != WriteMode.Changes && !validated) Validation.check(input, layout)
    val readCurrent = () => Some(read())
    current match {
      case None =>
        val rows = marked.fold(input)(m => m.filter(!coalesce(col(req.deleteColumn.get), lit(false))).drop(req.deleteColumn.get))
        writeSnapshot(spark, target, layout, withDup(rows, layout), req.ident.table)
      case Some(cur) =>
        val changes = req.mode match {
          case WriteMode.Append if marked.isDefined => ChangeSets.byKey(marked.get, req.deleteColumn, layout)
          case WriteMode.Append if layout.hidden => ChangeSets.appendHidden(input, readCurrent(), layout)
          case WriteMode.Append => ChangeSets.append(input, if (req.upsert) None else readCurrent(), layout, req.upsert)
          case WriteMode.Overwrite if layout.hidden => ChangeSets.overwriteHidden(input, readCurrent().get, layout)
          case WriteMode.Overwrite => ChangeSets.overwrite(input, readCurrent().get, layout)
          case WriteMode.Changes => input
        }
        writeDiffs(target, layout, cur, changes)
    }
  }

  /** Rows of a key-less table numbered by `_vdup` (0, 1, ... per identical row); other tables as they are. */
  private[versioned] def withDup(input: DataFrame, layout: TableLayout): DataFrame =
    if (!layout.hidden) input
    else input.withColumn(VersionedOptions.DupColumn,
      (row_number().over(Window.partitionBy(layout.schema.fieldNames.map(col).toIndexedSeq: _*).orderBy(lit(1))) - 1)
        .cast("int"))

  /** A new SNAP: range-partitioned by key into fragments of about the target size, sorted inside. */
  def writeSnapshot(spark: SparkSession, target: ObjectTarget, layout: TableLayout, df: DataFrame,
                    table: String): (TableVersion, Seq[ObjectMeta]) = {
    val keys = layout.keyColumns.map(col)
    val rows = df.count()
    val n = math.max(1L, math.ceil(rows.toDouble / Warehouses.fragmentRows(spark)).toLong).toInt
    val ranged = df.repartitionByRange(n, keys: _*).sortWithinPartitions(keys: _*)
      .withColumn(FragmentWriter.FragColumn, spark_partition_id())
    val written = FragmentWriter.write(ranged, layout.physicalSchema, layout.keyColumns, ObjectKind.Snap, target)
    val fragments = written.zipWithIndex.map { case (w, i) => Fragment(if (i == 0) None else Some(w.firstKey), Seq(w.meta.id)) }
    (TableVersion(table, layout.schemaJson, layout.primaryKey, layout.hidden, fragments), written.map(_.meta))
  }

  /**
   * DIFF objects: changes routed to the fragment whose key range holds them, grouped by fragment in each task;
   * a task's object goes on across its fragments up to the kernel's `CommitPath.taskDiffSpan` (shared DIFFs),
   * else one object per fragment.
   */
  def writeDiffs(target: ObjectTarget, layout: TableLayout, cur: TableVersion,
                 changes: DataFrame): (TableVersion, Seq[ObjectMeta]) = {
    val spark = SparkSession.active
    val base = baseFragments(cur)
    val keys = layout.keyColumns
    val routed = changes.withColumn(FragmentWriter.FragColumn, Routing.fragmentOf(base, layout))
    val parts = math.max(1, math.min(base.size, spark.sparkContext.defaultParallelism))
    val sorted = routed.repartition(parts, col(FragmentWriter.FragColumn))
      .sortWithinPartitions((FragmentWriter.FragColumn +: keys).map(col): _*)
    val span = versioned.core.format.CommitPath.taskDiffSpan(beforeImages = false,
      versioned.spark.session.Settings.of(spark).sharedDiffMaxRows)
    withDiffs(cur, base, FragmentWriter.write(sorted, layout.diffSchema, keys, ObjectKind.Diff, target, spanRows = span))
  }

  /** The fragments changes are routed to: the effective ones, or one unbounded fragment for an empty table. */
  def baseFragments(cur: TableVersion): Seq[Fragment] =
    if (cur.effectiveFragments.isEmpty) Seq(Fragment(None, Seq.empty)) else cur.effectiveFragments

  /**
   * The table version with each written DIFF appended to the chain of each fragment it holds changes of
   * (`base` from [[baseFragments]]): its parent is that chain's last object, or none for an object several
   * fragments list (a shared DIFF, which makes the table format version 2).
   */
  def withDiffs(cur: TableVersion, base: Seq[Fragment], written: Seq[WrittenObject]): (TableVersion, Seq[ObjectMeta]) = {
    if (written.isEmpty) return (cur, Seq.empty) // no change: link the parent's objects, same table hash
    val byFrag = written.flatMap(w => w.fragments.map(_ -> w.meta.id)).toMap
    val metas = written.map { w =>
      if (w.also.isEmpty) w.meta.copy(parents = base(w.fragment).objects.lastOption.toSeq)
      else w.meta.copy(parents = Nil, shared = true)
    }
    val frags = base.zipWithIndex.map { case (f, i) => byFrag.get(i).map(id => f.copy(objects = f.objects :+ id)).getOrElse(f) }
    val format = if (written.exists(_.also.nonEmpty)) math.max(cur.format, versioned.core.TableFormat.SharedObjects) else cur.format
    (cur.copy(fragments = frags, compacted = None, format = format), metas)
  }
}
