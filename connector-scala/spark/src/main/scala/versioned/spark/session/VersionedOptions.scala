package versioned.spark.session

import versioned.spark.format.Columns

import versioned.core.Errors
import versioned.core.format.Reserved

/**
 * Every option key and Spark conf key the connector understands, in one place, and the check that
 * refuses any other key ([[validate]]; settings are parsed and range-checked by [[Settings]]).
 */
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
  /**
   * SQL condition of an overwrite (mode "overwrite") that replaces only the rows matching it: they are deleted and
   * the data, every row of which must match it, is appended, in one commit (as `INSERT INTO ... REPLACE WHERE`).
   */
  val ReplaceWhere = "replaceWhere"
  /**
   * Whether an upsert's DIFFs record each key's row before the commit (before-images, docs/DIFF.md): a diff
   * across the commit then reads only its DIFFs; the commit looks the rows up. Default: [[ConfBeforeImages]].
   */
  val BeforeImages = "beforeImages"
  /** A write that changes nothing makes a commit anyway (default false: nothing to commit, the branch stays). */
  val AllowEmpty = "allowEmpty"
  /**
   * An id the caller gives its write; `CALL <catalog>.system.last_commit(write_id => <id>)` then returns the
   * commit this write made (a Spark Connect client, which cannot share the writer's thread, learns its own
   * commit this way, never another write's).
   */
  val WriteId = "writeId"
  /**
   * An idempotent write of one batch of a stream (`foreachBatch`): the query's id and the batch's id, given
   * together. A batch of a query that the branch already has for the table commits nothing and returns that
   * commit (docs/STREAMING.md); the commit's message records both.
   */
  val StreamQueryId = "streamQueryId"
  val StreamBatchId = "streamBatchId"
  /** Spark's own options of a streaming write (`writeStream`), which Spark reads itself; accepted and ignored. */
  val SparkStreamingOptions: Seq[String] =
    Seq("checkpointLocation", "queryName", "asyncProgressTrackingEnabled", "asyncProgressTrackingCheckpointIntervalMs")
  // ---- location (per call; default from the Spark conf keys below)
  val Warehouse = "warehouse"
  val MetastoreUrl = "metastoreUrl"
  /** Default branch of a repository the call creates (also a catalog option). */
  val DefaultBranch = "defaultBranch"
  // ---- internal: a read by the engine itself (read.PinnedRead): hidden columns, some fragments
  val Pinned = "versioned.internal.pinned"
  // ---- internal: marks tables loaded through the SQL catalog (strict schema on INSERT)
  val CatalogTable = "versioned.internal.catalog"

  // ---- Spark conf keys: declared in Setting (key, kind, default, doc)
  val ConfWarehouse: String = Setting.Warehouse.key
  val ConfMetastoreUrl: String = Setting.MetastoreUrl.key
  val ConfDefaultBranch: String = Setting.DefaultBranch.key
  val ConfFragmentRows: String = Setting.FragmentRows.key
  val ConfMaxChain: String = Setting.MaxChain.key
  val ConfMaxDiffRatio: String = Setting.MaxDiffRatio.key
  val ConfConsolidateAfter: String = Setting.ConsolidateAfter.key
  val ConfBackgroundCompaction: String = Setting.BackgroundCompaction.key
  val ConfCompactionYieldMs: String = Setting.CompactionYieldMs.key
  val ConfCompactionDutyCycle: String = Setting.CompactionDutyCycle.key
  val ConfAuthor: String = Setting.Author.key
  val ConfUser: String = Setting.User.key
  val ConfClient: String = Setting.Client.key
  val ConfMaxOverlayRows: String = Setting.MaxOverlayRows.key
  val ConfDiffCacheBytes: String = Setting.DiffCacheBytes.key
  val ConfLocalCommitMaxRows: String = Setting.LocalCommitMaxRows.key
  val ConfSharedDiffMaxRows: String = Setting.SharedDiffMaxRows.key
  val ConfTailFragments: String = Setting.TailFragments.key
  val ConfLocalCommitMaxBytes: String = Setting.LocalCommitMaxBytes.key
  val ConfDiffCompression: String = Setting.DiffCompression.key
  val ConfBeforeImages: String = Setting.BeforeImages.key
  val ConfJavaPermissions: String = Setting.JavaPermissions.key

  /**
   * Credentials of remote `<name>`'s metastore (`spark.versioned.remote.<name>.metastore.user` / `.password`),
   * given per session and never stored (docs/REMOTES.md).
   */
  def confRemoteUser(remote: String): String = s"spark.versioned.remote.$remote.metastore.user"
  def confRemotePassword(remote: String): String = s"spark.versioned.remote.$remote.metastore.password"
  private val ConfRemoteKey = """spark\.versioned\.remote\.[A-Za-z_][A-Za-z0-9_-]*\.metastore\.(user|password)""".r

  /** Prefix of the connector's Spark conf keys: any other key under it is refused as unknown. */
  val ConfPrefix = "spark.versioned."
  /** Every Spark conf key the connector reads (parsed by [[Settings]]). */
  val ConfKeys: Seq[String] = Setting.all.map(_.key)

  // ---- which options apply where
  /** Options that locate the warehouse; every call of the format may give them. */
  val LocationOptions: Seq[String] = Seq(Warehouse, MetastoreUrl, DefaultBranch)
  /** Options of `spark.read.format("versioned")` (`branch`: the branch whose head is read). */
  val ReadOptions: Seq[String] = Seq(Ref, Image, AsOf, Branch) ++ LocationOptions
  /** Options of `df.write.format("versioned")` and of writes to catalog tables. */
  val WriteOptions: Seq[String] = Seq(Branch, Message, Author, PrimaryKey, Upsert, DeleteColumn, ReplaceWhere, BeforeImages,
    AllowEmpty, WriteId,
    StreamQueryId, StreamBatchId) ++ LocationOptions ++ SparkStreamingOptions
  /** Options of the format before it knows whether it reads or writes. */
  val FormatOptions: Seq[String] = (ReadOptions ++ WriteOptions).distinct
  /** Options of the SQL catalog (`spark.sql.catalog.<name>.<option>`). */
  val CatalogOptions: Seq[String] = LocationOptions
  /** Keys of internal options (set by the connector itself; a pinned read's token is checked where it is used). */
  val InternalKeys: Seq[String] = Seq(Pinned, CatalogTable)

  /** Keys Spark itself adds to a data source's options: `path`/`paths` of load()/save(), `__`-prefixed markers. */
  private def addedBySpark(key: String): Boolean =
    key.equalsIgnoreCase("path") || key.equalsIgnoreCase("paths") || key.startsWith("__")

  private val readOnlyHint = " (writes commit to the head of the branch named by option 'branch')"

  /**
   * Refuses (INVALID_OPTION) every key of `options` that is not in `allowed` (case-insensitively), naming
   * the closest valid key. Keys Spark adds and internal keys are accepted. `context` completes "for ...",
   * e.g. "writes to the versioned format".
   */
  def validate(options: Map[String, String], allowed: Seq[String], context: String): Unit =
    options.keys.toSeq.sorted.foreach { key =>
      if (!addedBySpark(key) && !InternalKeys.exists(_.equalsIgnoreCase(key)) && !allowed.exists(_.equalsIgnoreCase(key))) {
        val valid = s"Valid options: ${allowed.sorted.mkString(", ")}."
        FormatOptions.find(_.equalsIgnoreCase(key)) match {
          case Some(known) =>
            val hint = if (ReadOptions.contains(known) && !WriteOptions.contains(known)) readOnlyHint else ""
            throw Errors.invalidOption(s"Option '$key' does not apply to $context$hint. $valid")
          case None if allowed.isEmpty => throw Errors.invalidOption(s"Unknown option '$key' for $context: it takes none.")
          case None => throw Errors.invalidOption(
            s"Unknown option '$key' for $context. Did you mean '${closest(key, allowed)}'? $valid")
        }
      }
    }

  /** Refuses every `spark.versioned.*` key of `conf` that the connector does not read, naming the closest known key. */
  def validateConf(conf: Iterable[String]): Unit =
    conf.filter(_.startsWith(ConfPrefix)).toSeq.sorted.foreach { key =>
      if (!ConfKeys.contains(key) && !ConfRemoteKey.matches(key)) throw Errors.invalidOption(s"Unknown setting '$key'. " +
        s"Did you mean '${closest(key, ConfKeys)}'? Known settings: ${ConfKeys.sorted.mkString(", ")}, and " +
        "spark.versioned.remote.<remote>.metastore.user / .password.")
    }

  /** The candidate nearest to `key` by edit distance (case-insensitive); the first of equals. */
  def closest(key: String, candidates: Seq[String]): String =
    candidates.minBy(c => editDistance(key.toLowerCase, c.toLowerCase))

  /** Levenshtein distance: insertions, deletions and substitutions. */
  def editDistance(a: String, b: String): Int = {
    var prev = Array.tabulate(b.length + 1)(identity)
    for (i <- 1 to a.length) {
      val cur = new Array[Int](b.length + 1)
      cur(0) = i
      for (j <- 1 to b.length)
        cur(j) = math.min(math.min(cur(j - 1) + 1, prev(j) + 1), prev(j - 1) + (if (a(i - 1) == b(j - 1)) 0 else 1))
      prev = cur
    }
    prev(b.length)
  }

  /**
   * A primary key given as comma-separated column names, trimmed. An empty name (`"id,"`, `""`) or a
   * column named twice (case-insensitively) is INVALID_OPTION.
   */
  def primaryKey(value: String): Seq[String] = {
    val cols = value.split(",", -1).map(_.trim).toSeq
    if (cols.exists(_.isEmpty)) throw Errors.invalidOption(s"Invalid value '$value' for option '$PrimaryKey': " +
      "expected column names separated by commas, e.g. 'id' or 'region,id', with no empty name.")
    cols.groupBy(_.toLowerCase).collectFirst { case (_, g) if g.size > 1 => g.head }.foreach { c =>
      throw Errors.invalidOption(s"Invalid value '$value' for option '$PrimaryKey': column '$c' is named twice; " +
        "expected each key column once.")
    }
    cols
  }

  /** A boolean option: `true` or `false` (case-insensitive), else INVALID_OPTION. */
  def boolean(key: String, value: String): Boolean = Setting.Kind.boolean.parse(value.trim).getOrElse(
    throw Errors.invalidOption(s"Invalid value '$value' for option '$key': expected ${Setting.Kind.boolean.expected}."))

  val DefaultFragmentRows = Setting.FragmentRows.default
  val DefaultMaxChain = Setting.MaxChain.default
  val DefaultMaxDiffRatio = Setting.MaxDiffRatio.default
  val DefaultConsolidateAfter = Setting.ConsolidateAfter.default
  val DefaultCompactionYieldMs = Setting.CompactionYieldMs.default
  val DefaultCompactionDutyCycle = Setting.CompactionDutyCycle.default
  val DefaultMaxOverlayRows = Setting.MaxOverlayRows.default
  /** Negative: a fifth of each executor's heap. */
  val DefaultDiffCacheBytes: Long = Setting.DiffCacheBytes.default
  val DefaultLocalCommitMaxRows = Setting.LocalCommitMaxRows.default
  val DefaultLocalCommitMaxBytes: Long = Setting.LocalCommitMaxBytes.default
  val DefaultDiffCompression = Setting.DiffCompression.default
  val DefaultWarehouse = "versioned-warehouse"

  // ---- reserved column names: the format kernel's (versioned.core.format.Reserved)
  val DupColumn: String = Reserved.Dup
  val ReservedColumns: Set[String] = Reserved.All
  val ChangeColumn: String = Reserved.Change
  val PriorChainColumn: String = Reserved.PriorChain
  val PriorColumn: String = Reserved.Prior
  val RowIdColumn: String = Reserved.RowId
  val BeforeColumn: String = Reserved.Before
}
