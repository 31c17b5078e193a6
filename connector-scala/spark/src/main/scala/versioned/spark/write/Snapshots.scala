package versioned.spark.write

import org.apache.spark.sql.SparkSession
import versioned.core._
import versioned.spark.session.TableSnapshot

/** One table of one image that [[Snapshots.materialize]] compacted. */
final case class MaterializedTable(image: String, table: String, fragments: Int, objects: Int)

/**
 * Ref-driven snapshots (MMS5): every image a branch, tag or lock points at gets a fully compacted
 * representation (one SNAP per fragment), so reading any ref costs a plain scan. Images no ref points
 * at lose theirs ([[Maintenance.evict]]); their logical chains, bounded by compaction at commit time,
 * stay readable. Default policy: chains are compacted at commit time once they reach
 * `spark.versioned.compaction.maxChainLength` DIFFs; `materialize` is run on demand (procedure or API).
 */
private[versioned] object Snapshots {
  def materialize(spark: SparkSession, engine: Engine, repo: String, locationOptions: Map[String, String]): Seq[MaterializedTable] =
    versioned.spark.session.Jobs.described(spark, s"materialize $repo")(materializeAll(spark, engine, repo, locationOptions))

  private def materializeAll(spark: SparkSession, engine: Engine, repo: String,
                             locationOptions: Map[String, String]): Seq[MaterializedTable] = {
    val targets = engine.refs.all(repo).map(_.image).distinct
    val done = targets.flatMap { hash =>
      val image = engine.resolve(repo, Revision.Spec(hash))
      engine.tables(repo, hash).flatMap { t =>
        val snap = TableSnapshot.load(engine, repo, t.name, image)
        val frags = snap.version.effectiveFragments
        val todo = frags.indices.filter(i => versioned.core.format.CompactionPolicy.diffCount(frags(i), snap.objects) > 0).toSet
        if (todo.isEmpty) None
        else {
          val written = Compactor.compact(spark, engine, snap, todo, locationOptions)
          Some(MaterializedTable(hash, t.name, todo.size, written.size))
        }
      }
    }
    engine.maintenance.evict(repo)
    done
  }
}
