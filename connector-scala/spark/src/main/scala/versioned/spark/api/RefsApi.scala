package versioned.spark.api

import scala.jdk.CollectionConverters._
import org.apache.spark.sql.{DataFrame, SparkSession}
import versioned.spark.api.ApiSupport._

/**
 * Repositories, branches, tags and locks. Every revision argument is resolved by the engine's
 * resolver; every name is validated by the core. Methods that create or move a ref return the full
 * hash of the image it points to.
 */
object RefsApi {
  type Opts = java.util.Map[String, String]

  /** The repositories of the warehouse, by name; none where there is no warehouse (and none is created). */
  def repositories(spark: SparkSession, options: Opts): java.util.List[String] =
    if (!ApiSupport.warehouseMayExist(spark, options)) java.util.Collections.emptyList[String]()
    else engine(spark, options).repositories().sorted.asJava

  /** The full image hash a revision resolves to. */
  def resolve(spark: SparkSession, options: Opts, repo: String, revision: String): String =
    ApiSupport.engineFor(spark, options, repo).resolve(ApiSupport.repo(repo), spec(revision)).hash

  // ---- branches
  /** The repository's default branch: what a read or write that names no branch uses. */
  def defaultBranch(spark: SparkSession, options: Opts, repo: String): String =
    ApiSupport.engineFor(spark, options, repo).defaultBranch(ApiSupport.repo(repo))

  /** Makes an existing branch the repository's default; returns its head hash. */
  def setDefaultBranch(spark: SparkSession, options: Opts, repo: String, name: String): String =
    ApiSupport.engineFor(spark, options, repo).refs.setDefaultBranch(ApiSupport.repo(repo), name).image

  def branches(spark: SparkSession, options: Opts, repo: String): DataFrame =
    refsFrame(spark, ApiSupport.engineFor(spark, options, repo).refs.branches(ApiSupport.repo(repo)))

  def createBranch(spark: SparkSession, options: Opts, repo: String, name: String, fromRef: String): String =
    ApiSupport.engineFor(spark, options, repo).refs.createBranch(ApiSupport.repo(repo), name, spec(fromRef)).image

  def deleteBranch(spark: SparkSession, options: Opts, repo: String, name: String): Unit =
    ApiSupport.engineFor(spark, options, repo).refs.deleteBranch(ApiSupport.repo(repo), name)

  def renameBranch(spark: SparkSession, options: Opts, repo: String, from: String, to: String): Unit =
    ApiSupport.engineFor(spark, options, repo).refs.renameBranch(ApiSupport.repo(repo), from,
      to)

  /** Moves a branch to the image `ref` resolves to (history is kept); returns the new head hash. */
  def resetBranch(spark: SparkSession, options: Opts, repo: String, branch: String, ref: String): String =
    ApiSupport.engineFor(spark, options, repo).refs.resetBranch(ApiSupport.repo(repo), branch, spec(ref)).image

  // ---- tags
  def tags(spark: SparkSession, options: Opts, repo: String): DataFrame =
    refsFrame(spark, ApiSupport.engineFor(spark, options, repo).refs.tags(ApiSupport.repo(repo)))

  def createTag(spark: SparkSession, options: Opts, repo: String, name: String, ref: String): String =
    ApiSupport.engineFor(spark, options, repo).refs.createTag(ApiSupport.repo(repo), name, spec(ref)).image

  def deleteTag(spark: SparkSession, options: Opts, repo: String, name: String): Unit =
    ApiSupport.engineFor(spark, options, repo).refs.deleteTag(ApiSupport.repo(repo), name)

  // ---- locks
  /** Locks of a repository; `namespace` null lists every namespace. Names are `namespace:name`. */
  def locks(spark: SparkSession, options: Opts, repo: String, namespace: String): DataFrame =
    refsFrame(spark, ApiSupport.engineFor(spark, options, repo).refs.locks(ApiSupport.repo(repo), Option(namespace)))

  def createLock(spark: SparkSession, options: Opts, repo: String, namespace: String, name: String,
                 ref: String): String =
    ApiSupport.engineFor(spark, options, repo).refs.createLock(ApiSupport.repo(repo), namespace,
      name, spec(ref)).image

  def releaseLock(spark: SparkSession, options: Opts, repo: String, namespace: String, name: String): Unit =
    ApiSupport.engineFor(spark, options, repo).refs.releaseLock(ApiSupport.repo(repo), namespace,
      name)
}
