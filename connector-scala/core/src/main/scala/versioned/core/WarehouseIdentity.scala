package versioned.core

/**
 * A metastore that knows its warehouse (docs/FORMAT.md, "Warehouse identity"): the object store holds
 * `_versioned/warehouse-id` and the metastore the same id (vc_meta `warehouse_id`). A warehouse with data
 * opened with an empty, missing or foreign metastore is refused, so nothing (garbage collection above
 * all) ever acts on a metastore that does not describe the objects it sees.
 */
object WarehouseIdentity {
  private val Key = "warehouse_id"

  /** An embedded SQLite metastore file that is gone while its warehouse holds data is an error, not a new database. */
  def requireMetastoreFile(config: WarehouseConfig, store: WarehouseStore): Unit =
    Metastore.sqliteFile(config.metastoreUrl).filterNot(_.exists()).foreach { f =>
      store.readMarker().foreach { id =>
        throw Errors.warehouseMismatch(s"The metastore file $f does not exist, but warehouse ${config.warehouse} " +
          s"(id $id) holds data: the metastore was deleted or moved. Restore it (or set spark.versioned.metastore.url " +
          "to where it is now). Nothing was changed.")
      }
    }

  /** Checks (or, for a new warehouse, records) the identity; returns the warehouse id. */
  def check(config: WarehouseConfig, store: WarehouseStore, ms: Metastore): String = {
    val where = s"warehouse ${config.warehouse} with metastore ${Metastore.redact(config.metastoreUrl)}"
    (ms.read(MetaDao.metaValue(_, Key)), store.readMarker()) match {
      case (Some(a), Some(b)) if a == b => a
      case (Some(a), Some(b)) => throw Errors.warehouseMismatch(s"The metastore belongs to warehouse $a, but the " +
        s"object store is warehouse $b ($where). Point spark.versioned.warehouse and spark.versioned.metastore.url at " +
        "the same warehouse. Nothing was changed.")
      case (None, Some(b)) => throw Errors.warehouseMismatch(s"The object store is warehouse $b and holds data, but the " +
        s"metastore does not know it: it is empty, new or another database ($where). Restore the warehouse's " +
        "metastore or point spark.versioned.metastore.url at it. Nothing was changed.")
      case (Some(a), None) =>
        if (store.hasObjects) throw Errors.warehouseMismatch(s"The metastore belongs to warehouse $a, but the object " +
          s"store holds objects and no identity ($where). Point spark.versioned.warehouse at warehouse $a's object store.")
        if (ms.read(MetaDao.hasObjectRows)) throw Errors.warehouseMismatch(s"The metastore records objects of warehouse " +
          s"$a, but the object store has none ($where): it is the wrong location, or its objects were removed. Point " +
          "spark.versioned.warehouse at the warehouse's object store, or restore it. Nothing was changed.")
        record(store, ms, a)
      case (None, None) =>
        if (!ms.read(MetaDao.hasAnyData) && store.hasObjects) throw Errors.warehouseMismatch(s"The object store holds " +
          s"objects, but the metastore is empty ($where): the metastore was deleted or the URL names another database. " +
          "Restore it or point spark.versioned.metastore.url at it. Nothing was changed.")
        // a new warehouse, or one written before format 2: record a new identity on both sides
        record(store, ms, store.createMarker(java.util.UUID.randomUUID().toString))
    }
  }

  private def record(store: WarehouseStore, ms: Metastore, id: String): String = {
    val marked = store.createMarker(id)
    ms.tx { c =>
      MetaDao.metaValue(c, Key) match {
        case Some(other) if other != marked => throw Errors.warehouseMismatch(
          s"Another process recorded warehouse $other in the metastore while this one recorded $marked. Check the configuration.")
        case Some(_) => ()
        case None => MetaDao.insertMeta(c, Key, marked)
      }
    }
    marked
  }
}
