package versioned.spark.api

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types._
import versioned.core.{Engine, Maintenance, Revision}
import versioned.spark.diff.{DiffSummary, TableDiff}
import versioned.spark.read.Verifier
import versioned.spark.write.Snapshots

/** Diffs, ref-driven snapshots (MMS5), verification and garbage collection. */
private[spark] object MaintenanceApi {
  import ApiSupport._

  def diff(spark: SparkSession, options: VersionedApi.Opts, table: String, fromRef: String, toRef: String): DataFrame =
    TableDiff.diff(spark, locationOptions(ApiSupport.options(options)), table, spec(fromRef), spec(toRef))

  /** [[versioned.spark.diff.Blame]] of `table` (`repo.table`) at `ref` (null: the default branch). */
  def blame(spark: SparkSession, options: VersionedApi.Opts, table: String, ref: String): DataFrame = {
    val opts = ApiSupport.options(options)
    val ident = versioned.spark.session.TableIdent.parse(table)
    versioned.spark.diff.Blame.frame(spark, engineFor(spark, options, ident.repo), locationOptions(opts), ident,
      Option(ref).map(spec).getOrElse(Revision.DefaultBranch))
  }

  def diffSummary(spark: SparkSession, options: VersionedApi.Opts, repository: String, fromRef: String, toRef: String,
                  table: String): DataFrame =
    diffSummary(spark, ApiSupport.engineFor(spark, options, repository), repository, spec(fromRef), Option(toRef).map(spec), Option(table))

  /** [[DiffSummary]] of `repository` from `from` to `to` (default: the head of the default branch). */
  def diffSummary(spark: SparkSession, e: Engine, repository: String, from: Revision, to: Option[Revision],
                  table: Option[String]): DataFrame =
    frame(spark, DiffSummary.Schema, versioned.spark.session.Jobs.described(spark, s"diff summary $repository")(
      DiffSummary.rows(spark, e, repo(repository), from, to.getOrElse(Revision.DefaultBranch), table)))

  val MaterializedSchema = StructType(Seq(
    StructField("image", StringType, nullable = false), StructField("table", StringType, nullable = false),
    StructField("fragments", IntegerType, nullable = false), StructField("objects", IntegerType, nullable = false)))

  def materialize(spark: SparkSession, options: VersionedApi.Opts, repository: String): DataFrame = {
    val done = Snapshots.materialize(spark, ApiSupport.engineFor(spark, options, repository), repo(repository), locationOptions(ApiSupport.options(options)))
    frame(spark, MaterializedSchema, done.map(m => Row(m.image, m.table, m.fragments, m.objects)))
  }

  val CompactedSchema = StructType(Seq(
    StructField("table", StringType, nullable = false), StructField("image", StringType, nullable = false),
    StructField("objects", IntegerType, nullable = false)))

  /**
   * Compaction of a branch head now ([[versioned.spark.write.Compactions.compactNow]]): waits for the
   * background compaction of its tables, then runs the policy before returning. `branch`/`table` may be null.
   */
  def compact(spark: SparkSession, options: VersionedApi.Opts, repository: String, branch: String, table: String): DataFrame = {
    val done = versioned.spark.write.Compactions.compactNow(spark, ApiSupport.engineFor(spark, options, repository), repo(repository),
      Option(branch).filter(_.nonEmpty), Option(table).filter(_.nonEmpty), locationOptions(ApiSupport.options(options)))
    frame(spark, CompactedSchema, done.map { case (t, image, n) => Row(t, image, n) })
  }

  /** Waits until no background compaction of this JVM is waiting or running; `timeoutMs` <= 0: no limit. */
  def awaitCompactions(timeoutMs: Long): Boolean = versioned.spark.write.Compactions.awaitIdle(timeoutMs)

  def evict(spark: SparkSession, options: VersionedApi.Opts, repository: String): Int =
    ApiSupport.engineFor(spark, options, repository).maintenance.evict(repo(repository)).size

  val CollectedSchema: StructType = StructType(Seq(
    StructField("kind", StringType, nullable = false), StructField("name", StringType, nullable = false),
    StructField("path", StringType, nullable = false), StructField("reason", StringType, nullable = false)))

  /**
   * Garbage collection of one repository (`repository` non-null) or of the whole warehouse (null);
   * `olderThanMs` < 0 means the default retention period.
   */
  def collectGarbage(spark: SparkSession, options: VersionedApi.Opts, repository: String, olderThanMs: Long,
                     force: Boolean, dryRun: Boolean): DataFrame =
    collectGarbage(spark, engine(spark, options), Option(repository), olderThanMs, force, dryRun)

  def collectGarbage(spark: SparkSession, e: Engine, repository: Option[String], olderThanMs: Long, force: Boolean,
                     dryRun: Boolean): DataFrame = {
    val retention = if (olderThanMs < 0) Maintenance.DefaultRetentionMs else olderThanMs
    val done = versioned.spark.session.Jobs.described(spark, s"gc ${repository.getOrElse("(warehouse)")}")(
      e.maintenance.collectGarbage(repository.map(repo), retention, force, dryRun))
    frame(spark, CollectedSchema, done.map(c => Row(c.kind, c.name, c.path, c.reason)))
  }

  def verify(spark: SparkSession, options: VersionedApi.Opts, repository: String, refs: java.util.List[String]): DataFrame = {
    val rs = Option(refs).map(l => scala.jdk.CollectionConverters.ListHasAsScala(l).asScala.toSeq).getOrElse(Seq.empty)
    verify(spark, ApiSupport.engineFor(spark, options, repository), repository, rs)
  }

  def verify(spark: SparkSession, e: Engine, repository: String, refs: Seq[String]): DataFrame =
    Verifier.run(spark, e, repo(repository), refs.filter(_ != null).map(_.trim).filter(_.nonEmpty))
}
