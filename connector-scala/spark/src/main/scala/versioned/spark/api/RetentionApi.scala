package versioned.spark.api

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types._
import versioned.core.{Engine, RetentionPolicy}
import versioned.spark.api.ApiSupport._

/**
 * Retention policies by ref (docs/SAFETY.md, "Retention policies"): per branch name or glob, how much of a branch's
 * history garbage collection keeps, and when a stale branch expires. Java-friendly: a null number is "not set".
 */
object RetentionApi {
  type Opts = java.util.Map[String, String]

  val PolicySchema: StructType = StructType(Seq(StructField("pattern", StringType, nullable = false),
    StructField("keep_days", IntegerType), StructField("keep_commits", IntegerType),
    StructField("expire_branches_after_days", IntegerType)))

  private def row(p: RetentionPolicy) = Row(p.pattern, p.keepDays.orNull, p.keepCommits.orNull, p.expireBranchDays.orNull)
  private def opt(n: java.lang.Integer): Option[Int] = Option(n).map(_.intValue)

  /** Adds or replaces the policy of a branch name or glob; one row (the policy). */
  def setRetention(spark: SparkSession, options: Opts, repo: String, pattern: String, keepDays: java.lang.Integer,
                   keepCommits: java.lang.Integer, expireBranchDays: java.lang.Integer): DataFrame =
    set(spark, ApiSupport.engineFor(spark, options, repo), repo, RetentionPolicy(pattern, opt(keepDays), opt(keepCommits), opt(expireBranchDays)))

  def set(spark: SparkSession, e: Engine, repo: String, policy: RetentionPolicy): DataFrame =
    frame(spark, PolicySchema, Seq(row(e.retention.set(ApiSupport.repo(repo), policy))))

  def removeRetention(spark: SparkSession, options: Opts, repo: String, pattern: String): Unit =
    ApiSupport.engineFor(spark, options, repo).retention.remove(ApiSupport.repo(repo), pattern)

  def retention(spark: SparkSession, options: Opts, repo: String): DataFrame = retention(spark, ApiSupport.engineFor(spark, options, repo), repo)

  def retention(spark: SparkSession, e: Engine, repo: String): DataFrame =
    frame(spark, PolicySchema, e.retention.policies(ApiSupport.repo(repo)).map(row))
}
