package versioned.spark.api

import org.apache.spark.sql.{DataFrame, SparkSession}
import versioned.core.{DownloadResult, FetchResult, PushResult}

/**
 * Entry point for Python (through py4j) and Java/Scala callers: static, Java-friendly methods.
 * `options` (may be null) override where the warehouse is for one call: `warehouse`, `metastoreUrl`;
 * by default they come from the Spark conf (`spark.versioned.warehouse`, `spark.versioned.metastore.url`).
 * Revisions (`ref`, `fromRef`, `spec`) are anything the engine's resolver accepts: a branch, tag,
 * lock (`namespace:name`), full hash or unique prefix of at least 4 hex digits, optionally followed by
 * `~N` or `^N`. Errors are `versioned.core.VersionedException`s with a stable `getErrorClass`.
 *
 * {{{
 *   VersionedApi.createBranch(spark, null, "sales", "dev", "main")
 *   VersionedApi.log(spark, null, "sales", "dev", 10).show()
 * }}}
 */
object VersionedApi {
  type Opts = java.util.Map[String, String]

  // ---- repositories and revisions
  def repositories(spark: SparkSession, options: Opts): java.util.List[String] = RefsApi.repositories(spark, options)
  def resolve(spark: SparkSession, options: Opts, repo: String, spec: String): String =
    RefsApi.resolve(spark, options, repo, spec)

  // ---- branches
  /** The repository's default branch: what a read or write that names no branch uses. */
  def defaultBranch(spark: SparkSession, options: Opts, repo: String): String = RefsApi.defaultBranch(spark, options, repo)
  /** Makes existing branch `name` the repository's default; returns its head hash. */
  def setDefaultBranch(spark: SparkSession, options: Opts, repo: String, name: String): String =
    RefsApi.setDefaultBranch(spark, options, repo, name)
  def branches(spark: SparkSession, options: Opts, repo: String): DataFrame = RefsApi.branches(spark, options, repo)
  def createBranch(spark: SparkSession, options: Opts, repo: String, name: String, fromRef: String): String =
    RefsApi.createBranch(spark, options, repo, name, fromRef)
  def deleteBranch(spark: SparkSession, options: Opts, repo: String, name: String): Unit =
    RefsApi.deleteBranch(spark, options, repo, name)
  def renameBranch(spark: SparkSession, options: Opts, repo: String, from: String, to: String): Unit =
    RefsApi.renameBranch(spark, options, repo, from, to)
  def resetBranch(spark: SparkSession, options: Opts, repo: String, branch: String, ref: String): String =
    RefsApi.resetBranch(spark, options, repo, branch, ref)

  // ---- tags
  def tags(spark: SparkSession, options: Opts, repo: String): DataFrame = RefsApi.tags(spark, options, repo)
  def createTag(spark: SparkSession, options: Opts, repo: String, name: String, ref: String): String =
    RefsApi.createTag(spark, options, repo, name, ref)
  def deleteTag(spark: SparkSession, options: Opts, repo: String, name: String): Unit =
    RefsApi.deleteTag(spark, options, repo, name)

  // ---- locks
  def locks(spark: SparkSession, options: Opts, repo: String, namespace: String): DataFrame =
    RefsApi.locks(spark, options, repo, namespace)
  def createLock(spark: SparkSession, options: Opts, repo: String, namespace: String, name: String, ref: String): String =
    RefsApi.createLock(spark, options, repo, namespace, name, ref)
  def releaseLock(spark: SparkSession, options: Opts, repo: String, namespace: String, name: String): Unit =
    RefsApi.releaseLock(spark, options, repo, namespace, name)

  // ---- history
  def log(spark: SparkSession, options: Opts, repo: String, ref: String, limit: Int): DataFrame =
    HistoryApi.log(spark, options, repo, ref, limit)
  def show(spark: SparkSession, options: Opts, repo: String, ref: String): String =
    HistoryApi.show(spark, options, repo, ref)

