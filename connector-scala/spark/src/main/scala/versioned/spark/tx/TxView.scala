package versioned.spark.tx

import versioned.core._
import versioned.spark.session.TableSnapshot

/**
 * A table a transaction changed: its new version (not committed) and the objects the transaction wrote
 * for it so far, by id. Those objects are stored (under the transaction's lease) but not registered in
 * the metastore until the commit.
 */
private[tx] final case class StagedTable(version: TableVersion, written: Map[String, ObjectMeta]) {
  private def referenced: Seq[String] = version.objectIds.distinct

  /** The update the commit records: the version and the new objects it references (superseded ones are left to gc). */
  def update: TableUpdate.Put = {
    val ids = referenced.toSet
    TableUpdate.Put(version, written.values.filter(o => ids(o.id)).toSeq.sortBy(_.id))
  }

  /** Metadata of every object the version references: the new ones as written, the others from the metastore. */
  def objects(engine: Engine): Map[String, ObjectMeta] = {
    val (mine, recorded) = referenced.partition(written.contains)
    mine.map(id => id -> written(id)).toMap ++ engine.objects(recorded)
  }
}

/**
 * What a transaction sees: the tables of the image it started from (`start`; None for a repository or
 * branch its commit creates), with the tables it changed replaced by their uncommitted versions. An
 * immutable value: each operation yields the next view.
 */
private[tx] final case class TxView(engine: Engine, repo: String, start: Option[Image],
                                    staged: Map[String, StagedTable] = Map.empty) {
  /** The version `table` had at the start, if it existed. */
  def startVersion(table: String): Option[TableVersion] = start.flatMap(h => engine.tableOption(repo, h.hash, table))

  /** The table as the transaction sees it now, with everything a scan needs; None if it does not exist. */
  def snapshot(table: String): Option[TableSnapshot] = staged.get(table) match {
    case Some(s) => Some(TableSnapshot(engine.config, repo, table, TableSnapshot.uncommitted(repo, start), s.version, s.objects(engine)))
    case None => start.filter(h => engine.tableOption(repo, h.hash, table).isDefined)
      .map(h => TableSnapshot.load(engine, repo, table, h))
  }

  /** The view after `table` became `put` (its objects are added to those written for the table before). */
  def withTable(table: String, put: TableUpdate.Put): TxView = {
    val before = staged.get(table).map(_.written).getOrElse(Map.empty)
    copy(staged = staged + (table -> StagedTable(put.table, before ++ put.newObjects.map(o => o.id -> o))))
  }

  /** Every table an operation wrote (changed or not), as the commit records it. */
  def updates: Map[String, TableUpdate] = staged.map { case (t, s) => t -> (s.update: TableUpdate) }

  /** Tables whose content differs from the start (by content hash), sorted. */
  def changed: Seq[String] = staged.toSeq.collect {
    case (t, s) if !startVersion(t).exists(_.hash == Hashing.tableHash(s.version.copy(name = t))) => t
  }.sorted
}
