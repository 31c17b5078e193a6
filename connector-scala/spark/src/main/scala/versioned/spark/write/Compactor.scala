package versioned.spark.write

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.types.StructType
import versioned.core._
import versioned.spark._
import versioned.spark.read.VersionedScan

/**
 * Bounded chains: rewrites fragments whose DIFF chain grew too long into one compacted SNAP each and
 * records the result as an equivalent representation of the same table version (the image hash does
 * not change; the original objects stay for history). Later commits build on the compacted form.
 */
private[versioned] object Compactor {
  def diffCount(f: Fragment, objects: Map[String, ObjectMeta]): Int = f.objects.count(id => objects(id).kind == ObjectKind.Diff)

  /** Rows in a fragment's DIFFs relative to its SNAP's rows (a DIFF-only chain counts as 1.0). */
  def diffRatio(f: Fragment, objects: Map[String, ObjectMeta]): Double = {
    val metas = f.objects.map(objects)
    val snapRows = metas.filter(_.kind == ObjectKind.Snap).map(_.rowCount).sum
    val diffRows = metas.filter(_.kind == ObjectKind.Diff).map(_.rowCount).sum
    if (diffRows == 0) 0.0 else if (snapRows == 0) 1.0 else diffRows.toDouble / snapRows
  }

  /**
   * The DIFFs at the end of a fragment's chain that were written by commits (not by an earlier
   * consolidation, whose objects record the two or more DIFFs they merged as parents).
   */
  def trailingCommitDiffs(f: Fragment, objects: Map[String, ObjectMeta]): Seq[String] =
    f.objects.reverse.takeWhile(id => objects(id).kind == ObjectKind.Diff && objects(id).parents.size <= 1).reverse

  /**
   * Default policy, at commit time, per fragment: a compacted SNAP once its DIFFs hold `maxDiffRatio`
   * of its SNAP's rows (Delta rewrites files past a few percent of deleted rows) or its chain reaches
   * `maxChain` DIFFs; otherwise, once `consolidateAfter` commit DIFFs follow the last SNAP or
   * consolidated DIFF, those DIFFs are merged into one (only changed rows are rewritten).
   */
  def maybeCompact(spark: SparkSession, engine: Engine, req: WriteRequest, image: Image, maxChain: Int): Unit = {
    val snap = TableSnapshot.load(engine, req.ident.repo, req.ident.table, image)
    val frags = snap.version.effectiveFragments
    val ratio = Warehouses.maxDiffRatio(spark)
    val consolidateAfter = math.max(2, Warehouses.consolidateAfter(spark))
    val long = frags.indices.filter { i =>
      val n = diffCount(frags(i), snap.objects)
      n >= maxChain || (n > 0 && diffRatio(frags(i), snap.objects) >= ratio)
    }.toSet
    val runs = frags.indices.filterNot(long.contains).map(i => i -> trailingCommitDiffs(frags(i), snap.objects))
      .filter(_._2.size >= consolidateAfter).toMap
    if (long.nonEmpty || runs.nonEmpty) compact(spark, engine, snap, long, req.locationOptions, runs)
  }

  /**
   * Compacts `fragments` (indexes into the effective representation) of one table version to one
   * SNAP each and merges each of `runs` (fragment -> consecutive DIFF ids) into one DIFF, recorded
   * together as the version's compacted representation.
   */
  def compact(spark: SparkSession, engine: Engine, snap: TableSnapshot, fragments: Set[Int],
              options: Map[String, String], runs: Map[Int, Seq[String]] = Map.empty): Seq[ObjectMeta] = {
    val layout = snap.layout
    val written =
      if (fragments.isEmpty) Seq.empty
      else {
        val restricted = snap.restrictedTo(fragments)
        val planned = new VersionedScan(restricted, layout.physicalSchema, Nil).partitions.map(_.index)
        val df = spark.read.format("versioned").options(options)
          .option(VersionedOptions.Image, snap.image.hash)
          .option(VersionedOptions.IncludeHidden, "true")
          .option(VersionedOptions.OnlyFragments, fragments.toSeq.sorted.mkString(","))
          .load(s"${snap.repo}.${snap.table}")
        FragmentWriter.write(df, layout.physicalSchema, layout.keyColumns, ObjectKind.Snap, snap.config, Some(planned))
      }
    val consolidated = if (runs.isEmpty) Map.empty[Int, ObjectMeta] else DiffConsolidation.write(spark, snap, runs)
    val byFrag = written.map(w => w.fragment -> w).toMap
    val base = snap.version.effectiveFragments
    val next = base.zipWithIndex.map { case (f, i) =>
      if (fragments.contains(i)) f.copy(objects = byFrag.get(i).map(w => Seq(w.meta.id)).getOrElse(Seq.empty))
      else consolidated.get(i).fold(f)(m => f.copy(objects = f.objects.dropRight(runs(i).size) :+ m.id))
    }
    val metas = written.map(w => w.meta.copy(parents = base(w.fragment).objects)) ++ consolidated.values
    engine.setCompacted(snap.repo, snap.image.hash, snap.table, next, metas)
    metas
  }
}
