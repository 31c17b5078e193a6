package versioned.spark.session

import org.apache.spark.sql.SparkSession
import VersionedOptions._

/**
 * Every `spark.versioned.*` setting of a session: the one reader of the connector's Spark conf keys, each
 * declared once in [[Setting]].
 * [[Settings.of]] refuses an unknown `spark.versioned.*` key (naming the closest known one). Each value is parsed
 * and range-checked when it is first used, with INVALID_OPTION naming the key, the value and what is allowed: a bad
 * `fragment.targetRows` fails the write that needs it, not a listing of branches.
 *
 * Location settings (`warehouse`, `metastoreUrl`, `defaultBranch`) are None when unset or empty.
 */
final class Settings private (conf: Map[String, String]) {
  private def get[T](s: Setting[T]): T = s.in(conf)

  /** Parses every setting a read uses (a bad one is INVALID_OPTION before the read is planned). */
  def checkedForReads(): Settings = { maxOverlayRows; diffCacheBytes; this }

  /**
   * Parses every setting a write may use, itself or in the compaction after it (a bad one is INVALID_OPTION before
   * anything is staged or committed).
   */
  def checkedForWrites(): Settings = { Setting.all.foreach(get(_)); this }

  /** These settings with one more entry (a policy evaluated under another value). */
  def updated(key: String, value: String): Settings = Settings.of(conf + (key -> value))

  def warehouse: Option[String] = get(Setting.Warehouse)
  def metastoreUrl: Option[String] = get(Setting.MetastoreUrl)
  def defaultBranch: Option[String] = get(Setting.DefaultBranch)
  def author: Option[String] = get(Setting.Author)
  def user: Option[String] = get(Setting.User)
  def client: Option[String] = get(Setting.Client)
  def fragmentRows: Long = get(Setting.FragmentRows)
  def maxChain: Int = get(Setting.MaxChain)
  def maxDiffRatio: Double = get(Setting.MaxDiffRatio)
  def consolidateAfter: Int = get(Setting.ConsolidateAfter)
  def backgroundCompaction: Boolean = get(Setting.BackgroundCompaction)
  def compactionYieldMs: Long = get(Setting.CompactionYieldMs)
  def compactionDutyCycle: Double = get(Setting.CompactionDutyCycle)
  def maxOverlayRows: Long = get(Setting.MaxOverlayRows)
  def diffCacheBytes: Long = get(Setting.DiffCacheBytes)
  def localCommitMaxRows: Long = get(Setting.LocalCommitMaxRows)
  def sharedDiffMaxRows: Long = get(Setting.SharedDiffMaxRows)
  def tailFragments: Boolean = get(Setting.TailFragments)
  def localCommitMaxBytes: Long = get(Setting.LocalCommitMaxBytes)
  def diffCompression: String = get(Setting.DiffCompression)
  def beforeImages: Boolean = get(Setting.BeforeImages)
  def javaPermissions: Boolean = get(Setting.JavaPermissions)

  /** The author of a commit: `explicit` when given, else `spark.versioned.author`, else `spark.versioned.user`, else the JVM's user. */
  def authorOr(explicit: Option[String]): String =
    explicit.filter(_.nonEmpty).orElse(author).orElse(user).getOrElse(System.getProperty("user.name", "unknown"))
}

object Settings {
  /** The session's settings (the SQL conf, which includes the SparkConf the session started with). */
  def of(spark: SparkSession): Settings = of(spark.conf.getAll)

  /** Settings from conf entries; keys outside `spark.versioned.` are ignored; an unknown key of ours is an error. */
  def of(conf: Map[String, String]): Settings = {
    validateConf(conf.keys)
    new Settings(conf.filter(_._1.startsWith(ConfPrefix)))
  }

  /** The credentials the session gives for remote `remote`'s metastore (never stored in a metastore). */
  def remoteCredentials(spark: SparkSession, remote: String): versioned.core.RemoteCredentials = {
    val conf = spark.conf.getAll
    validateConf(conf.keys)
    versioned.core.RemoteCredentials(conf.get(confRemoteUser(remote)).filter(_.nonEmpty),
      conf.get(confRemotePassword(remote)).filter(_.nonEmpty))
  }

  /** Parquet codecs Spark can write ([[Setting.ParquetCodecs]]). */
  val ParquetCodecs: Seq[String] = Setting.ParquetCodecs
}
