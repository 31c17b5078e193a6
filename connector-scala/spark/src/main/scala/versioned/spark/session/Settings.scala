package versioned.spark.session

import scala.util.Try
import org.apache.spark.network.util.JavaUtils
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.datasources.parquet.ParquetCompressionCodec
import versioned.core.Errors
import VersionedOptions._

/**
 * Every `spark.versioned.*` setting of a session: the one reader of the connector's Spark conf keys.
 * [[Settings.of]] refuses an unknown `spark.versioned.*` key (naming the closest known one). Each value is parsed
 * and range-checked when it is first used, with INVALID_OPTION naming the key, the value and what is allowed: a bad
 * `fragment.targetRows` fails the write that needs it, not a listing of branches.
 *
 * Location settings (`warehouse`, `metastoreUrl`, `defaultBranch`) are None when unset or empty.
 */
final class Settings private (conf: Map[String, String]) {
  import Settings.invalid
  private def string(key: String): Option[String] = conf.get(key).filter(_.nonEmpty)
  private def num[T](key: String, default: T, expected: String)(parse: String => Option[T]): T =
    conf.get(key).map(v => parse(v.trim).getOrElse(throw invalid(key, v, expected))).getOrElse(default)
  private def long(key: String, default: Long, min: Long): Long =
    num(key, default, s"an integer >= $min")(v => v.toLongOption.filter(_ >= min))
  private def int(key: String, default: Int, min: Int): Int =
    num(key, default, s"an integer between $min and ${Int.MaxValue}")(v => v.toIntOption.filter(_ >= min))
  private def bool(key: String, default: Boolean): Boolean = num(key, default, "true or false")(_.toLowerCase match {
    case "true" => Some(true)
    case "false" => Some(false)
    case _ => None
  })
  private def bytes(key: String, default: Long): Long =
    num(key, default, "a byte size >= 0 such as 1048576, 512k, 64m or 1g")(v =>
      Try(JavaUtils.byteStringAsBytes(v)).toOption.filter(_ >= 0))

  /** Parses every setting a read uses (a bad one is INVALID_OPTION before the read is planned). */
  def checkedForReads(): Settings = { maxOverlayRows; diffCacheBytes; this }

  /**
   * Parses every setting a write may use, itself or in the compaction after it (a bad one is INVALID_OPTION before
   * anything is staged or committed).
   */
  def checkedForWrites(): Settings = {
    checkedForReads(); fragmentRows; maxChain; maxDiffRatio; consolidateAfter; backgroundCompaction; compactionYieldMs
    compactionDutyCycle; localCommitMaxRows; localCommitMaxBytes; diffCompression; beforeImages; this
  }

  /** These settings with one more entry (a policy evaluated under another value). */
  def updated(key: String, value: String): Settings = Settings.of(conf + (key -> value))

  def warehouse: Option[String] = string(ConfWarehouse)
  def metastoreUrl: Option[String] = string(ConfMetastoreUrl)
  def defaultBranch: Option[String] = string(ConfDefaultBranch)
  def author: Option[String] = conf.get(ConfAuthor)
  def fragmentRows: Long = long(ConfFragmentRows, DefaultFragmentRows, 1)
  def maxChain: Int = int(ConfMaxChain, DefaultMaxChain, 1)
  def maxDiffRatio: Double = num(ConfMaxDiffRatio, DefaultMaxDiffRatio, "a number > 0, e.g. 0.1")(v =>
    v.toDoubleOption.filter(d => d > 0 && !d.isInfinite))
  def consolidateAfter: Int = int(ConfConsolidateAfter, DefaultConsolidateAfter, 2)
  def backgroundCompaction: Boolean = bool(ConfBackgroundCompaction, default = true)
  def compactionYieldMs: Long = long(ConfCompactionYieldMs, DefaultCompactionYieldMs, 0)
  def compactionDutyCycle: Double = num(ConfCompactionDutyCycle, DefaultCompactionDutyCycle, "a number > 0 and <= 1, e.g. 0.5")(v =>
    v.toDoubleOption.filter(d => d > 0 && d <= 1))
  def maxOverlayRows: Long = long(ConfMaxOverlayRows, DefaultMaxOverlayRows, 0)
  def diffCacheBytes: Long = bytes(ConfDiffCacheBytes, DefaultDiffCacheBytes)
  def localCommitMaxRows: Long = long(ConfLocalCommitMaxRows, DefaultLocalCommitMaxRows, 0)
  def localCommitMaxBytes: Long = bytes(ConfLocalCommitMaxBytes, DefaultLocalCommitMaxBytes)
  def diffCompression: String = conf.get(ConfDiffCompression).map { v =>
    val codec = v.trim.toLowerCase(java.util.Locale.ROOT)
    if (!Settings.ParquetCodecs.contains(codec))
      throw invalid(ConfDiffCompression, v, s"one of the Parquet codecs ${Settings.ParquetCodecs.mkString(", ")}")
    codec
  }.getOrElse(DefaultDiffCompression)
  def beforeImages: Boolean = bool(ConfBeforeImages, default = false)

  /** The author of a commit: `explicit` when given, else `spark.versioned.author`, else the JVM's user. */
  def authorOr(explicit: Option[String]): String =
    explicit.filter(_.nonEmpty).orElse(author).getOrElse(System.getProperty("user.name", "unknown"))
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

  /** Parquet codecs Spark can write with its bundled libraries (`none` is Spark's alias of `uncompressed`). */
  val ParquetCodecs: Seq[String] = {
    import scala.jdk.CollectionConverters._
    ParquetCompressionCodec.availableCodecs.asScala.map(_.lowerCaseName()).toSeq :+ "none"
  }

  private def invalid(key: String, value: String, expected: String) =
    Errors.invalidOption(s"Invalid value '$value' for setting $key: expected $expected.")
}
