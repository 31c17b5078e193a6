package versioned.spark.safety

import versioned.core.{Engine, WarehouseConfig}
import versioned.spark.VersionedSparkSuite
import versioned.spark.session.VersionedOptions

/**
 * A suite whose warehouse is on the [[FaultyFileSystem]] (scheme `faulty:`, SQLite metastore in the
 * warehouse directory), so that a test can make the n-th file operation fail ([[Faults.arm]]); faults are
 * disarmed after each test. [[eng]] is an engine on that warehouse.
 */
abstract class FaultyWarehouseSuite extends VersionedSparkSuite {
  override protected def extraConf: Map[String, String] = Map("spark.hadoop.fs.faulty.impl" -> classOf[FaultyFileSystem].getName)

  private def location: String = s"faulty://${warehouse.getAbsolutePath}"
  private def metastoreUrl: String = s"jdbc:sqlite:${warehouse.getAbsolutePath}/metastore.db"

  override def beforeEach(): Unit = {
    super.beforeEach()
    spark.conf.set(VersionedOptions.ConfWarehouse, location)
    spark.conf.set(VersionedOptions.ConfMetastoreUrl, metastoreUrl)
  }

  override def afterEach(): Unit = {
    Faults.disarm(); Faults.stopRefusing()
    spark.conf.unset(VersionedOptions.ConfMetastoreUrl)
    super.afterEach()
  }

  protected def eng: Engine = Engine(WarehouseConfig(location, metastoreUrl), spark.sparkContext.hadoopConfiguration)
}
