package versioned.spark.api

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types._
import versioned.core._
import versioned.spark.session.Settings
import versioned.spark.merge.{MergeOptions, MergeOutcome, Merger}
import versioned.spark.remote.SparkObjectMover

/**
 * Remotes, clone, fetch, pull, push and table import (docs/REMOTES.md), Java-friendly: null means "the
 * default" (remote `origin`, the repository's default branch, no download).
 */
private[spark] object RemotesApi {
  import ApiSupport._

  val DefaultRemote = "origin"

  /** The engine's remote operations, with this session's credentials, Hadoop configuration and Spark tasks. */
  def sync(spark: SparkSession, local: Engine): Sync =
    new Sync(local, (r, create) => Remotes.open(r, Settings.remoteCredentials(spark, r.name),
      spark.sparkContext.hadoopConfiguration, create, local), new SparkObjectMover(spark))

  /** The remote `name` names (null: the default remote); a blank name is INVALID_NAME, as a blank branch name is. */
  private def remoteName(name: String): String = Names.validate(Names.Remote, Option(name).fold(DefaultRemote)(_.trim))

  /** `"all"` (or `"true"`): copy every new object now; `"none"`, `"false"` or null: read them in place. */
  def download(value: String): Boolean = Option(value).map(_.trim.toLowerCase).getOrElse("none") match {
    case "all" | "true" => true
    case "none" | "false" | "" => false
    case v => throw Errors.invalidOption(s"Invalid value '$value' for download: expected 'all' (copy every object now) or " +
      "'none' (read objects in place at the remote until they are needed elsewhere).")
  }

  private def branchOr(e: Engine, repo: String, branch: String): String =
    Option(branch).map(_.trim).filter(_.nonEmpty).getOrElse(e.defaultBranch(repo))

  val RemoteSchema: StructType = StructType(Seq(
    StructField("name", StringType, nullable = false), StructField("warehouse", StringType, nullable = false),
    StructField("metastore_url", StringType, nullable = false), StructField("repository", StringType, nullable = false)))

  def remoteRow(r: Remote): Row = Row(r.name, r.warehouse, r.metastoreUrl, r.repository)

  def addRemote(spark: SparkSession, e: Engine, repository: String, name: String, warehouse: String,
                metastoreUrl: String, remoteRepository: String): Remote = {
    val r = repo(repository)
    e.remotes.add(r, Remote.of(remoteName(name), warehouse, metastoreUrl,
      Option(remoteRepository).map(_.trim).filter(_.nonEmpty).getOrElse(r)))
  }

  def remotes(spark: SparkSession, e: Engine, repository: String): DataFrame =
    frame(spark, RemoteSchema, e.remotes.list(repo(repository)).map(remoteRow))

  def removeRemote(spark: SparkSession, e: Engine, repository: String, name: String): Remote = {
    val r = e.remotes.get(repo(repository), remoteName(name))
    e.remotes.remove(repo(repository), r.name)
    r
  }

  /** Refs tracking remote `name` (every remote's when null), as (name, kind, image, created) with names like `origin/main`. */
  def remoteRefs(spark: SparkSession, e: Engine, repository: String, name: String): DataFrame =
    refsFrame(spark, e.remotes.trackingRefs(repo(repository), Option(name).map(remoteName)))

  def cloneRepository(spark: SparkSession, e: Engine, sourceRepository: String, warehouse: String,
                      metastoreUrl: String, into: String, remote: String, download: String): FetchResult = {
    val source = repo(sourceRepository)
    sync(spark, e).cloneRepository(Remote.of(remoteName(remote), warehouse, metastoreUrl, source),
      Option(into).map(_.trim).filter(_.nonEmpty).map(repo).getOrElse(source), RemotesApi.download(download))
  }

  def fetch(spark: SparkSession, e: Engine, repository: String, remote: String, download: String): FetchResult =
    sync(spark, e).fetch(repo(repository), remoteName(remote), RemotesApi.download(download))

  /** Copies the objects of `ref`'s tables (null: of every version) that `repository` knows only at other places. */
  def downloadObjects(spark: SparkSession, e: Engine, repository: String, ref: String): DownloadResult =
    sync(spark, e).download(repo(repository), Option(ref).map(_.trim).filter(_.nonEmpty).map(spec))

  /**
   * Fetches `remote`, then merges its branch `branch` (the ref `remotes/<remote>/<branch>`) into the local
   * branch of that name with the merge rules (a fast-forward when the local branch has not moved). A local
   * branch that does not exist yet is created at the remote's.
   */
  def pull(spark: SparkSession, e: Engine, repository: String, remote: String, branch: String,
           strategy: String, fastForward: String, message: String, author: String): MergeOutcome = {
    val r = repo(repository)
    val (name, b) = (remoteName(remote), branchOr(e, r, branch))
    val opts = MergeOptions(strategy, fastForward, dryRun = false, message, ApiSupport.author(spark, author), Map.empty,
      allowUnrelated = false, squash = false) // checked before anything is fetched
    sync(spark, e).fetch(r, name, download = false)
    val tracking = Ref.remoteBranch(name, b)
    if (!e.remotes.trackingRefs(r, Some(name)).exists(_.fullName == tracking))
      throw new RefNotFoundException(s"Remote '$name' of '$r' has no branch '$b' to pull.")
    // the local branch's move is the pull's in the reflog (the fetch above recorded the tracking refs' moves)
    e.recordedAs(Cause.Pull, s"from $tracking") {
      // a new local branch at the remote's head: reported as the fast-forward it is
      if (e.branchHeadOption(r, b).isEmpty) MergeOutcome.done(spark,
        MergeOutcome.FastForward, Some(e.refs.createBranch(r, b, Revision.Spec(tracking)).image),
        None, fastForward = true)
      else new Merger(spark, e).merge(r, tracking, b, opts)
    }
  }

  def push(spark: SparkSession, e: Engine, repository: String, remote: String, branch: String,
           force: Boolean, tags: Boolean): PushResult = {
    val r = repo(repository)
    sync(spark, e).push(r, remoteName(remote), branchOr(e, r, branch), force, tags)
  }

  /** Commits table `table` of repository `from` at `ref` (of remote `remote` when given) into `branch`, as `asTable`. */
  def importTable(spark: SparkSession, e: Engine, repository: String, from: String, table: String,
                  ref: String, asTable: String, branch: String, remote: String, message: String, author: String): String = {
    val r = repo(repository)
    val b = Option(branch).map(_.trim).filter(_.nonEmpty).getOrElse(e.defaultBranchOrConfig(r))
    val at = Option(ref).map(_.trim).filter(_.nonEmpty).map(spec).getOrElse(Revision.DefaultBranch)
    sync(spark, e).importTable(r, b, repo(from), table, at, Option(asTable).map(_.trim).filter(_.nonEmpty).getOrElse(table),
      Option(remote).map(remoteName), ApiSupport.author(spark, author), Option(message)).image.hash
  }

  /** A tracking ref a fetch changed: ref, old, new (null: none) and status (new, fast_forward, forced, deleted). */
  val RefUpdateSchema: StructType = StructType(Seq(StructField("ref", StringType, nullable = false),
    StructField("old", StringType), StructField("new", StringType), StructField("status", StringType, nullable = false)))

  val FetchSchema: StructType = StructType(Seq(
    StructField("repository", StringType, nullable = false), StructField("remote", StringType, nullable = false),
    StructField("images", LongType, nullable = false), StructField("objects", LongType, nullable = false),
    StructField("downloaded", LongType, nullable = false),
    StructField("refs", ArrayType(RefUpdateSchema, containsNull = false), nullable = false)))

  def fetchFrame(spark: SparkSession, f: FetchResult): DataFrame = frame(spark, FetchSchema, Seq(Row(f.repository, f.remote,
    f.images.toLong, f.objects.toLong, f.downloaded.toLong, f.refs.map(u => Row(u.ref, u.old.orNull, u.next.orNull, u.status)))))

  val DownloadSchema: StructType = StructType(Seq(
    StructField("repository", StringType, nullable = false), StructField("image", StringType, nullable = true),
    StructField("objects", LongType, nullable = false), StructField("downloaded", LongType, nullable = false)))

  def downloadFrame(spark: SparkSession, d: DownloadResult): DataFrame = frame(spark, DownloadSchema,
    Seq(Row(d.repository, d.image.orNull, d.objects.toLong, d.downloaded.toLong)))

  val PushSchema: StructType = StructType(Seq(
    StructField("repository", StringType, nullable = false), StructField("remote", StringType, nullable = false),
    StructField("branch", StringType, nullable = false), StructField("status", StringType, nullable = false),
    StructField("old", StringType, nullable = true), StructField("head", StringType, nullable = false),
    StructField("images", LongType, nullable = false), StructField("objects", LongType, nullable = false),
    StructField("uploaded", LongType, nullable = false), StructField("tags", ArrayType(StringType, containsNull = false), nullable = false)))

  def pushFrame(spark: SparkSession, p: PushResult): DataFrame = frame(spark, PushSchema, Seq(Row(p.repository, p.remote,
    p.branch, p.status, p.old.orNull, p.head, p.images.toLong, p.objects.toLong, p.uploaded.toLong, p.tags.toArray)))
}
