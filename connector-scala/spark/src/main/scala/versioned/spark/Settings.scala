package versioned.spark

import scala.util.Try
import org.apache.spark.network.util.JavaUtils
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.datasources.parquet.ParquetCompressionCodec
import versioned.core.Errors
import VersionedOptions._

/**
 * Every `spark.versioned.*` setting of a session, parsed and range-checked: the one reader of the
 * connector's Spark conf keys. [[Settings.of]] refuses an unknown `spark.versioned.*` key (naming the
 * closest known one) and an unparsable or out-of-range value with INVALID_OPTION, naming the key, the
 * value and what is allowed. Writes read it before they stage anything, scans when they are planned.
 *
 * Location settings (`warehouse`, `metastoreUrl`, `defaultBranch`) are None when unset or empty.
 */
final case class Settings(
    warehouse: Option[String],
    metastoreUrl: Option[String],
    defaultBranch: Option[String],
    author: Option[String],
    fragmentRows: Long,
    maxChain: Int,
    maxDiffRatio: Double,
    consolidateAfter: Int,
    backgroundCompaction: Boolean,
    compactionYieldMs: Long,
    compactionDutyCycle: Double,
    maxOverlayRows: Long,
    diffCacheBytes: Long,
    localCommitMaxRows: Long,
    localCommitMaxBytes: Long,
    diffCompression: String,
    beforeImages: Boolean = false)

object Settings {
  /** The session's settings (the SQL conf, which includes the SparkConf the session started with). */
  def of(spark: SparkSession): Settings = of(spark.conf.getAll)

  /** Settings from conf entries; keys outside `spark.versioned.` are ignored. */
  def of(conf: Map[String, String]): Settings = {
    validateConf(conf.keys)
    def string(key: String): Option[String] = conf.get(key).filter(_.nonEmpty)
    def num[T](key: String, default: T, expected: String)(parse: String => Option[T]): T =
      conf.get(key).map(v => parse(v.trim).getOrElse(throw invalid(key, v, expected))).getOrElse(default)
    def long(key: String, default: Long, min: Long): Long =
      num(key, default, s"an integer >= $min")(v => v.toLongOption.filter(_ >= min))
    def int(key: String, default: Int, min: Int): Int =
      num(key, default, s"an integer between $min and ${Int.MaxValue}")(v => v.toIntOption.filter(_ >= min))
    def bool(key: String, default: Boolean): Boolean = num(key, default, "true or false")(_.toLowerCase match {
      case "true" => Some(true)
      case "false" => Some(false)
      case _ => None
    })
    def bytes(key: String, default: Long): Long =
      num(key, default, "a byte size >= 0 such as 1048576, 512k, 64m or 1g")(v =>
        Try(JavaUtils.byteStringAsBytes(v)).toOption.filter(_ >= 0))
    Settings(
      warehouse = string(ConfWarehouse),
      metastoreUrl = string(ConfMetastoreUrl),
      defaultBranch = string(ConfDefaultBranch),
      author = conf.get(ConfAuthor),
      fragmentRows = long(ConfFragmentRows, DefaultFragmentRows, 1),
      maxChain = int(ConfMaxChain, DefaultMaxChain, 1),
      maxDiffRatio = num(ConfMaxDiffRatio, DefaultMaxDiffRatio, "a number > 0, e.g. 0.1")(v =>
        v.toDoubleOption.filter(d => d > 0 && !d.isInfinite)),
      consolidateAfter = int(ConfConsolidateAfter, DefaultConsolidateAfter, 2),
      backgroundCompaction = bool(ConfBackgroundCompaction, default = true),
      compactionYieldMs = long(ConfCompactionYieldMs, DefaultCompactionYieldMs, 0),
      compactionDutyCycle = num(ConfCompactionDutyCycle, DefaultCompactionDutyCycle, "a number > 0 and <= 1, e.g. 0.5")(v =>
        v.toDoubleOption.filter(d => d > 0 && d <= 1)),
      maxOverlayRows = long(ConfMaxOverlayRows, DefaultMaxOverlayRows, 0),
      diffCacheBytes = bytes(ConfDiffCacheBytes, DefaultDiffCacheBytes),
      localCommitMaxRows = long(ConfLocalCommitMaxRows, DefaultLocalCommitMaxRows, 0),
      localCommitMaxBytes = bytes(ConfLocalCommitMaxBytes, DefaultLocalCommitMaxBytes),
      diffCompression = conf.get(ConfDiffCompression).map { v =>
        val codec = v.trim.toLowerCase(java.util.Locale.ROOT)
        if (!ParquetCodecs.contains(codec))
          throw invalid(ConfDiffCompression, v, s"one of the Parquet codecs ${ParquetCodecs.mkString(", ")}")
        codec
      }.getOrElse(DefaultDiffCompression),
      beforeImages = bool(ConfBeforeImages, default = false))
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
