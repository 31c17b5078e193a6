package versioned.spark.api

import versioned.core.format.WriteMode

import org.apache.spark.storage.StorageLevel
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.functions.{expr, lit}
import org.apache.spark.sql.types.{ByteType, StructType}
import versioned.core._
import versioned.spark.session.TableIdent
import versioned.spark.session.VersionedOptions
import versioned.spark.format.TableLayout
import versioned.spark.api.ApiSupport._
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import versioned.spark.write.{ChangeSets, CommitPlanner, Commits, LocalCommit, StagedInput, WriteRequest}

/** Row-level writes that are not plain appends: delete by condition and upsert by primary key. */
object TableApi {
  type Opts = java.util.Map[String, String]

  /**
   * Deletes the rows of `table` ("repo.table") on `branch` (null: the default branch) that match the
   * SQL `condition`, as one commit of a DIFF of deletes. Returns the number of rows deleted; when no
   * row matches, nothing is committed and 0 is returned.
   *
   * A condition that restricts the primary key's first column to a set of values (`id IN (...)`, `id = 1
   * OR id = 2`, either AND other conditions) reads the table by a key lookup: only the fragments, objects
   * and Parquet pages that may hold those keys ([[versioned.spark.read.KeyLookup]], through the scan's
   * filter pushdown); the whole condition is then applied to the rows read. Of keyed tables only the key
   * and the columns the condition names are read: a DIFF delete carries only the key. Up to
   * [[versioned.spark.read.LocalLookup.MaxKeys]] keys (and `localCommitMaxRows` rows) are looked up and
   * committed on the driver, with no Spark job ([[KeyDelete]]).
   */
  def deleteWhere(spark: SparkSession, options: Opts, table: String, condition: String, branch: String,
                  message: String, author: String): Long = {
    val opts = ApiSupport.options(options)
    val ident = TableIdent.parse(table)
    if (condition == null || condition.trim.isEmpty) throw Errors.invalidOption(
      "deleteWhere needs a SQL condition, e.g. \"id < 10\". To delete every row, pass \"true\".")
    val e = ApiSupport.engineFor(spark, options, ident.repo)
    if (!e.repositoryExists(ident.repo)) throw new RepositoryNotFoundException(ident.repo)
    val b = Option(branch).getOrElse(e.defaultBranch(ident.repo))
    val head = e.writableHead(ident.repo, b).getOrElse(throw new RefNotFoundException(
      s"Branch '$b' does not exist in repository '${ident.repo}'."))
    val version = e.table(ident.repo, head, ident.table) // TableNotFound when the table is not on the branch
    val layout = TableLayout.of(version)
    val location = locationOptions(opts)
    val msg = Option(message).filter(_.nonEmpty).getOrElse(s"delete from ${ident.table} where $condition")
    val req = WriteRequest(ident, Some(b), WriteMode.Changes, None, upsert = false, ApiSupport.author(spark, author),
      msg, location, expectedHead = Some(head.hash), beforeImages = versioned.spark.session.Settings.of(spark).beforeImages)
    val maxRows = versioned.spark.session.Warehouses.localCommitMaxRows(spark)
    // the key's columns (never null), the others as nulls, then the change kind: the frame of the general path
    // below when its condition implies the key is not null, as a key set does (DIFF objects record nullability)
    val deleteSchema = StructType(layout.physicalSchema.map(f => f.copy(nullable = !layout.keyColumns.contains(f.name))))
      .add(VersionedOptions.ChangeColumn, ByteType, nullable = false)
    // A few keys: found on the driver, committed with no job (KeyDelete).
    KeyDelete.rows(spark, layout, versioned.spark.session.TableSnapshot.of(e, ident.repo, head, version), condition, maxRows) match {
      case Some(rows) =>
        if (rows.nonEmpty) {
          CommitPlanner.commit(e, req, StagedInput.local(deleteSchema, rows))
        }
        return rows.size.toLong
      case None =>
    }
    // The head version, pinned by hash, with the hidden duplicate ordinal of key-less tables.
    val current = versioned.spark.read.PinnedRead.table(spark, location, ident, head.hash)
    val deletes = ChangeSets.deletedIdentities(current.filter(expr(condition)), layout)
    // One job finds the matching rows and caches them (LocalCommit.collectOrCount): up to localCommitMaxRows
    // of them come back to the driver, which commits them with no further job; beyond that only their count
    // does, and the commit plans from the cached rows instead of scanning the table again.
    val matched = deletes.persist(StorageLevel.MEMORY_AND_DISK)
    try {
      val found = versioned.spark.session.Jobs.described(spark, s"delete from $ident where $condition")(
        LocalCommit.collectOrCount(matched, maxRows))
      val deleted = found.fold(identity, _.size.toLong)
      if (deleted == 0) return 0L
      val changes = matched.withColumn(VersionedOptions.ChangeColumn, lit(ChangeKind.Delete).cast(ByteType))
      val rows = found.toOption.map(_.map(r => new GenericInternalRow((r.toSeq(matched.schema) :+ ChangeKind.Delete).toArray): InternalRow))
      CommitPlanner.commit(e, req, StagedInput(changes, rows))
      deleted
    } finally matched.unpersist()
  }

