package versioned.spark

import org.apache.spark.sql.SparkSession
import versioned.core.{Engine, WarehouseConfig}

/**
 * Builds the engine for a session from per-call options, falling back to the Spark conf. Every
 * setting is read through [[Settings]] (so an unknown or invalid `spark.versioned.*` key fails here).
 */
private[versioned] object Warehouses {
  def config(spark: SparkSession, options: Map[String, String]): WarehouseConfig = {
    val settings = Settings.of(spark)
    val opts = options.map { case (k, v) => k.toLowerCase -> v }
    def pick(opt: String, conf: Option[String]): Option[String] = opts.get(opt.toLowerCase) match {
      case Some(v) => Some(v).filter(_.nonEmpty)
      case None => conf
    }
    val warehouse = pick(VersionedOptions.Warehouse, settings.warehouse)
      .getOrElse(new java.io.File(VersionedOptions.DefaultWarehouse).getAbsolutePath)
    val branch = pick(VersionedOptions.DefaultBranch, settings.defaultBranch).getOrElse("main")
    pick(VersionedOptions.MetastoreUrl, settings.metastoreUrl) match {
      case Some(url) => WarehouseConfig(warehouse, url, branch)
      case None => WarehouseConfig.embedded(warehouse).copy(defaultBranch = branch)
    }
  }

  /** Options that locate exactly this warehouse, for the engine's own reads of it. */
  def locationOf(config: WarehouseConfig): Map[String, String] = Map(VersionedOptions.Warehouse -> config.warehouse,
    VersionedOptions.MetastoreUrl -> config.metastoreUrl, VersionedOptions.DefaultBranch -> config.defaultBranch)

  def engine(spark: SparkSession, options: Map[String, String]): Engine = engine(spark, config(spark, options))

  /** The engine of a warehouse, reaching its object store with the session's Hadoop configuration. */
  def engine(spark: SparkSession, config: WarehouseConfig): Engine = Engine(config, spark.sparkContext.hadoopConfiguration)

  // Each getter reads (and validates) all settings; see Settings.
  def fragmentRows(spark: SparkSession): Long = Settings.of(spark).fragmentRows

  def maxDiffRatio(spark: SparkSession): Double = Settings.of(spark).maxDiffRatio

  def localCommitMaxRows(spark: SparkSession): Long = Settings.of(spark).localCommitMaxRows

  def localCommitMaxBytes(spark: SparkSession): Long = Settings.of(spark).localCommitMaxBytes

  def maxChain(spark: SparkSession): Int = Settings.of(spark).maxChain

  def maxOverlayRows(spark: SparkSession): Long = Settings.of(spark).maxOverlayRows

  def diffCompression(spark: SparkSession): String = Settings.of(spark).diffCompression

  def diffCacheBytes(spark: SparkSession): Long = Settings.of(spark).diffCacheBytes

  def consolidateAfter(spark: SparkSession): Int = Settings.of(spark).consolidateAfter
}
