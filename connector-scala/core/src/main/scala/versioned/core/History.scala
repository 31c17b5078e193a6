package versioned.core

/** Log and show: read-only views of the image graph. */
final class History(engine: Engine) {
  /**
   * Images reachable from `from`, newest first (by creation time, then hash), each once, at most `limit`.
   * Images are read newest commit first in growing windows ([[LogWindows]]): a short log reads a few
   * recent rows, a whole log of 100,000 commits reads each row once.
   */
  def log(repo: String, from: Revision, limit: Int = Int.MaxValue): Seq[LogEntry] = engine.metastore.read { c =>
    walk(c, repo, engine.resolver.resolve(c, repo, from).hash, limit)
  }

  /** [[log]] from the image `hash` (a full hash, never a ref name): a log pinned to what a ref pointed at. */
  def logOfImage(repo: String, hash: String, limit: Int): Seq[LogEntry] = engine.metastore.read(walk(_, repo, hash, limit))

  /** How many entries [[logOfImage]] lists (the reachable images, at most `limit`), reading only hashes and parents. */
  def logSizeOfImage(repo: String, hash: String, limit: Int): Int = engine.metastore.read { c =>
    if (limit <= 0) 0
    else {
      val images = windows(c, repo, limit, graphOnly = true)
      val todo = new java.util.ArrayDeque[LogEntry]()
      todo.push(start(images, repo, hash))
      var n = 0
      while (!todo.isEmpty && n < limit) {
        n += 1
        val parents = todo.pop().image.parents.iterator
        while (parents.hasNext) { val p = images.take(parents.next()); if (p != null) todo.push(p) }
      }
      n
    }
  }

  private def windows(c: java.sql.Connection, repo: String, limit: Int, graphOnly: Boolean): LogWindows =
    new LogWindows(c, engine.metastore.isSqlite, graphOnly, repo, if (limit == Int.MaxValue) Long.MaxValue else 2L * limit + 62)

  private def start(images: LogWindows, repo: String, hash: String): LogEntry =
    Option(images.take(hash)).getOrElse(throw new ImageNotFoundException(s"Image $hash not found in '$repo'."))

  private def walk(c: java.sql.Connection, repo: String, hash: String, limit: Int): Vector[LogEntry] =
    if (limit <= 0) Vector.empty
    else {
      val images = windows(c, repo, limit, graphOnly = false)
      val queue = new java.util.PriorityQueue[LogEntry](History.NewestFirst)
      queue.add(start(images, repo, hash))
      val out = Vector.newBuilder[LogEntry]
      var n = 0
      while (!queue.isEmpty && n < limit) {
        val e = queue.poll()
        out += e
        n += 1
        if (n < limit) {
          val parents = e.image.parents.iterator
          while (parents.hasNext) { val p = images.take(parents.next()); if (p != null) queue.add(p) }
        }
      }
      out.result()
    }

  /** Hashes of the images reachable from `from` (image hashes) through parents, `from` included. */
  def reachable(repo: String, from: Seq[String]): Set[String] = engine.metastore.read { c =>
    HistoryCopy.reachable(c, repo, from).map(_.image.hash).toSet ++ from
  }

  /**
   * The objects the table versions of `images` need (logical and compacted representations), each with
   * the (image, table) pairs that need it.
   */
  def objectsNeeded(repo: String, images: Set[String]): Map[String, Seq[(String, String)]] = engine.metastore.read { c =>
    val out = scala.collection.mutable.HashMap.empty[String, Vector[(String, String)]]
    Sql.foreach(c, "SELECT image_hash, name, fragments, compacted FROM vc_tables WHERE repo = ?", repo) { rs =>
      val image = rs.getString(1)
      if (images(image)) {
        val table = rs.getString(2)
        MetaDao.objectIdsOf(rs.getString(3), Option(rs.getString(4))).distinct.foreach(id => out(id) = out.getOrElse(id, Vector.empty) :+ (image -> table))
      }
    }
    out.toMap
  }

  /** One image with its tables and the objects behind them. */
  def show(repo: String, at: Revision): ImageDetails = engine.metastore.read { c =>
    val img = engine.resolver.resolve(c, repo, at)
    val tables = MetaDao.tablesOf(c, repo, img.hash)
    val parentTables = img.parents.headOption.map(MetaDao.tablesOf(c, repo, _)).getOrElse(Vector.empty)
    val ids = tables.flatMap(t => t.table.fragments.flatMap(_.objects) ++ t.table.compacted.toSeq.flatten.flatMap(_.objects))
    val objs = MetaDao.getObjects(c, ids)
    val dropped = parentTables.map(_.table.name).filterNot(tables.map(_.table.name).toSet)
    ImageDetails(img, tables, objs, dropped)
  }
}

private object History {
  /** Newest first: creation time, then hash, both descending. */
  val NewestFirst: java.util.Comparator[LogEntry] = (a: LogEntry, b: LogEntry) => {
    val t = java.lang.Long.compare(b.image.createdMs, a.image.createdMs)
    if (t != 0) t else b.image.hash.compareTo(a.image.hash)
  }
}

final case class ImageDetails(image: Image, tables: Seq[ImageTable], objects: Map[String, ObjectMeta],
                              droppedTables: Seq[String]) {
  def changedTables: Seq[String] = (tables.filter(_.changed).map(_.table.name) ++ droppedTables).sorted
}
