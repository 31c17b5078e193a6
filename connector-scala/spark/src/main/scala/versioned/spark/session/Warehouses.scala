package versioned.spark.session

import org.apache.spark.sql.SparkSession
import versioned.core.{Engine, Errors, WarehouseConfig}
import versioned.spark.fs.{LocalObjectFileSystem, LocalObjectFs}

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
    opts.get(VersionedOptions.Warehouse.toLowerCase).filter(_.trim.isEmpty).foreach { _ =>
      throw Errors.invalidOption(s"Option '${VersionedOptions.Warehouse}' is empty. Give the warehouse's location " +
        s"(a directory or an object store URI), or leave the option out to use ${VersionedOptions.ConfWarehouse}.")
    }
    val warehouse = absolute(pick(VersionedOptions.Warehouse, settings.warehouse)
      .getOrElse(VersionedOptions.DefaultWarehouse))
    val branch = pick(VersionedOptions.DefaultBranch, settings.defaultBranch).getOrElse("main")
    pick(VersionedOptions.MetastoreUrl, settings.metastoreUrl) match {
      case Some(url) => WarehouseConfig(warehouse, url, branch)
      case None =>
        // a scheme this JVM has no file system for (a typo such as fiel://, or s3a:// without its jars) is
        // OBJECT_STORE_UNSUPPORTED before the embedded metastore's rule (which needs a local warehouse) is applied
        if (warehouse.contains("://") && !warehouse.startsWith("file:"))
          versioned.core.ObjectStores.fileSystem(warehouse, spark.sparkContext.hadoopConfiguration)
        warnIfNotShared(spark, warehouse)
        WarehouseConfig.embedded(warehouse).copy(defaultBranch = branch)
    }
  }

  /**
   * A warehouse location as every JVM must see it: made absolute here, on the driver, once (a relative path would
   * be resolved by each executor against its own working directory, and its files staged where nothing finds
   * them). URIs with a scheme other than `file` are kept as given.
   */
  def absolute(location: String): String = {
    val scheme = "^([A-Za-z][A-Za-z0-9+.-]*):".r.findFirstMatchIn(location).map(_.group(1).toLowerCase)
    scheme match {
      case None => new java.io.File(location).getAbsolutePath
      case Some("file") if !location.startsWith("file:/") => new java.io.File(location.stripPrefix("file:")).getAbsolutePath
      case _ => location
    }
  }

  private val warned = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()

  /**
   * A local warehouse with the embedded SQLite metastore works on a cluster only while every executor shares the
   * driver's disk (one machine, or a shared mount): said once per warehouse when the master is not local.
   */
  private def warnIfNotShared(spark: SparkSession, warehouse: String): Unit = {
    val master = spark.sparkContext.master
    if (!master.startsWith("local") && warned.add(warehouse)) log.warn(s"versioned: warehouse $warehouse is a local " +
      s"directory with the embedded SQLite metastore, but the master is $master: executors write objects to their own " +
      "disk unless it is shared with the driver. On a cluster, use an object store (s3a://, hdfs://) and set " +
      s"${VersionedOptions.ConfMetastoreUrl} to a PostgreSQL database.")
  }

  private val log = org.slf4j.LoggerFactory.getLogger(getClass)

  /** Options that locate exactly this warehouse, for the engine's own reads of it. */
  def locationOf(config: WarehouseConfig): Map[String, String] = Map(VersionedOptions.Warehouse -> config.warehouse,
    VersionedOptions.MetastoreUrl -> config.metastoreUrl, VersionedOptions.DefaultBranch -> config.defaultBranch)

  def engine(spark: SparkSession, options: Map[String, String]): Engine = engine(spark, config(spark, options))

  /**
   * Whether there is no warehouse where `config` points (an embedded metastore file that does not exist), found
   * without opening the engine, which would create one; a store holding a warehouse whose metastore file is gone is
   * WAREHOUSE_MISMATCH, as the engine says.
   */
  def absent(spark: SparkSession, config: WarehouseConfig): Boolean = !config.mayExist && {
    versioned.core.WarehouseIdentity.requireMetastoreFile(config,
      new versioned.core.WarehouseStore(config, spark.sparkContext.hadoopConfiguration))
    true
  }

  /**
   * The engine of a warehouse, reaching its object store with the session's Hadoop configuration (in which the
   * local `FileContext` file system is installed when the SparkContext's first warehouse opens, unless
   * `spark.versioned.fs.javaPermissions` is false then).
   */
  def engine(spark: SparkSession, config: WarehouseConfig): Engine = {
    val hadoop = spark.sparkContext.hadoopConfiguration
    // the settings are read before the context is marked: settings that fail to parse leave it to the next engine
    if (!fsChecked.containsKey(spark.sparkContext) && Settings.of(spark).javaPermissions &&
      fsChecked.putIfAbsent(spark.sparkContext, java.lang.Boolean.TRUE) == null && LocalObjectFileSystem.install(hadoop))
      log.info("versioned: file: paths opened through Hadoop's FileContext (streaming checkpoints) set permissions " +
        s"through Java (${classOf[LocalObjectFs].getName}; spark.versioned.fs.javaPermissions=false turns this off)")
    Identity.install(Engine(config, hadoop))
  }

  /**
   * SparkContexts whose Hadoop configuration was considered for [[LocalObjectFileSystem.install]]: once each, when
   * the first warehouse opens (the setting is the context's, as the configuration it changes), not at every engine.
   */
  private val fsChecked = java.util.Collections.synchronizedMap(
    new java.util.WeakHashMap[org.apache.spark.SparkContext, java.lang.Boolean]())

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