  // ---- row-level writes
  def deleteWhere(spark: SparkSession, options: Opts, table: String, condition: String, branch: String,
                  message: String, author: String): Long =
    TableApi.deleteWhere(spark, options, table, condition, branch, message, author)
  def upsert(spark: SparkSession, options: Opts, df: DataFrame, table: String, branch: String, message: String,
             author: String, primaryKey: String, deleteColumn: String, beforeImages: java.lang.Boolean): String =
    TableApi.upsert(spark, options, df, table, branch, message, author, primaryKey, deleteColumn, beforeImages)
  def writeBatch(spark: SparkSession, options: Opts, df: DataFrame, table: String, queryId: String, batchId: Long,
                 mode: String, branch: String, message: String, author: String, primaryKey: String, upsert: Boolean,
                 deleteColumn: String): String =
    TableApi.writeBatch(spark, options, df, table, queryId, batchId, mode, branch, message, author, primaryKey, upsert,
      deleteColumn)

  // ---- multi-table transactions (docs/TRANSACTIONS.md)
  /** Opens a transaction on `branch` of `repo` (null: the default branch); commit it or abort it through the handle. */
  def beginTransaction(spark: SparkSession, options: Opts, repo: String, branch: String, message: String,
                       author: String): TransactionHandle =
    TransactionApi.begin(spark, options, repo, branch, message, author)

  // ---- merge, cherry-pick, revert (docs/MERGE.md); null arguments take their defaults
  /**
   * Merges revision `source` into branch `into` (null: the default branch). `strategy`: fail | ours |
   * theirs; `fastForward`: auto | never | only; `resolutions` (may be null): per table, rows settling its
   * conflicts; `squash`: one commit with one parent holding the source's net change.
   */
  def merge(spark: SparkSession, options: Opts, repo: String, source: String, into: String, strategy: String,
            fastForward: String, dryRun: Boolean, message: String, author: String,
            resolutions: java.util.Map[String, DataFrame], allowUnrelated: Boolean,
            squash: Boolean): versioned.spark.merge.MergeOutcome =
    MergeApi.merge(spark, options, repo, source, into, strategy, fastForward, dryRun, message, author, resolutions,
      allowUnrelated, squash)
  /** [[merge]] without squash. */
  def merge(spark: SparkSession, options: Opts, repo: String, source: String, into: String, strategy: String,
            fastForward: String, dryRun: Boolean, message: String, author: String,
            resolutions: java.util.Map[String, DataFrame], allowUnrelated: Boolean): versioned.spark.merge.MergeOutcome =
    merge(spark, options, repo, source, into, strategy, fastForward, dryRun, message, author, resolutions,
      allowUnrelated, squash = false)
  /** Applies the change of `commit` (against parent number `parent`, 1-based, 0 = its only parent) onto `onto`. */
  def cherryPick(spark: SparkSession, options: Opts, repo: String, commit: String, onto: String, parent: Int,
                 strategy: String, dryRun: Boolean, message: String, author: String,
                 resolutions: java.util.Map[String, DataFrame]): versioned.spark.merge.MergeOutcome =
    MergeApi.pick(spark, options, repo, commit, onto, parent, revert = false, strategy, dryRun, message, author, resolutions)
  /** Applies the inverse of the change of `commit` on branch `on`. */
  def revert(spark: SparkSession, options: Opts, repo: String, commit: String, on: String, parent: Int,
             strategy: String, dryRun: Boolean, message: String, author: String,
             resolutions: java.util.Map[String, DataFrame]): versioned.spark.merge.MergeOutcome =
    MergeApi.pick(spark, options, repo, commit, on, parent, revert = true, strategy, dryRun, message, author, resolutions)

