package versioned.spark

import org.apache.spark.sql.SparkSession
import versioned.core.{Engine, WarehouseConfig}

/** Builds the engine for a session from per-call options, falling back to the Spark conf. */
private[versioned] object Warehouses {
  def config(spark: SparkSession, options: Map[String, String]): WarehouseConfig = {
    val opts = options.map { case (k, v) => k.toLowerCase -> v }
    def pick(opt: String, conf: String): Option[String] =
      opts.get(opt.toLowerCase).orElse(spark.conf.getOption(conf)).filter(_.nonEmpty)
    val warehouse = pick(VersionedOptions.Warehouse, VersionedOptions.ConfWarehouse)
      .getOrElse(new java.io.File(VersionedOptions.DefaultWarehouse).getAbsolutePath)
    val branch = pick("defaultBranch", VersionedOptions.ConfDefaultBranch).getOrElse("main")
    pick(VersionedOptions.MetastoreUrl, VersionedOptions.ConfMetastoreUrl) match {
      case Some(url) => WarehouseConfig(warehouse, url, branch)
      case None => WarehouseConfig.embedded(warehouse).copy(defaultBranch = branch)
    }
  }

  def engine(spark: SparkSession, options: Map[String, String]): Engine = engine(spark, config(spark, options))

  /** The engine of a warehouse, reaching its object store with the session's Hadoop configuration. */
  def engine(spark: SparkSession, config: WarehouseConfig): Engine = Engine(config, spark.sparkContext.hadoopConfiguration)

  def fragmentRows(spark: SparkSession): Long =
    spark.conf.getOption(VersionedOptions.ConfFragmentRows).map(_.toLong).getOrElse(VersionedOptions.DefaultFragmentRows)

  def maxDiffRatio(spark: SparkSession): Double =
    spark.conf.getOption(VersionedOptions.ConfMaxDiffRatio).map(_.toDouble).getOrElse(VersionedOptions.DefaultMaxDiffRatio)

  def localCommitMaxRows(spark: SparkSession): Long = spark.conf.getOption(VersionedOptions.ConfLocalCommitMaxRows)
    .map(_.trim.toLong).getOrElse(VersionedOptions.DefaultLocalCommitMaxRows)

  def localCommitMaxBytes(spark: SparkSession): Long = spark.conf.getOption(VersionedOptions.ConfLocalCommitMaxBytes)
    .map(v => org.apache.spark.network.util.JavaUtils.byteStringAsBytes(v.trim))
    .getOrElse(VersionedOptions.DefaultLocalCommitMaxBytes)

  def maxChain(spark: SparkSession): Int =
    spark.conf.getOption(VersionedOptions.ConfMaxChain).map(_.toInt).getOrElse(VersionedOptions.DefaultMaxChain)

  def maxOverlayRows(spark: SparkSession): Long =
    spark.conf.getOption(VersionedOptions.ConfMaxOverlayRows).map(_.toLong).getOrElse(VersionedOptions.DefaultMaxOverlayRows)

  def diffCompression(spark: SparkSession): String =
    spark.conf.getOption(VersionedOptions.ConfDiffCompression).getOrElse(VersionedOptions.DefaultDiffCompression)

  def diffCacheBytes(spark: SparkSession): Long =
    spark.conf.getOption(VersionedOptions.ConfDiffCacheBytes).map(_.toLong).getOrElse(VersionedOptions.DefaultDiffCacheBytes)

  def consolidateAfter(spark: SparkSession): Int =
    spark.conf.getOption(VersionedOptions.ConfConsolidateAfter).map(_.toInt).getOrElse(VersionedOptions.DefaultConsolidateAfter)
}