  /**
   * Inserts the rows of `df` into `table` on `branch` (null: the default branch), updating rows whose
   * primary key already exists, as one commit. `primaryKey` (comma-separated, null to keep the
   * table's key) is required when the table does not exist yet. `deleteColumn` (null: none) names a
   * boolean column of `df` whose true rows delete their key instead; the table is never read.
   * Returns the new head hash.
   */
  def upsert(spark: SparkSession, options: Opts, df: DataFrame, table: String, branch: String, message: String,
             author: String, primaryKey: String, deleteColumn: String, beforeImages: java.lang.Boolean): String =
    // without a message the write names itself ("upsert into <table>")
    committed(spark, options, df, table, branch, author, "append", Map(VersionedOptions.Upsert -> "true",
      VersionedOptions.Message -> message, VersionedOptions.BeforeImages -> Option(beforeImages).map(_.toString).orNull,
      VersionedOptions.DeleteColumn -> deleteColumn, VersionedOptions.PrimaryKey -> primaryKey))

  /**
   * Writes `df` to `table` as batch `batchId` of the streaming query `queryId` (a `foreachBatch` function's
   * write), idempotently: when the branch has that batch of the query for the table already, nothing is
   * committed and that commit is returned (write options `streamQueryId`, `streamBatchId`; docs/STREAMING.md).
   * `mode`: "append" or "overwrite"; `upsert`, `deleteColumn`, `primaryKey` as for writes (null: not given).
   * Returns the batch's commit.
   */
  def writeBatch(spark: SparkSession, options: Opts, df: DataFrame, table: String, queryId: String, batchId: Long,
                 mode: String, branch: String, message: String, author: String, primaryKey: String, upsert: Boolean,
                 deleteColumn: String): String =
    committed(spark, options, df, table, branch, author, mode, Map(VersionedOptions.StreamQueryId -> queryId,
      VersionedOptions.StreamBatchId -> batchId.toString, VersionedOptions.Upsert -> upsert.toString,
      VersionedOptions.Message -> message, VersionedOptions.DeleteColumn -> deleteColumn,
      VersionedOptions.PrimaryKey -> primaryKey))

  /** A DataFrame write of `df` to `table` on `branch` (null: the default branch) with `extra` options (empty or null ones left out); its commit. */
  private def committed(spark: SparkSession, options: Opts, df: DataFrame, table: String, branch: String, author: String,
                        mode: String, extra: Map[String, String]): String = {
    val opts = ApiSupport.options(options)
    val ident = TableIdent.parse(table)
    val e = engine(spark, options)
    val b = Option(branch).getOrElse(e.defaultBranchOrConfig(ident.repo))
    val w = df.write.format("versioned").options(locationOptions(opts))
      .option(VersionedOptions.Branch, b)
      .option(VersionedOptions.Author, ApiSupport.author(spark, author))
      .options(extra.filter { case (_, v) => v != null && v.nonEmpty })
    // the commit this write made (not the branch head read afterwards, which another writer may have moved)
    val result = Commits.of(w.mode(mode).save(ident.toString))
    result.map(_.image.hash).orElse(e.branchHeadOption(ident.repo, b).map(_.hash)).getOrElse(throw new RefNotFoundException(
      s"Branch '$b' of '${ident.repo}' disappeared after the write."))
  }
}