  // ---- remotes (docs/REMOTES.md); null arguments take their defaults (remote "origin", the default branch)
  /**
   * Adds remote `name` of `repo`: warehouse `warehouse` (object store URI) with metastore `metastoreUrl`
   * (JDBC, without credentials: they come from `spark.versioned.remote.<name>.metastore.user/password`),
   * repository `remoteRepository` there (null: the same name).
   */
  def addRemote(spark: SparkSession, options: Opts, repo: String, name: String, warehouse: String, metastoreUrl: String,
                remoteRepository: String): Unit =
    RemotesApi.addRemote(spark, ApiSupport.engineFor(spark, options, repo), repo, name, warehouse, metastoreUrl, remoteRepository)
  /** Remotes of `repo`: name, warehouse, metastore_url, repository. */
  def remotes(spark: SparkSession, options: Opts, repo: String): DataFrame = RemotesApi.remotes(spark, ApiSupport.engineFor(spark, options, repo), repo)
  /** Removes a remote and the refs tracking it. */
  def removeRemote(spark: SparkSession, options: Opts, repo: String, name: String): Unit =
    RemotesApi.removeRemote(spark, ApiSupport.engineFor(spark, options, repo), repo, name)
  /** Refs tracking remote `remote` (null: every remote), named like `origin/main` and `origin/tags/v1`. */
  def remoteRefs(spark: SparkSession, options: Opts, repo: String, remote: String): DataFrame =
    RemotesApi.remoteRefs(spark, ApiSupport.engineFor(spark, options, repo), repo, remote)
  /**
   * Clones repository `sourceRepository` of another warehouse into `into` (null: the same name) of this one:
   * its history, object metadata, refs as `remotes/<remote>/...` and a local default branch. `download`:
   * "all" copies every object now, "none" (null) records where each is and reads it there in place.
   */
  def cloneRepository(spark: SparkSession, options: Opts, sourceRepository: String, warehouse: String, metastoreUrl: String,
                      into: String, remote: String, download: String): FetchResult =
    RemotesApi.cloneRepository(spark, ApiSupport.engine(spark, options), sourceRepository, warehouse, metastoreUrl, into, remote, download)
  /** Brings what `remote` has that `repo` lacks and moves the refs tracking it; never moves a local branch. */
  def fetch(spark: SparkSession, options: Opts, repo: String, remote: String, download: String): FetchResult =
    RemotesApi.fetch(spark, ApiSupport.engineFor(spark, options, repo), repo, remote, download)
  /**
   * Copies into this warehouse the objects of `ref`'s tables (null: of every version of `repo`) that it knows only
   * at a remote's places (lazy clones and fetches), verified, then forgets those places; refs do not move.
   */
  def download(spark: SparkSession, options: Opts, repo: String, ref: String): DownloadResult =
    RemotesApi.downloadObjects(spark, ApiSupport.engineFor(spark, options, repo), repo, ref)
  /** Fetch, then merge `remotes/<remote>/<branch>` into local `branch` (a fast-forward when possible). */
  def pull(spark: SparkSession, options: Opts, repo: String, remote: String, branch: String, strategy: String,
           fastForward: String, message: String, author: String): versioned.spark.merge.MergeOutcome =
    RemotesApi.pull(spark, ApiSupport.engineFor(spark, options, repo), repo, remote, branch, strategy, fastForward, message, author)
  /** Uploads what the remote lacks, then moves its branch by compare-and-swap (fast-forward unless `force`). */
  def push(spark: SparkSession, options: Opts, repo: String, remote: String, branch: String, force: Boolean,
           tags: Boolean): PushResult =
    RemotesApi.push(spark, ApiSupport.engineFor(spark, options, repo), repo, remote, branch, force, tags)
  /**
   * Commits on `branch` (null: default) table `table` of repository `fromRepository` at `ref` (null: its default
   * branch), of remote `remote` when not null, named `asTable` (null: the same); no data is copied. Returns the commit.
   */
  def importTable(spark: SparkSession, options: Opts, repo: String, fromRepository: String, table: String, ref: String,
                  asTable: String, branch: String, remote: String, message: String, author: String): String =
    RemotesApi.importTable(spark, ApiSupport.engineFor(spark, options, repo), repo, fromRepository, table, ref, asTable, branch, remote, message, author)

