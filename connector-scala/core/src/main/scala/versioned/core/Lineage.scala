package versioned.core

/** An image with its commit order in the repository (`vc_images.seq`). */
final case class SeqImage(image: Image, seq: Long)

/**
 * The first-parent history of a repository as the change feed needs it: images with their `seq`, the
 * image of a `seq`, and the commits between two images along first parents.
 */
final class Lineage(engine: Engine) {
  def withSeq(repo: String, hash: String): SeqImage = engine.metastore.read { c =>
    MetaDao.getSeqImage(c, repo, hash).getOrElse(throw new ImageNotFoundException(s"Image $hash not found in '$repo'."))
  }

  /** The image committed with sequence number `seq` in `repo`, if any. */
  def bySeq(repo: String, seq: Long): Option[SeqImage] = engine.metastore.read(MetaDao.seqImageBySeq(_, repo, seq))

  private def firstParent(c: java.sql.Connection, repo: String, i: SeqImage): Option[SeqImage] =
    i.image.parents.headOption.flatMap(MetaDao.getSeqImage(c, repo, _))

  /**
   * The images on the first-parent path from `end` back to `start`, oldest first, both included; None when
   * `start` is not a first-parent ancestor of `end` (or `end` itself). Reads one row per step and stops as
   * soon as it passes below `start`'s `seq` (a first parent always has a smaller `seq`).
   */
  def firstParentPath(repo: String, start: SeqImage, end: SeqImage): Option[Vector[SeqImage]] = engine.metastore.read { c =>
    val out = Vector.newBuilder[SeqImage]
    var cur: Option[SeqImage] = Some(end)
    var found = false
    while (!found && cur.exists(_.seq >= start.seq)) {
      val i = cur.get
      out += i
      if (i.image.hash == start.image.hash) found = true
      else cur = firstParent(c, repo, i)
    }
    if (found) Some(out.result().reverse) else None
  }

  /**
   * The first-parent path from `end` back while `keep` holds (stopping at the first image it rejects or at
   * the root), oldest first.
   */
  def firstParentWhile(repo: String, end: SeqImage)(keep: SeqImage => Boolean): Vector[SeqImage] = engine.metastore.read { c =>
    val out = Vector.newBuilder[SeqImage]
    var cur: Option[SeqImage] = Some(end).filter(keep)
    while (cur.isDefined) {
      out += cur.get
      cur = firstParent(c, repo, cur.get).filter(keep)
    }
    out.result().reverse
  }
}
