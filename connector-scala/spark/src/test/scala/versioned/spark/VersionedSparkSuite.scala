package versioned.spark

import versioned.spark.session.VersionedOptions

import java.io.File
import java.nio.file.Files
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite
import versioned.core.{Engine, WarehouseConfig}

/**
 * Base for Spark suites: one local SparkSession per suite (Spark 4.3's test jars are not published,
 * so this is the small equivalent of SharedSparkSession) and a fresh warehouse per test.
 */
abstract class VersionedSparkSuite extends AnyFunSuite with BeforeAndAfterAll with BeforeAndAfterEach {
  protected var spark: SparkSession = _
  protected var warehouse: File = _

  protected def extraConf: Map[String, String] = Map.empty

  override def beforeAll(): Unit = {
    super.beforeAll()
    val b = SparkSession.builder().master("local[2]").appName(getClass.getSimpleName)
      .config("spark.ui.enabled", "false")
      .config("spark.sql.shuffle.partitions", "4")
      .config("spark.default.parallelism", "2")
      .config(VersionedOptions.ConfFragmentRows, "50")
    extraConf.foreach { case (k, v) => b.config(k, v) }
    spark = b.getOrCreate()
  }

  override def afterAll(): Unit = {
    try if (spark != null) spark.stop() finally super.afterAll()
  }

  /**
   * With `VERSIONED_TEST_METASTORE=postgresql` (and `VERSIONED_TEST_POSTGRES_URL`), every test's warehouse has its
   * metastore in a fresh PostgreSQL database instead of the embedded SQLite file: `bin/test` runs the
   * concurrency suites so, since READ COMMITTED shows races SQLite's serialized writers never do.
   */
  private val onPostgres: Option[String] =
    if (sys.env.get("VERSIONED_TEST_METASTORE").contains("postgresql")) versioned.core.TestMetastores.postgresAdminUrl else None
  private var database: Option[(String, String)] = None

  override def beforeEach(): Unit = {
    super.beforeEach()
    warehouse = Files.createTempDirectory("versioned-test").toFile
    spark.conf.set(VersionedOptions.ConfWarehouse, warehouse.getAbsolutePath)
    database = onPostgres.map(versioned.core.TestMetastores.createDatabase)
    database.fold(spark.conf.unset(VersionedOptions.ConfMetastoreUrl))(d => spark.conf.set(VersionedOptions.ConfMetastoreUrl, d._2))
  }

  override def afterEach(): Unit = {
    try {
      awaitCompaction(); deleteRecursively(warehouse)
      for { admin <- onPostgres; (db, _) <- database } versioned.core.TestMetastores.dropDatabase(admin, db)
    } finally super.afterEach()
  }

  /**
   * Waits for the background compaction of every commit so far (commits compact off the commit path,
   * `write.Compactions`): tests that look at compacted representations call it (the write helpers do).
   */
  protected def awaitCompaction(): Unit =
    assert(versioned.spark.write.Compactions.awaitIdle(300000L), "background compaction did not finish in 5 minutes")

  private def deleteRecursively(f: File): Unit = {
    if (f.isDirectory) Option(f.listFiles()).toSeq.flatten.foreach(deleteRecursively)
    f.delete()
  }

  protected def engine: Engine = database.fold(Engine(WarehouseConfig.embedded(warehouse.getAbsolutePath))) { case (_, url) =>
    Engine(WarehouseConfig(warehouse.getAbsolutePath, url), spark.sparkContext.hadoopConfiguration)
  }

  protected def read(table: String, opts: (String, String)*): DataFrame =
    spark.read.format("versioned").options(opts.toMap).load(table)

  /** An append, then [[awaitCompaction]] (so its compacted form, if the policy chose one, is recorded). */
  protected def write(df: DataFrame, table: String, opts: (String, String)*): Unit = {
    df.write.format("versioned").mode("append").options(opts.toMap).save(table)
    awaitCompaction()
  }

  /** An append that does not wait for its background compaction (tests of compaction racing other work). */
  protected def append(df: DataFrame, table: String, opts: (String, String)*): Unit =
    df.write.format("versioned").mode("append").options(opts.toMap).save(table)

  /** An overwrite, then [[awaitCompaction]]. */
  protected def overwrite(df: DataFrame, table: String, opts: (String, String)*): Unit = {
    df.write.format("versioned").mode("overwrite").options(opts.toMap).save(table)
    awaitCompaction()
  }

  protected def rows(df: DataFrame): Set[Row] = df.collect().toSet
  protected def sortedRows(df: DataFrame): Seq[Row] = df.collect().toSeq.sortBy(_.toString)
}
