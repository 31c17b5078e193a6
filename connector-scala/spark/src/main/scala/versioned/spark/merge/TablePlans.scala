package versioned.spark.merge

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.functions.{col => _, _}
import org.apache.spark.sql.types.StringType
import org.apache.spark.storage.StorageLevel
import versioned.core._
import versioned.spark.format.Columns.col
import versioned.spark.session.TableIdent
import versioned.spark.format.TableLayout
import versioned.spark.diff.TableDiff
import versioned.spark.read.PinnedRead
import versioned.spark.write.{ChangeSets, CommitPlanner}

/**
 * Decides, per table, what a three-way merge does, from the table versions at the base, the target
 * (ours) and the source (theirs): a table changed on one side only takes that side's version as it is
 * (compared by content hash, so it costs nothing); a table changed on both sides is merged row by row
 * ([[ThreeWay]]) from the two diffs against the base. A row merge whose theirs' DIFF rows are at most
 * `localMaxRows` is planned on the driver.
 */
private[merge] final class TablePlans(spark: SparkSession, engine: Engine, location: Map[String, String], repo: String,
                                      base: Option[Image], ours: Image, theirs: Option[Image], strategy: Strategy,
                                      localMaxRows: Long) {
  private val log = org.slf4j.LoggerFactory.getLogger(getClass)
  private def tables(i: Option[Image]): Map[String, TableVersion] =
    i.map(img => engine.tables(repo, img.hash).map(t => t.name -> t).toMap).getOrElse(Map.empty)

  def plans(): Seq[TablePlan] = {
    val (b, o, t) = (tables(base), tables(Some(ours)), tables(theirs))
    (b.keySet ++ o.keySet ++ t.keySet).toSeq.sorted.flatMap(n => plan(n, b.get(n), o.get(n), t.get(n)))
  }

  private def plan(name: String, b: Option[TableVersion], o: Option[TableVersion],
                   t: Option[TableVersion]): Option[TablePlan] = {
    def h(v: Option[TableVersion]) = v.map(_.hash)
    def theirsUpdate: TableUpdate = t.map(v => TableUpdate.Put(v, Seq.empty)).getOrElse(TableUpdate.Drop)
    def ddl(v: Option[TableVersion]) = v.map(x => s"${TableLayout.of(x).schema.toDDL} key(${x.primaryKey.mkString(",")})")
    if (h(o) == h(t) || h(t) == h(b)) None
    else if (h(o) == h(b)) Some(TablePlan.Take(name, theirsUpdate))
    else if (o.isEmpty || t.isEmpty) Some(TablePlan.Whole(name, "drop", ddl(b), ddl(o), ddl(t), theirsUpdate))
    else {
      val (lo, lt) = (TableLayout.of(o.get), TableLayout.of(t.get))
      val sameShape = (x: TableLayout, y: TableLayout) =>
        TableLayout.sameColumns(x.schema, y.schema) && x.primaryKey == y.primaryKey
      if (sameShape(lo, lt) && b.forall(v => sameShape(TableLayout.of(v), lo))) Some(rows(name, lo, Seq(b, o, t)))
      else SchemaMerge(b.map(TableLayout.of), lo, lt) match {
        case Left(why) =>
          log.info(s"versioned: merge of $repo.$name: schema conflict: $why")
          Some(TablePlan.Whole(name, "schema", ddl(b), ddl(o), ddl(t), theirsUpdate))
        case Right(merged) => Some(reshaped(name, merged, lo, lt))
      }
    }
  }

  /**
   * Both sides changed the table and its columns (or one side's): the merged columns ([[SchemaMerge]]),
   * both sides' changes aligned to them, merged by the row rules. Each side is diffed against the base
   * whole ([[TableDiff]] across schema changes); a key-less table's three versions are read whole.
   */
  private def reshaped(name: String, m: SchemaMerge.Merged, lo: TableLayout, lt: TableLayout): TablePlan.Rows = {
    val layout = m.layout
    val ident = TableIdent(repo, name)
    def rowsAt(i: Image) = PinnedRead.table(spark, location, ident, i.hash)
    def aligned(i: Image, side: TableLayout) = SchemaMerge.project(rowsAt(i), side, layout)
    if (layout.hidden) {
      val b = base.flatMap(i => engine.tableOption(repo, i.hash, name).map(v => aligned(i, TableLayout.of(v))))
      val desired = SchemaMerge.multiset(layout, b, aligned(ours, lo), aligned(theirs.get, lt))
      val target = if (m.reshapes(lo)) Some(CommitPlanner.withDup(aligned(ours, lo), layout)
        .persist(StorageLevel.MEMORY_AND_DISK)) else None
      val changes = ChangeSets.overwriteHidden(desired, target.getOrElse(rowsAt(ours)), layout)
      TablePlan.Rows(name, layout, changes, None, target.toSeq, target)
    } else {
      def diff(to: Image, side: TableLayout): DataFrame = SchemaMerge.alignDiff(base match {
        case Some(f) => TableDiff.diff(spark, location, ident.toString, f, to)
        case None => asInserts(rowsAt(to), side)
      }, layout).persist(StorageLevel.MEMORY_AND_DISK)
      val (dOurs, dTheirs) = (diff(ours, lo), diff(theirs.get, lt))
      val joined = scala.collection.mutable.ArrayBuffer.empty[DataFrame]
      val (changes, conflicts) = ThreeWay.keyed(layout, dOurs, dTheirs, strategy,
        broadcastOurs = dOurs.count() <= TablePlans.BroadcastRows, hold = TablePlans.held(joined), m.oursLacks,
        m.theirsLacks)
      val target = Option.when(m.reshapes(lo))(aligned(ours, lo))
      TablePlan.Rows(name, layout, changes, Some(conflicts), Seq(dOurs, dTheirs) ++ joined, target)
    }
  }

  /** A row merge of table `name`, whose `versions` at the base, ours and theirs have the same columns and key. */
  private def rows(name: String, layout: TableLayout, versions: Seq[Option[TableVersion]]): TablePlan = {
    val ident = TableIdent(repo, name).toString
    def diff(from: Option[Image], to: Image): DataFrame = from match {
      case Some(f) => TableDiff.diff(spark, location, ident, f, to) // follows the change since the base
      case None => asInserts(PinnedRead.table(spark, location, TableIdent(repo, name), to.hash), layout)
    }
    // the usual case: both sides appended DIFFs to the base's chains; read only what they appended
    val inputs = base.filter(_ => !layout.hidden).flatMap(b => MergeInputs(spark, location, TableIdent(repo, name), b, ours,
      theirs.get, versions, layout, localMaxRows))
    inputs match {
      // a small merge's joined sides are on the driver: merged there when no row conflicts (no query planned)
      case Some(in: MergeInputs.Joined.Local) =>
        ThreeWay.mergedLocal(spark, layout, in.internal, strategy) match {
          case Some((schema, changes)) => TablePlan.Local(name, layout, schema, changes)
          case None =>
            val (changes, conflicts) = ThreeWay.merged(layout, in.frame, strategy)
            TablePlan.Rows(name, layout, changes, Some(conflicts), local = true)
        }
      case Some(in: MergeInputs.Joined.Distributed) =>
        val joined = in.frame.persist(StorageLevel.MEMORY_AND_DISK)
        val (changes, conflicts) = ThreeWay.merged(layout, joined, strategy)
        TablePlan.Rows(name, layout, changes, Some(conflicts), Seq(joined))
      case None =>
        // each diff is read once: the changes, the conflicts and the counts all derive from both
        val (dOurs, dTheirs) = (diff(base, ours).persist(StorageLevel.MEMORY_AND_DISK),
          diff(base, theirs.get).persist(StorageLevel.MEMORY_AND_DISK))
        if (layout.hidden) {
          val current = PinnedRead.table(spark, location, TableIdent(repo, name), ours.hash)
          TablePlan.Rows(name, layout, ThreeWay.keyless(layout, dOurs, dTheirs, current), None, Seq(dOurs, dTheirs))
        } else {
          val joined = scala.collection.mutable.ArrayBuffer.empty[DataFrame]
          val (changes, conflicts) = ThreeWay.keyed(layout, dOurs, dTheirs, strategy,
            broadcastOurs = dOurs.count() <= TablePlans.BroadcastRows, hold = TablePlans.held(joined))
          TablePlan.Rows(name, layout, changes, Some(conflicts), Seq(dOurs, dTheirs) ++ joined)
        }
    }
  }

  /** A whole version as the diff from an empty table: every row inserted. */
  private def asInserts(rows: DataFrame, layout: TableLayout): DataFrame = {
    val keys = layout.keyColumns.filterNot(_ == versioned.spark.session.VersionedOptions.DupColumn)
    rows.select((lit("insert").as(TableDiff.ChangeColumn) +: keys.map(col)) ++ layout.nonKeyColumns.flatMap(v =>
      Seq(lit(null).cast(layout.physicalSchema(v).dataType).as(s"${v}_before"), col(v).as(s"${v}_after"))): _*)
  }
}

