package versioned.spark.api

import scala.jdk.CollectionConverters._
import org.apache.spark.sql.{DataFrame, SparkSession}
import versioned.spark.merge.{MergeOptions, MergeOutcome, Merger}

/** Merge, cherry-pick and revert (docs/MERGE.md), Java-friendly: null means "the default". */
private[spark] object MergeApi {
  import ApiSupport._
  type Resolutions = java.util.Map[String, DataFrame]

  private def merger(spark: SparkSession, options: VersionedApi.Opts, repository: String) =
    new Merger(spark, engineFor(spark, options, repository))

  private def opts(spark: SparkSession, strategy: String, fastForward: String, dryRun: Boolean, message: String,
                   author: String, resolutions: Resolutions, allowUnrelated: Boolean,
                   squash: Boolean = false): MergeOptions =
    MergeOptions(strategy, fastForward, dryRun, message, ApiSupport.author(spark, author),
      Option(resolutions).map(_.asScala.toMap).getOrElse(Map.empty), allowUnrelated, squash)

  def merge(spark: SparkSession, options: VersionedApi.Opts, repository: String, source: String, into: String,
            strategy: String, fastForward: String, dryRun: Boolean, message: String, author: String,
            resolutions: Resolutions, allowUnrelated: Boolean, squash: Boolean): MergeOutcome = {
    val r = repo(repository)
    val target = Option(into).filter(_.nonEmpty).getOrElse(engineFor(spark, options, r).defaultBranch(r))
    merger(spark, options, r).merge(r, nonEmpty(source, "source"), target,
      opts(spark, strategy, fastForward, dryRun, message, author, resolutions, allowUnrelated, squash))
  }

  /** `parent` (1-based) is required for a merge commit; 0 or less means "not given". */
  def pick(spark: SparkSession, options: VersionedApi.Opts, repository: String, commit: String, onto: String,
           parent: Int, revert: Boolean, strategy: String, dryRun: Boolean, message: String, author: String,
           resolutions: Resolutions): MergeOutcome = {
    val r = repo(repository)
    val target = Option(onto).filter(_.nonEmpty).getOrElse(engineFor(spark, options, r).defaultBranch(r))
    merger(spark, options, r).pick(r, nonEmpty(commit, "commit"), target, Some(parent).filter(_ > 0), revert,
      opts(spark, strategy, MergeOptions.Auto, dryRun, message, author, resolutions, allowUnrelated = false))
  }

  private def nonEmpty(s: String, what: String): String = Option(s).map(_.trim).filter(_.nonEmpty).getOrElse(
    throw versioned.core.Errors.invalidOption(s"$what must be a revision (a branch, tag, lock or hash)."))
}
