package versioned.core

/** An image with its commit order in the repository (`vc_images.seq`). */
final case class SeqImage(image: Image, seq: Long)

/**
 * The first-parent history of a repository as the change feed needs it: images with their `seq`, the
 * image of a `seq`, and the commits between two images along first parents.
 */
final class Lineage(engine: Engine) {
  private val cols = "hash, parents, created_ms, author, message, seq"

  private def row(repo: String)(rs: java.sql.ResultSet): SeqImage =
    SeqImage(Image(repo, rs.getString("hash"), Json.readStrings(rs.getString("parents")), rs.getLong("created_ms"),
      rs.getString("author"), rs.getString("message")), rs.getLong("seq"))

  def withSeq(repo: String, hash: String): SeqImage = engine.metastore.read { c =>
    Sql.query(c, s"SELECT $cols FROM vc_images WHERE repo = ? AND hash = ?", repo, hash)(row(repo)).headOption
      .getOrElse(throw new ImageNotFoundException(s"Image $hash not found in '$repo'."))
  }

  /** The image committed with sequence number `seq` in `repo`, if any. */
  def bySeq(repo: String, seq: Long): Option[SeqImage] = engine.metastore.read { c =>
    Sql.query(c, s"SELECT $cols FROM vc_images WHERE repo = ? AND seq = ?", repo, seq)(row(repo)).headOption
  }

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
      else cur = i.image.parents.headOption.flatMap(p =>
        Sql.query(c, s"SELECT $cols FROM vc_images WHERE repo = ? AND hash = ?", repo, p)(row(repo)).headOption)
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
      cur = cur.get.image.parents.headOption.flatMap(p =>
        Sql.query(c, s"SELECT $cols FROM vc_images WHERE repo = ? AND hash = ?", repo, p)(row(repo)).headOption).filter(keep)
    }
    out.result().reverse
  }
}
