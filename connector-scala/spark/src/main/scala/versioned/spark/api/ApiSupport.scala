package versioned.spark.api

import java.sql.Timestamp
import scala.jdk.CollectionConverters._
import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types._
import versioned.core.{Engine, Names, Ref, Revision}
import versioned.spark.session.{Settings, VersionedOptions, Warehouses}

/** Helpers shared by the facade objects: option maps, engines, argument checks and small DataFrames. */
private[spark] object ApiSupport {
  /** A Java map from Python or Java (possibly null) as an immutable Scala map. */
  def options(javaOptions: java.util.Map[String, String]): Map[String, String] =
    Option(javaOptions).map(_.asScala.toMap).getOrElse(Map.empty).filter { case (_, v) => v != null }

  /** Only the options that locate the warehouse (per-call override of the Spark conf). */
  def locationOptions(opts: Map[String, String]): Map[String, String] = opts.filter { case (k, _) =>
    k.equalsIgnoreCase(VersionedOptions.Warehouse) || k.equalsIgnoreCase(VersionedOptions.MetastoreUrl) ||
      k.equalsIgnoreCase("defaultBranch")
  }

  def engine(spark: SparkSession, javaOptions: java.util.Map[String, String]): Engine =
    Warehouses.engine(spark, options(javaOptions))

  /**
   * The engine of the warehouse `javaOptions` locate, for an operation on repository `repo`, which must exist: where
   * there is no warehouse (an embedded metastore file that does not exist), `REPOSITORY_NOT_FOUND` without opening
   * the engine, which would create one. Only writes (and clones) create a warehouse; a read or a ref operation on a
   * mistyped warehouse path leaves nothing behind.
   */
  def engineFor(spark: SparkSession, javaOptions: java.util.Map[String, String], repo: String): Engine = {
    val config = Warehouses.config(spark, options(javaOptions))
    if (Warehouses.absent(spark, config)) throw new versioned.core.RepositoryNotFoundException(this.repo(repo))
    Warehouses.engine(spark, config)
  }

  /** Whether there may be a warehouse where `javaOptions` point (else a listing of it is empty, and opens nothing). */
  def warehouseMayExist(spark: SparkSession, javaOptions: java.util.Map[String, String]): Boolean =
    !Warehouses.absent(spark, Warehouses.config(spark, options(javaOptions)))

  /** Validates a repository name before it reaches the metastore. */
  def repo(name: String): String = Names.validate(Names.Repository, name)

  /** A revision given as a string: branch, tag, lock (`ns:name`), hash or prefix, with `~N` / `^N`. */
  def spec(revision: String): Revision = Revision.Spec(revision)

  def timestamp(ms: Long): Timestamp = new Timestamp(ms)

  val RefSchema: StructType = StructType(Seq(
    StructField("name", StringType, nullable = false),
    StructField("kind", StringType, nullable = false),
    StructField("image", StringType, nullable = false),
    StructField("created", TimestampType, nullable = false)))

  def refsFrame(spark: SparkSession, refs: Seq[Ref]): DataFrame =
    frame(spark, RefSchema, refs.sortBy(_.shortName).map(r => Row(r.shortName, r.kind, r.image, timestamp(r.createdMs))))

  def frame(spark: SparkSession, schema: StructType, rows: Seq[Row]): DataFrame =
    spark.createDataFrame(rows.asJava, schema)

  /** Author of a commit: explicit, else `spark.versioned.author`, else the JVM user. */
  def author(spark: SparkSession, explicit: String): String =
    Settings.of(spark).authorOr(Option(explicit))
}
