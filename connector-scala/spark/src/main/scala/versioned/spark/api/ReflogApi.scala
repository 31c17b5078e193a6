package versioned.spark.api

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types._
import versioned.core.{Engine, ReflogEntry}
import versioned.spark.api.ApiSupport._

/**
 * The reflog (docs/AUDIT.md): every ref movement of a repository, newest first, one row per entry. The same rows
 * are the `$reflog` metadata table, the `reflog` procedure and the Python `Repository.reflog`.
 */
object ReflogApi {
  val Schema: StructType = StructType(Seq(StructField("seq", LongType, nullable = false),
    StructField("id", StringType, nullable = false), StructField("ref", StringType, nullable = false),
    StructField("old_image", StringType), StructField("new_image", StringType),
    StructField("operation", StringType, nullable = false), StructField("who", StringType, nullable = false),
    StructField("app_id", StringType, nullable = false), StructField("client", StringType, nullable = false),
    StructField("detail", StringType, nullable = false), StructField("at", TimestampType, nullable = false),
    StructField("prev_hash", StringType, nullable = false), StructField("entry_hash", StringType, nullable = false)))

  private def row(e: ReflogEntry): Row = Row(e.seq, e.id, e.ref, e.oldImage.orNull, e.newImage.orNull, e.operation,
    e.who, e.appId, e.client, e.detail, timestamp(e.atMs), e.prevHash, e.hash)

  /** The entries of `repo` (of `ref` only when given: a full name, or a branch, tag or lock name), newest first. */
  def rows(e: Engine, repo: String, ref: Option[String], limit: Int): Seq[Row] =
    e.reflog.entries(ApiSupport.repo(repo), ref.filter(_.nonEmpty), limit).map(row)

  def reflog(spark: SparkSession, options: VersionedApi.Opts, repo: String, ref: String, limit: Int): DataFrame =
    reflog(spark, ApiSupport.engineFor(spark, options, repo), repo, Option(ref), limit)

  def reflog(spark: SparkSession, e: Engine, repo: String, ref: Option[String], limit: Int): DataFrame =
    frame(spark, Schema, rows(e, repo, ref, limit))
}
