package versioned.spark.session

import versioned.spark.format.TableLayout

import versioned.core._

/**
 * A table resolved at one image: everything a scan needs, as an immutable value. `onlyFragments`
 * restricts internal rewrite scans (compaction, diff) to some fragments; such scans return each
 * fragment's rows in key order, which the columnar merge (DIFF rows after the SNAP's) does not.
 * `lookupKeys` (canonical values of the first key column) restricts internal reads that know the keys
 * they need to the fragments, objects and Parquet pages holding them (`read.KeyLookup`).
 */
private[versioned] final case class TableSnapshot(
    config: WarehouseConfig,
    repo: String,
    table: String,
    image: Image,
    version: TableVersion,
    objects: Map[String, ObjectMeta],
    onlyFragments: Option[Set[Int]] = None,
    lookupKeys: Option[Seq[Any]] = None) {
  val layout: TableLayout = TableLayout.of(version)
  def restrictedTo(fragments: Set[Int]): TableSnapshot = copy(onlyFragments = Some(fragments))
  def lookingUp(keys: Seq[Any]): TableSnapshot = copy(lookupKeys = Some(keys))
}

private[versioned] object TableSnapshot {
  /** The image a version planned on `parent` but not committed names (scans say "uncommitted"): no image records it. */
  def uncommitted(repo: String, parent: Option[Image]): Image =
    Image(repo, "uncommitted", parent.map(_.hash).toSeq, 0L, "", "")

  def load(engine: Engine, repo: String, table: String, image: Image): TableSnapshot =
    of(engine, repo, image, engine.table(repo, image, table))

  /** The snapshot of a table version already fetched: one more metastore query, for its objects' records. */
  def of(engine: Engine, repo: String, image: Image, v: TableVersion): TableSnapshot =
    TableSnapshot(engine.config, repo, v.name, image, v, engine.objects(v.objectIds))

  /**
   * The snapshot of a table version already fetched, its objects' records taken from `metas` (read for several
   * versions in one query).
   */
  def within(config: WarehouseConfig, repo: String, image: Image, v: TableVersion, metas: Map[String, ObjectMeta]): TableSnapshot =
    TableSnapshot(config, repo, v.name, image, v, v.objectIds.flatMap(id => metas.get(id).map(id -> _)).toMap)
}
