package versioned.spark.write

import versioned.core.{Engine, TableVersion, WarehouseConfig}

/**
 * Per table, the image whose compacted form a compaction in this driver recorded last: where a later compaction
 * and a commit planned on a parent without a compacted form carry the compacted chains from
 * ([[versioned.core.format.CarryForward]]). Only a hint: the version is read again from the metastore when used
 * (its tables may have been expired since: then it is not used), and the kernel's rule checks, fragment by fragment, that it applies.
 * Bounded: the tables compacted longest ago are forgotten first.
 */
private[versioned] object CompactedHints {
  private final case class Key(warehouse: WarehouseConfig, repo: String, table: String)
  private val MaxTables = 1024
  private val latest = new java.util.LinkedHashMap[Key, String](16, 0.75f, true) {
    override def removeEldestEntry(e: java.util.Map.Entry[Key, String]): Boolean = size() > MaxTables
  }

  /** Image `image`'s version of `repo`.`table` now has a compacted form recorded by this driver. */
  def noted(engine: Engine, repo: String, table: String, image: String): Unit =
    latest.synchronized { latest.put(Key(engine.config, repo, table), image); () }

  /** The image of `repo`.`table` compacted last in this driver, if any. */
  def image(engine: Engine, repo: String, table: String): Option[String] =
    latest.synchronized(Option(latest.get(Key(engine.config, repo, table))))

  /** That image's version of the table as the metastore holds it now, when it still has a compacted form. */
  def version(engine: Engine, repo: String, table: String): Option[TableVersion] =
    image(engine, repo, table).flatMap(h => engine.tableIfHeld(repo, h, table)).filter(_.compacted.isDefined)
}
