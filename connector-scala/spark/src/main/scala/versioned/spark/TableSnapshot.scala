package versioned.spark

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
  def load(engine: Engine, repo: String, table: String, image: Image): TableSnapshot = {
    val v = engine.table(repo, image, table)
    val ids = (v.fragments ++ v.compacted.toSeq.flatten).flatMap(_.objects)
    TableSnapshot(engine.config, repo, table, image, v, engine.objects(ids))
  }
}

/** `repo.table`, validated. */
private[versioned] final case class TableIdent(repo: String, table: String) {
  override def toString: String = s"$repo.$table"
}

private[versioned] object TableIdent {
  def parse(s: String): TableIdent = Option(s).map(_.split('.')) match {
    case Some(Array(r, t)) => TableIdent(Names.validate(Names.Repository, r), Names.validate(Names.Table, t))
    case _ => throw new InvalidNameException(
      s"Table path '$s' must have the form '<repository>.<table>', e.g. load(\"sales.orders\").")
  }
}
