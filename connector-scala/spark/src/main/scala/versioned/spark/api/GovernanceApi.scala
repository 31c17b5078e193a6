package versioned.spark.api

import scala.jdk.CollectionConverters._
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types._
import versioned.core._
import versioned.core.governance.BranchRule
import versioned.spark.api.ApiSupport._
import versioned.spark.governance.{Bisect, CheckRunner, Publisher, SparkCheckGate}

/**
 * Protected branches and checks (docs/GOVERNANCE.md): rules per branch name or glob, checks stored with the
 * repository, checks run on demand (every run recorded, the metadata table `$checks`).
 */
object GovernanceApi {
  type Opts = java.util.Map[String, String]

  val RuleSchema: StructType = StructType(Seq(StructField("pattern", StringType, nullable = false),
    StructField("require_merge", BooleanType, nullable = false), StructField("allow_force", BooleanType, nullable = false),
    StructField("allow_delete", BooleanType, nullable = false),
    StructField("required_checks", ArrayType(StringType, containsNull = false), nullable = false)))

  val CheckSchema: StructType = StructType(Seq(StructField("name", StringType, nullable = false),
    StructField("kind", StringType, nullable = false), StructField("table", StringType),
    StructField("expression", StringType, nullable = false), StructField("severity", StringType, nullable = false)))

  val RunSchema: StructType = StructType(Seq(StructField("image", StringType, nullable = false),
    StructField("check", StringType, nullable = false), StructField("severity", StringType, nullable = false),
    StructField("status", StringType, nullable = false), StructField("failing_rows", LongType, nullable = false),
    StructField("sample_keys", ArrayType(StringType, containsNull = false), nullable = false),
    StructField("error", StringType), StructField("duration_ms", LongType, nullable = false)))

  val PublishSchema: StructType = StructType(Seq(StructField("status", StringType, nullable = false),
    StructField("commit", StringType), StructField("into", StringType, nullable = false),
    StructField("branch_deleted", BooleanType, nullable = false),
    StructField("tables", ArrayType(StructType(Seq(StructField("table", StringType), StructField("action", StringType),
      StructField("upserts", LongType), StructField("deletes", LongType))), containsNull = false), nullable = false),
    StructField("checks", ArrayType(StructType(Seq(StructField("check", StringType), StructField("severity", StringType),
      StructField("status", StringType), StructField("failing_rows", LongType),
      StructField("sample_keys", ArrayType(StringType, containsNull = false)), StructField("error", StringType))),
      containsNull = false), nullable = false)))

  val BisectSchema: StructType = StructType(Seq(StructField("first_bad", StringType, nullable = false),
    StructField("message", StringType), StructField("last_good", StringType, nullable = false),
    StructField("candidates", IntegerType, nullable = false),
    StructField("runs", ArrayType(StructType(Seq(StructField("image", StringType), StructField("status", StringType),
      StructField("failing_rows", LongType))), containsNull = false), nullable = false)))

  private def ruleRow(r: BranchRule) = Row(r.pattern, r.requireMerge, r.allowForce, r.allowDelete, r.requiredChecks)
  private def list(checks: java.util.List[String]): Seq[String] =
    Option(checks).map(_.asScala.toSeq).getOrElse(Nil).map(_.trim).filter(_.nonEmpty).distinct

  // ---- protection rules
  /** Adds or replaces the rule for a branch name or glob; one row (the rule). */
  def protect(spark: SparkSession, options: Opts, repo: String, pattern: String, requireMerge: Boolean,
              allowForce: Boolean, allowDelete: Boolean, requiredChecks: java.util.List[String]): DataFrame =
    protect(spark, ApiSupport.engineFor(spark, options, repo), repo, pattern, requireMerge, allowForce, allowDelete, list(requiredChecks))

  def protect(spark: SparkSession, e: Engine, repo: String, pattern: String, requireMerge: Boolean, allowForce: Boolean,
              allowDelete: Boolean, requiredChecks: Seq[String]): DataFrame =
    frame(spark, RuleSchema, Seq(ruleRow(e.protections.protect(ApiSupport.repo(repo),
      BranchRule(pattern, requireMerge, allowForce, allowDelete, requiredChecks)))))

  def unprotect(spark: SparkSession, options: Opts, repo: String, pattern: String): Unit =
    ApiSupport.engineFor(spark, options, repo).protections.unprotect(ApiSupport.repo(repo), pattern)

  def protections(spark: SparkSession, options: Opts, repo: String): DataFrame = protections(spark, ApiSupport.engineFor(spark, options, repo), repo)

  def protections(spark: SparkSession, e: Engine, repo: String): DataFrame =
    frame(spark, RuleSchema, e.protections.rules(ApiSupport.repo(repo)).map(ruleRow))

  // ---- publish (write-audit-publish)
  /**
   * Merges `branch` into `into` (null: the default branch) through the gates, every table it changed in one image;
   * `deleteBranch` deletes it afterwards; `dryRun` makes the merged image, runs the checks on it and forgets it.
   * One row: status, commit, into, branch_deleted, tables, checks.
   */
  def publish(spark: SparkSession, options: Opts, repo: String, branch: String, into: String, deleteBranch: Boolean,
              dryRun: Boolean, message: String, author: String): DataFrame =
    publish(spark, ApiSupport.engineFor(spark, options, repo), repo, branch, into, deleteBranch, dryRun, message, author)