  /** The author of a commit: explicit, else `spark.versioned.author`, else the JVM user. */
  def authorOf(spark: SparkSession, explicit: String): String = ApiSupport.author(spark, explicit)

  // ---- diffs and maintenance
  def diff(spark: SparkSession, options: Opts, table: String, fromRef: String, toRef: String): DataFrame =
    MaintenanceApi.diff(spark, options, table, fromRef, toRef)
  /**
   * Row blame of `table` (`repo.table`) at `ref` (null: the default branch): per row, its identity columns and the
   * commit of the first-parent line that last changed it (`_commit_hash`, `_commit_version`, `_commit_timestamp`,
   * `_commit_author`, `_commit_message`). See docs/BLAME.md.
   */
  def blame(spark: SparkSession, options: Opts, table: String, ref: String): DataFrame =
    MaintenanceApi.blame(spark, options, table, ref)
  /**
   * What changed between two revisions, one row per table that differs: `table`, `inserted`, `updated`,
   * `deleted` (rows), `columns_changed` (columns whose values changed in updated rows, and columns added
   * or dropped), `schema_changed` (columns, types or key). Computed when called; unchanged tables are not read.
   */
  def diffSummary(spark: SparkSession, options: Opts, repo: String, fromRef: String, toRef: String): DataFrame =
    MaintenanceApi.diffSummary(spark, options, repo, fromRef, toRef, null)
  /** [[diffSummary]] of one table (`table` null: every table). */
  def diffSummary(spark: SparkSession, options: Opts, repo: String, fromRef: String, toRef: String, table: String): DataFrame =
    MaintenanceApi.diffSummary(spark, options, repo, fromRef, toRef, table)
  def materialize(spark: SparkSession, options: Opts, repo: String): DataFrame =
    MaintenanceApi.materialize(spark, options, repo)
  /**
   * Compaction of `branch`'s head (null: the default branch; `table` null: every table) now: waits for
   * its background compaction, then runs the compaction policy. Rows (table, image, objects written).
   */
  def compact(spark: SparkSession, options: Opts, repo: String, branch: String, table: String): DataFrame =
    MaintenanceApi.compact(spark, options, repo, branch, table)
  /** Waits for every background compaction of this driver (`timeoutMs` <= 0: no limit); true when none is left. */
  def awaitCompactions(timeoutMs: Long): Boolean = MaintenanceApi.awaitCompactions(timeoutMs)
  def evict(spark: SparkSession, options: Opts, repo: String): Int = MaintenanceApi.evict(spark, options, repo)
  /**
   * Deletes objects no version needs that nothing used for `olderThanMs` (< 0: the default, a day), and
   * for a whole warehouse (`repo` null) orphan and staging files; below an hour only with `force`. With
   * `dryRun`, lists what would go. Returns (kind, name, path, reason) rows.
   */
  def collectGarbage(spark: SparkSession, options: Opts, repo: String, olderThanMs: Long, force: Boolean,
                     dryRun: Boolean): DataFrame =
    MaintenanceApi.collectGarbage(spark, options, repo, olderThanMs, force, dryRun)
  /** The reflog of `repo` (of `ref` only when non-null), newest first; at most `limit` entries (<= 0: all). */
  def reflog(spark: SparkSession, options: Opts, repo: String, ref: String, limit: Int): DataFrame =
    ReflogApi.reflog(spark, options, repo, ref, limit)

  /** Checks every object the versions reachable from `refs` (null or empty: every ref) need; one row per object. */
  def verify(spark: SparkSession, options: Opts, repo: String, refs: java.util.List[String]): DataFrame =
    MaintenanceApi.verify(spark, options, repo, refs)
}
