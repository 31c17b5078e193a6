package versioned.spark

/** Every option key and Spark conf key the connector understands, in one place. */
object VersionedOptions {
  // ---- read options
  val Ref = "ref"
  val Image = "image"
  val AsOf = "asOf"
  // ---- write options
  val Branch = "branch"
  val Message = "message"
  val Author = "author"
  val PrimaryKey = "primaryKey"
  val Upsert = "upsert"
  /** Boolean column of the incoming data marking rows to delete by key (implies upsert; not stored). */
  val DeleteColumn = "deleteColumn"
  // ---- location (per call; default from the Spark conf keys below)
  val Warehouse = "warehouse"
  val MetastoreUrl = "metastoreUrl"
  // ---- internal: exposes the hidden duplicate ordinal of key-less tables to the commit planner
  val IncludeHidden = "versioned.internal.includeHidden"
  // ---- internal: restricts a scan to some fragment indexes (compaction)
  val OnlyFragments = "versioned.internal.fragments"
  // ---- internal: marks tables loaded through the SQL catalog (strict schema on INSERT)
  val CatalogTable = "versioned.internal.catalog"

  // ---- Spark conf keys
  val ConfWarehouse = "spark.versioned.warehouse"
  val ConfMetastoreUrl = "spark.versioned.metastore.url"
  val ConfDefaultBranch = "spark.versioned.defaultBranch"
  val ConfFragmentRows = "spark.versioned.fragment.targetRows"
  val ConfMaxChain = "spark.versioned.compaction.maxChainLength"
  val ConfMaxDiffRatio = "spark.versioned.compaction.maxDiffRatio"
  /** Commit DIFFs after a fragment's last SNAP or consolidated DIFF that are merged into one DIFF. */
  val ConfConsolidateAfter = "spark.versioned.compaction.consolidateDiffs"
  val ConfAuthor = "spark.versioned.author"
  /** Most DIFF rows per fragment a scan merges column-wise (held in executor memory); above, rows are merged one by one. */
  val ConfMaxOverlayRows = "spark.versioned.read.maxOverlayRows"
  /** Bytes of conflated DIFF rows each executor keeps for repeated scans (0 disables). */
  val ConfDiffCacheBytes = "spark.versioned.read.diffCacheBytes"
  /** Upsert appends of at most this many rows are committed by the driver without further Spark jobs (0: never). */
  val ConfLocalCommitMaxRows = "spark.versioned.write.localCommitMaxRows"
  /** Byte cap (UnsafeRow size) of the rows such a local commit brings to the driver. */
  val ConfLocalCommitMaxBytes = "spark.versioned.write.localCommitMaxBytes"
  val ConfDiffCompression = "spark.versioned.write.diffCompression"

  val DefaultFragmentRows = 1000000L
  val DefaultMaxChain = 50
  val DefaultMaxDiffRatio = 0.1
  val DefaultConsolidateAfter = 10
  val DefaultMaxOverlayRows = 2000000L
  val DefaultDiffCacheBytes: Long = 256L << 20
  val DefaultLocalCommitMaxRows = 100000L
  val DefaultLocalCommitMaxBytes: Long = 64L << 20
  val DefaultDiffCompression = "zstd"
  val DefaultWarehouse = "versioned-warehouse"

  /** Name of the hidden duplicate-ordinal column of tables without a primary key. */
  val DupColumn = "_vdup"
  /** Column names the engine uses internally (object columns, metadata columns, planner temporaries). */
  val ReservedColumns: Set[String] = Set("_vdup", "_vchange", "_vfrag", "_vrowid", "_vexists", "_vrn", "_vbase",
    "_vnc", "_voc", "_vmax", "_vi", "_vo", "_vn", "_vnull", "_vcount")

  /** Name of the change-kind column inside DIFF objects. */
  val ChangeColumn = "_vchange"
  /** Metadata column of key-less tables: struct of all user columns and `_vdup` (their row id). */
  val RowIdColumn = "_vrowid"
}
