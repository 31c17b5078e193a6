package versioned.spark.merge

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.types.StructType
import versioned.core.{Fragment, Image, ObjectKind, ObjectMeta, TableVersion}
import versioned.spark.session.TableIdent
import versioned.spark.session.{TableSnapshot, Warehouses}
import versioned.spark.format.TableLayout
import versioned.spark.diff.{DiffPlan, DiffShape, FastDiff, FragmentDiff}

/**
 * The inputs of a keyed three-way merge of one table, read from the objects each side added since the
 * merge base, when they allow it: both sides' chains extend the base's chain by DIFF objects only,
 * fragment by fragment (the usual case: branches that committed changes since they forked). Then only
 * what theirs changed is read, the rows of the base are looked up only for keys both sides changed,
 * and ours' changes are read only where theirs changed the same fragment, already joined with theirs by key
 * ([[FragmentDiff.mergeJoined]]).
 * Otherwise (a side re-snapshotted or compacted a fragment, the schema changed, a key-less table), the
 * merge diffs each side against the base ([[TableDiff]]).
 */
private[versioned] object MergeInputs {
  /** Fragments whose merge inputs were read from the DIFFs both sides appended, in this JVM (for tests). */
  private[versioned] val followedFragments = new java.util.concurrent.atomic.AtomicLong()

  /**
   * The joined sides of the merge (`ThreeWay.joinedSchema` of `layout`, one row per key theirs changed), read in one
   * pass over the DIFFs both sides appended; None when the chains do not allow it. When theirs' DIFF rows
   * are at most `localMaxRows`, the pass runs on the driver ([[Joined.Local]]). `versions`: the table at the base,
   * ours and theirs, as the caller read them (None where the table is absent); their objects' records are read in one
   * metastore query.
   */
  def apply(spark: SparkSession, location: Map[String, String], ident: TableIdent, base: Image, ours: Image,
            theirs: Image, versions: Seq[Option[TableVersion]], layout: TableLayout, localMaxRows: Long): Option[Joined] = {
    val engine = Warehouses.engine(spark, location)
    if (versions.exists(_.isEmpty)) return None
    val records = engine.objects(versions.flatMap(_.get.objectIds).distinct)
    val Seq(b, o, t) = Seq(base, ours, theirs).zip(versions.flatten).map { case (i, v) =>
      TableSnapshot.within(engine.config, ident.repo, i, v, records) }
    val shape = DiffShape.of(ident.toString, Some(o.layout), Some(t.layout))
    val sameBase = DiffShape.of(ident.toString, Some(b.layout), Some(o.layout)).exact
    if (b.layout.hidden || !sameBase || !FastDiff.supports(shape)) return None
    val metas = b.objects ++ o.objects ++ t.objects
    plan(b.version, o.version, t.version, metas).map { fast =>
      followedFragments.addAndGet(fast.size)
      val lookedUp = fast.map(_.copy(extraTo = Nil)) // only keys ours changed are looked up in the base
      val schema = versioned.spark.merge.ThreeWay.joinedSchema(layout)
      val local = fast.flatMap(_.extraTo).map(id => metas(id).rowCount).sum <= localMaxRows
      if (local) Joined.Local(spark, schema,
        FastDiff.runOnDriver(spark, t.config, t.layout, schema, fast, lookedUp, metas)(FragmentDiff.mergeJoined))
      else Joined.Distributed(FastDiff.run(spark, t.config, t.layout, schema, fast, lookedUp, metas)(FragmentDiff.mergeJoined))
    }
  }

  /** The joined sides of a merge (`ThreeWay.joinedSchema`). */
  sealed trait Joined { def frame: DataFrame }
  object Joined {
    /** Computed on the driver (a small merge): its rows, and as a frame a local relation of them. */
    final case class Local(spark: SparkSession, schema: StructType, rows: Seq[Row]) extends Joined {
      def internal: IndexedSeq[InternalRow] = {
        val convert = CatalystTypeConverters.createToCatalystConverter(schema)
        rows.map(r => convert(r).asInstanceOf[InternalRow]).toIndexedSeq
      }
      lazy val frame: DataFrame = spark.createDataFrame(scala.jdk.CollectionConverters.SeqHasAsJava(rows).asJava, schema)
    }
    /** Computed by Spark tasks when the frame is used. */
    final case class Distributed(frame: DataFrame) extends Joined
  }

  /**
   * Per fragment theirs changed: the base's chain and the DIFFs ours and theirs appended to it, over
   * representations of the three versions with the same fragment bounds; None when no such choice
   * has every changed fragment of both sides extend the base by DIFFs.
   */
  private def plan(base: versioned.core.TableVersion, ours: versioned.core.TableVersion,
                   theirs: versioned.core.TableVersion, metas: Map[String, ObjectMeta]): Option[Seq[DiffPlan.Fast]] = {
    def extension(b: Seq[String], x: Seq[String]): Option[Seq[String]] =
      Option.when(x.startsWith(b) && x.drop(b.size).forall(id => metas.get(id).exists(_.kind == ObjectKind.Diff)))(x.drop(b.size))
    def fragments(fb: Seq[Fragment], fo: Seq[Fragment], ft: Seq[Fragment]): Option[Seq[DiffPlan.Fast]] = {
      val per = fb.indices.map { i =>
        if (ft(i).objects == fb(i).objects) Some(None) // theirs did not change it: ours keeps it
        else for (eo <- extension(fb(i).objects, fo(i).objects); et <- extension(fb(i).objects, ft(i).objects))
          yield { val (lo, hi) = DiffPlan.boundsOf(fb, i); Some(DiffPlan.Fast(i, fb(i).objects, eo, et, lo, hi)) }
      }
      Option.when(per.forall(_.isDefined))(per.flatMap(_.get))
    }
    val choices = for {
      (_, fb) <- DiffPlan.representations(base)
      (_, fo) <- DiffPlan.representations(ours)
      (_, ft) <- DiffPlan.representations(theirs)
      if fb.map(_.lower) == fo.map(_.lower) && fb.map(_.lower) == ft.map(_.lower)
      fast <- fragments(fb, fo, ft)
    } yield fast
    choices.headOption
  }
}