private[merge] object TablePlans {
  /** Up to this many changed rows on the target's side, its diff is broadcast to the row merge. */
  val BroadcastRows = 1000000L

  /** Persists a frame and records it in `into`, to be released with the plan. */
  def held(into: scala.collection.mutable.ArrayBuffer[DataFrame])(df: DataFrame): DataFrame = {
    val p = df.persist(StorageLevel.MEMORY_AND_DISK)
    into += p
    p
  }

  /** Public shape of conflicts: table, key (JSON of the key columns), column, base, ours, theirs, kind. */
  def publicConflicts(spark: SparkSession, plans: Seq[TablePlan]): DataFrame = {
    val parts = plans.collect {
      case TablePlan.Rows(t, layout, _, Some(c), _, _, _) =>
        c.select(lit(t).as("table") +: to_json(struct(layout.primaryKey.map(col): _*)).as("key") +:
          ThreeWay.ConflictColumns.map(col): _*)
      case w: TablePlan.Whole =>
        spark.createDataFrame(java.util.List.of(org.apache.spark.sql.Row(w.table, null, null, w.base.orNull,
          w.ours.orNull, w.theirs.orNull, w.kind)), schema)
    }
    parts.reduceOption(_ unionByName _).getOrElse(spark.createDataFrame(java.util.List.of[org.apache.spark.sql.Row](), schema))
  }

  val schema: org.apache.spark.sql.types.StructType = org.apache.spark.sql.types.StructType(
    ("table" +: "key" +: ThreeWay.ConflictColumns).map(org.apache.spark.sql.types.StructField(_, StringType)))
}
