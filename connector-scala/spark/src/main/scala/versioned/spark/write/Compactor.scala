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
   * Default policy: a fragment is compacted at commit time once its DIFFs hold `maxDiffRatio` of its
   * SNAP's rows (Delta rewrites files past a few percent of deleted rows) or its chain reaches
   * `maxChain` DIFFs. Reads stay cheap in between: DIFFs are conflated before the base is merged.
   */
  def maybeCompact(spark: SparkSession, engine: Engine, req: WriteRequest, image: Image, maxChain: Int): Unit = {
    val snap = TableSnapshot.load(engine, req.ident.repo, req.ident.table, image)
    val frags = snap.version.effectiveFragments
    val ratio = Warehouses.maxDiffRatio(spark)
    val long = frags.indices.filter { i =>
      val n = diffCount(frags(i), snap.objects)
      n >= maxChain || (n > 0 && diffRatio(frags(i), snap.objects) >= ratio)
    }.toSet
    if (long.nonEmpty) compact(spark, engine, snap, long, req.locationOptions)
  }

  /** Compacts `fragments` (indexes into the effective representation) of one table version. */
  def compact(spark: SparkSession, engine: Engine, snap: TableSnapshot, fragments: Set[Int],
              options: Map[String, String]): Seq[ObjectMeta] = {
    val layout = snap.layout
    val restricted = snap.restrictedTo(fragments)
    val planned = new VersionedScan(restricted, layout.physicalSchema, Nil).partitions.map(_.index)
    val df = spark.read.format("versioned").options(options)
      .option(VersionedOptions.Image, snap.image.hash)
      .option(VersionedOptions.IncludeHidden, "true")
      .option(VersionedOptions.OnlyFragments, fragments.toSeq.sorted.mkString(","))
      .load(s"${snap.repo}.${snap.table}")
    val written = FragmentWriter.write(df, layout.physicalSchema, layout.keyColumns, ObjectKind.Snap, snap.config,
      Some(planned))
    val byFrag = written.map(w => w.fragment -> w).toMap
    val base = snap.version.effectiveFragments
    val next = base.zipWithIndex.map { case (f, i) =>
      if (!fragments.contains(i)) f else f.copy(objects = byFrag.get(i).map(w => Seq(w.meta.id)).getOrElse(Seq.empty))
    }
    val metas = written.map(w => w.meta.copy(parents = base(w.fragment).objects))
    engine.setCompacted(snap.repo, snap.image.hash, snap.table, next, metas)
    metas
  }
}
