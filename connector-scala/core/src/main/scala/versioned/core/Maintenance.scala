package versioned.core

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/** What ref-driven snapshot maintenance (MMS5) and garbage collection would do or did. */
final case class EvictionReport(evicted: Seq[(String, String)], deletedObjects: Seq[String])

/**
 * Ref-driven snapshots and garbage collection (MMS5 + Splitgraph cleanup).
 *
 * Images that some ref (branch, tag, lock) points at keep a compacted representation; when the last
 * ref leaves an image its compacted representation becomes evictable. Objects referenced by any
 * table version's logical fragments (history) are never deleted.
 */
final class Maintenance(engine: Engine) {
  private def ms = engine.metastore

  /** Image hashes that some ref of `repo` points at. */
  def refTargets(repo: String): Set[String] = engine.refs.all(repo).map(_.image).toSet

  /** Drops the compacted representation of images no ref points at; returns (image, table) pairs. */
  def evict(repo: String): Seq[(String, String)] = {
    val keep = refTargets(repo)
    ms.tx { c =>
      val victims = Sql.query(c, "SELECT image_hash, name FROM vc_tables WHERE repo = ? AND compacted IS NOT NULL", repo)(r =>
        (r.getString(1), r.getString(2))).filterNot { case (img, _) => keep(img) }
      victims.foreach { case (img, t) => MetaDao.setCompacted(c, repo, img, t, None) }
      victims
    }
  }

  /** Ids of objects no table version (logical or compacted) of any repository refers to. */
  def unreferencedObjects(): Seq[String] = ms.read { c =>
    val referenced = MetaDao.referencedFragmentJson(c).iterator.flatMap { case (f, comp) =>
      MetaDao.parseFragments(f).flatMap(_.objects) ++ comp.toSeq.flatMap(MetaDao.parseFragments).flatMap(_.objects)
    }.toSet
    MetaDao.allObjectIds(c).filterNot(referenced)
  }

  /**
   * Deletes unreferenced objects: their metastore rows and files, plus files under `objects/` and
   * `_staging/` that no metastore row names and that are older than `olderThanMs` (in-flight writes
   * are younger; they are never touched).
   */
  def collectGarbage(hadoopConf: Configuration, olderThanMs: Long): Seq[String] = {
    val dead = unreferencedObjects()
    ms.tx(MetaDao.deleteObjects(_, dead))
    val known = ms.read(MetaDao.allObjectIds).toSet
    val root = new Path(engine.config.warehouse)
    val fs = root.getFileSystem(hadoopConf)
    val cutoff = System.currentTimeMillis() - olderThanMs
    val deleted = Seq.newBuilder[String]
    dead.foreach { id =>
      val p = new Path(engine.config.objectUri(id))
      if (fs.exists(p) && fs.delete(p, false)) deleted += id
    }
    Seq(new Path(root, "objects"), new Path(root, "_staging")).filter(fs.exists).foreach { dir =>
      val it = fs.listFiles(dir, true)
      while (it.hasNext) {
        val st = it.next()
        val name = st.getPath.getName.stripSuffix(".parquet")
        if (!known(name) && st.getModificationTime < cutoff && fs.delete(st.getPath, false)) deleted += name
      }
    }
    deleted.result().distinct
  }
}
