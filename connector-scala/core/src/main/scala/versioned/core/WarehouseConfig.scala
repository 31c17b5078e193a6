package versioned.core

/** Where a warehouse lives: a Hadoop-compatible root URI for objects and a JDBC URL for the metastore. */
final case class WarehouseConfig(warehouse: String, metastoreUrl: String, defaultBranch: String = "main") {
  /**
   * Whether there may be a warehouse here to read: false only for an embedded SQLite metastore whose file does not
   * exist (opening the engine would create it). Reads ask first, so that a read never creates a warehouse.
   */
  def mayExist: Boolean = Metastore.sqliteFile(metastoreUrl).forall(_.exists())

  def objectUri(id: String): String = s"${warehouse.stripSuffix("/")}/${ObjectMeta.relativePath(id)}"
  def stagingUri(name: String): String = s"${warehouse.stripSuffix("/")}/_staging/$name"
}

object WarehouseConfig {
  /** Embedded default: SQLite file inside a local warehouse directory. */
  def embedded(warehouse: String): WarehouseConfig = {
    val local = warehouse.stripPrefix("file:").replaceAll("^//", "")
    if (warehouse.contains("://") && !warehouse.startsWith("file:"))
      throw Errors.invalidOption(s"Warehouse '$warehouse' is not local, so the embedded SQLite metastore cannot live " +
        "in it. Set spark.versioned.metastore.url (e.g. jdbc:postgresql://host/db or jdbc:sqlite:/path/metastore.db).")
    WarehouseConfig(warehouse, s"jdbc:sqlite:${new java.io.File(local, "metastore.db").getAbsolutePath}")
  }
}