  def publish(spark: SparkSession, e: Engine, repo: String, branch: String, into: String, deleteBranch: Boolean,
              dryRun: Boolean, message: String, author: String): DataFrame = {
    val r = ApiSupport.repo(repo)
    val target = Option(into).filter(_.trim.nonEmpty).getOrElse(e.defaultBranch(r))
    val o = Publisher.publish(spark, e, r, branch, target, deleteBranch, dryRun, Option(message),
      ApiSupport.author(spark, author))
    frame(spark, PublishSchema, Seq(Row(o.status, o.merge.commitHash.orNull, o.into, o.branchDeleted,
      o.stats.map(t => Row(t.table, t.action, t.upserts, t.deletes)),
      o.checks.map(c => Row(c.check, c.severity, c.status, c.failingRows, c.sampleKeys, c.error.orNull)))))
  }

  // ---- bisect
  /**
   * The first commit on the first-parent line from `good` to `bad` (null: the default branch) where `check` (a
   * check's name, or a SQL query returning failing rows) fails, by binary search; every run recorded. One row:
   * first_bad, message, last_good, candidates, runs (image, status, failing_rows).
   */
  def bisect(spark: SparkSession, options: Opts, repo: String, check: String, good: String, bad: String): DataFrame =
    bisect(spark, ApiSupport.engineFor(spark, options, repo), repo, check, good, bad)

  def bisect(spark: SparkSession, e: Engine, repo: String, check: String, good: String, bad: String): DataFrame = {
    val r = ApiSupport.repo(repo)
    val o = Bisect.run(spark, e, r, check, spec(good), Option(bad).filter(_.trim.nonEmpty).map(spec)
      .getOrElse(Revision.DefaultBranch))
    frame(spark, BisectSchema, Seq(Row(o.firstBad.hash, o.firstBad.message, o.lastGood.hash, o.candidates,
      o.runs.map { case (h, run) => Row(h, run.status, run.failingRows) })))
  }

  // ---- checks
  /**
   * Adds (or replaces) a check, validated on the default branch's head: `table` null for a query check (`expression`
   * a SQL query returning the failing rows), else a predicate every row of `table` must satisfy; `severity` error
   * (default) or warn. A definition that does not parse or names a missing table is CHECK_INVALID.
   */
  def addCheck(spark: SparkSession, options: Opts, repo: String, name: String, expression: String, table: String,
               severity: String): DataFrame = addCheck(spark, ApiSupport.engineFor(spark, options, repo), repo, name, expression, table, severity)

  def addCheck(spark: SparkSession, e: Engine, repo: String, name: String, expression: String, table: String,
               severity: String): DataFrame = {
    val r = ApiSupport.repo(repo)
    val d = CheckDef.of(name, Option(table).map(_.trim).filter(_.nonEmpty), expression, severity)
    CheckRunner.validate(spark, e, r, e.branchHeadOption(r, e.defaultBranch(r)), d)
    frame(spark, CheckSchema, Seq(checkRow(e.checks.add(r, d))))
  }

  def removeCheck(spark: SparkSession, options: Opts, repo: String, name: String): Unit =
    ApiSupport.engineFor(spark, options, repo).checks.remove(ApiSupport.repo(repo), name)

  def checks(spark: SparkSession, options: Opts, repo: String): DataFrame = checks(spark, ApiSupport.engineFor(spark, options, repo), repo)

  def checks(spark: SparkSession, e: Engine, repo: String): DataFrame =
    frame(spark, CheckSchema, e.checks.list(ApiSupport.repo(repo)).map(checkRow))

  private def checkRow(d: CheckDef) = Row(d.name, d.kind, d.table.orNull, d.expression, d.severity)

  /**
   * Runs checks on the image `ref` resolves to (null: the default branch), every check of the repository when
   * `names` is null or empty; records each run; one row per check. Never raises for a failing check.
   */
  def runChecks(spark: SparkSession, options: Opts, repo: String, ref: String, names: java.util.List[String]): DataFrame =
    runChecks(spark, ApiSupport.engineFor(spark, options, repo), repo, ref, list(names))

  def runChecks(spark: SparkSession, e: Engine, repo: String, ref: String, names: Seq[String]): DataFrame = {
    val r = ApiSupport.repo(repo)
    val image = e.resolve(r, Option(ref).filter(_.trim.nonEmpty).map(spec).getOrElse(Revision.DefaultBranch))
    val chosen = if (names.isEmpty) e.checks.list(r).map(_.name) else names
    val (runs, _) = SparkCheckGate.evaluate(spark, e, r, image, chosen, "run")
    frame(spark, RunSchema, runs.map(x => Row(image.hash, x.check, x.severity, x.status, x.failingRows, x.sampleKeys,
      x.error.orNull, x.durationMs)))
  }
}
