package versioned.core

/** Log and show: read-only views of the image graph. */
final class History(engine: Engine) {
  /**
   * Images reachable from `from`, newest first (by creation time, then hash), at most `limit`.
   * Loads the repository's image graph in one query, so a log of 100,000 commits stays fast.
   */
  def log(repo: String, from: Revision, limit: Int = Int.MaxValue): Seq[LogEntry] = engine.metastore.read { c =>
    val start = engine.resolver.resolve(c, repo, from)
    val all = MetaDao.allImagesWithChanges(c, repo)
    val images = all.map { case (i, _) => i.hash -> i }.toMap
    val changed = all.map { case (i, t) => i.hash -> t }.toMap
    val seen = scala.collection.mutable.HashSet[String](start.hash)
    val queue = scala.collection.mutable.PriorityQueue[Image](start)(Ordering.by((i: Image) => (i.createdMs, i.hash)))
    val out = Vector.newBuilder[LogEntry]
    var n = 0
    while (queue.nonEmpty && n < limit) {
      val img = queue.dequeue()
      out += LogEntry(img, changed.getOrElse(img.hash, Seq.empty))
      n += 1
      img.parents.foreach(p => if (seen.add(p)) images.get(p).foreach(queue.enqueue(_)))
    }
    out.result()
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

final case class ImageDetails(image: Image, tables: Seq[ImageTable], objects: Map[String, ObjectMeta],
                              droppedTables: Seq[String]) {
  def changedTables: Seq[String] = (tables.filter(_.changed).map(_.table.name) ++ droppedTables).sorted
}
