package versioned.core

import java.sql.Connection

/**
 * Images, their tables and the metadata of their objects, as read from one warehouse's metastore to be
 * recorded in another's (fetch, clone, push). Objects carry the location the receiver reads them at,
 * if they are not to be stored in its own `objects/`.
 */
private[core] final case class HistoryBatch(images: Vector[ImageRow], tables: Vector[ImageTable], objects: Vector[ObjectMeta]) {
  def isEmpty: Boolean = images.isEmpty
  /** Every object the tables of the batch need (logical and compacted representations). */
  def referencedObjects: Vector[String] =
    tables.flatMap(t => t.table.fragments.flatMap(_.objects) ++ t.table.compacted.toSeq.flatten.flatMap(_.objects)).distinct

  /**
   * The batch without compacted representations (and the objects only they use). A warehouse that reads
   * another's objects in place keeps only what that warehouse never collects: the objects of logical
   * fragments (history), not those of a compacted form, which it evicts once no ref points at its image.
   */
  def withoutCompacted: HistoryBatch = {
    val logical = copy(tables = tables.map(t => t.copy(table = t.table.copy(compacted = None))))
    val needed = logical.referencedObjects.toSet
    logical.copy(objects = objects.filter(o => needed(o.id)))
  }
}

/**
 * Copying history between two metastores in batches (Spark-free): reads take a few queries whatever the
 * number of images (`IN` lists of up to 500 keys), writes are batched statements in the receiver's one
 * transaction. Images keep their hash, parents, author, message and time (so the same image has the same
 * hash in every warehouse); each gets the receiver's next commit order (`seq`), parents first.
 */
private[core] object HistoryCopy {
  /**
   * What `to` lacks of `rows` (images of `fromRepo` in `from`): the images `toRepo` does not have, their
   * tables, and the metadata of the objects `to` has no row for (read from `from`, with its locations).
   */
  def gather(from: Engine, fromRepo: String, rows: Vector[ImageRow], to: Engine, toRepo: String): HistoryBatch = {
    val have = to.metastore.read(MetaDao.existingImages(_, toRepo, rows.map(_.image.hash)))
    val missing = rows.filterNot(r => have(r.image.hash)).sortBy(_.seq)
    if (missing.isEmpty) HistoryBatch(Vector.empty, Vector.empty, Vector.empty)
    else {
      val tables = from.metastore.read(MetaDao.tablesOfImages(_, fromRepo, missing.map(_.image.hash)))
      val batch = HistoryBatch(missing, tables, Vector.empty)
      val ids = batch.referencedObjects
      val known = to.metastore.read(MetaDao.existingObjectIds(_, ids))
      val wanted = ids.filterNot(known)
      val metas = from.metastore.read(MetaDao.getObjects(_, wanted))
      wanted.find(id => !metas.contains(id)).foreach(id => throw new ObjectMissingException(id,
        s"the metastore of ${from.config.warehouse} has no row for it, though its history needs it"))
      batch.copy(objects = wanted.map(metas))
    }
  }

  /**
   * Records `batch` in `repo` of the receiver, in the caller's transaction `c`: under the generation lock
   * every commit takes, object rows (and locations) first, then images in commit order and their tables.
   * Images the receiver got meanwhile are skipped. An object the batch builds on that a garbage
   * collection removed meanwhile raises REF_CONFLICT (nothing recorded; retry).
   */
  def write(c: Connection, repo: String, batch: HistoryBatch, now: Long): Unit = if (!batch.isEmpty) {
    MetaDao.lockGeneration(c, bump = true)
    MetaDao.insertObjects(c, batch.objects, now, repo, MetaDao.existingObjectIds(c, batch.objects.map(_.id)))
    val referenced = batch.referencedObjects
    val gone = referenced.toSet -- MetaDao.existingObjectIds(c, referenced)
    if (gone.nonEmpty) throw new RefConflictException(s"${gone.size} object(s) this history needs (e.g. ${gone.head.take(12)}) " +
      "were removed by garbage collection while it was copied. Nothing was recorded; retry.")
    val present = MetaDao.existingImages(c, repo, batch.images.map(_.image.hash))
    val first = MetaDao.nextSeq(c, repo)
    // in commit order, each with the receiver's next seq (parents first), in one batch
    MetaDao.insertImages(c, batch.images.sortBy(_.seq).filterNot(r => present(r.image.hash)).zipWithIndex.map {
      case (r, i) => r.copy(image = r.image.copy(repo = repo), seq = first + i)
    })
    MetaDao.insertTableRows(c, repo, batch.tables.filterNot(t => present(t.image)))
  }

  /** The image rows of `repo` reachable from `heads` through parents (the repository's rows read in one query). */
  def reachable(c: Connection, repo: String, heads: Seq[String]): Vector[ImageRow] = {
    val rows = MetaDao.imageRowsAfter(c, repo, Long.MinValue)
    val seen = closure(rows.map(r => r.image.hash -> r.image.parents).toMap, heads)
    rows.filter(r => seen(r.image.hash))
  }

  /** `heads` and every image reachable from them in `parents` (a commit graph held in memory). */
  def closure(parents: Map[String, Seq[String]], heads: Seq[String]): Set[String] = {
    val seen = scala.collection.mutable.HashSet.empty[String]
    val todo = scala.collection.mutable.Stack[String](heads: _*)
    while (todo.nonEmpty) {
      val h = todo.pop()
      if (seen.add(h)) parents.getOrElse(h, Nil).foreach(todo.push)
    }
    seen.toSet
  }
}
