package versioned.spark

import versioned.spark.session.{Settings, TableHandle, TableIdent, TableSnapshot, VersionedOptions, Warehouses}

import java.util
import scala.jdk.CollectionConverters._
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{MetadataColumn, SupportsMetadataColumns, SupportsRead,
  SupportsRowLevelOperations, SupportsWrite, Table, TableCapability, TruncatableTable}
import org.apache.spark.sql.connector.catalog.constraints.Constraint
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, RowLevelOperationBuilder, RowLevelOperationInfo, WriteBuilder}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import versioned.core._
import versioned.spark.read.VersionedScanBuilder
import versioned.spark.rowlevel.{RowIdScanBuilder, VersionedRowLevelOperationBuilder}
import versioned.spark.write.VersionedWriteBuilder

/**
 * A table of a repository at one revision: an immutable value. [[withRevision]] and [[withBranch]]
 * return copies. Shared by the `versioned` format and the catalog.
 *
 * @param newSchema schema of a table that does not exist yet (first write)
 * @param pinned    an internal read's request ([[read.PinnedRead]]: hidden columns shown, maybe one
 *                  representation or some fragments only), taken from its token when the table is loaded
 * @param deferred  where a write of this value hands its staged rows instead of committing them (a transaction's
 *                  operation, [[write.DeferredWrites]])
 */
private[versioned] final case class VersionedTable(
    ident: TableIdent,
    config: WarehouseConfig,
    revision: Revision,
    branch: Option[String],
    options: Map[String, String],
    newSchema: Option[StructType] = None,
    pinned: Option[read.PinnedRead.Request] = None,
    deferred: Option[write.DeferredWrites.Handler] = None) extends Table with SupportsRead with SupportsWrite
  with SupportsRowLevelOperations with SupportsMetadataColumns with TruncatableTable with TableHandle {

  def engine: Engine = Warehouses.engine(SparkSession.active, config)
  def withRevision(r: Revision): VersionedTable = copy(revision = r)
  def withBranch(b: String): VersionedTable = copy(branch = Some(b), revision = Revision.Spec(Ref.branch(b)))

  private def flag(key: String) = options.exists { case (k, v) => k.equalsIgnoreCase(key) && v == "true" }
  private def includeHidden = pinned.exists(_.hidden)
  /** Loaded through the SQL catalog: Spark aligns INSERT data with the table's columns. */
  def fromCatalog: Boolean = flag(VersionedOptions.CatalogTable)

  /** The resolved table, or None when a write creates it. Resolution happens once per value. */
  lazy val snapshot: Option[TableSnapshot] = pinned.flatMap(p => p.version.map(p.applyTo)).orElse {
    // nothing to read where no warehouse is, and opening the engine would create one: a read never creates anything
    if (!config.mayExist) None else {
      val e = engine
      val image = revision match {
        case Revision.DefaultBranch if !e.repositoryExists(ident.repo) => None
        case Revision.DefaultBranch => e.branchHeadOption(ident.repo, branch.getOrElse(e.defaultBranch(ident.repo)))
        case r => Some(e.resolve(ident.repo, r))
      }
      image.flatMap(i => e.tableOption(ident.repo, i.hash, ident.table).map(TableSnapshot.of(e, ident.repo, i, _)))
        .map(s => pinned.fold(s)(_.applyTo(s)))
    }
  }

  def requireSnapshot: TableSnapshot = snapshot.getOrElse {
    if (!config.mayExist || !engine.repositoryExists(ident.repo)) throw new RepositoryNotFoundException(ident.repo)
    throw new TableNotFoundException(ident.repo, ident.table, describeRevision)
  }

  private def describeRevision: String = revision match {
    case Revision.Spec(s) => s"'$s'"
    case Revision.AsOf(ts, b) => s"${java.time.Instant.ofEpochMilli(ts)} on ${b.getOrElse("the default branch")}"
    case Revision.DefaultBranch => branch.map(b => s"branch '$b'").getOrElse("the default branch")
  }

  override def name(): String = ident.toString

  /** The image this value reads (None: a table a write creates, or a revision that does not resolve). */
  private def readImage: Option[String] = scala.util.Try(snapshot.map(_.image.hash)).toOption.flatten

  /**
   * Tables are equal when they are the same request (table, revision, options) and, when loaded by path rather than
   * through a catalog, read the same image. Spark matches reads against its cache by this equality: a catalog
   * table's cached reads are refreshed when its branch moves ([[catalog.CatalogCache]]); a read by path has no
   * name to refresh by, so a read of a branch that moved never matches a cached version the branch has left.
   */
  override def equals(other: Any): Boolean = other match {
    case t: VersionedTable => (this eq t) || productIterator.sameElements(t.productIterator) &&
      (fromCatalog || readImage == t.readImage)
    case _ => false
  }
  override def hashCode(): Int = scala.util.hashing.MurmurHash3.productHash(this)

  /** Key columns are never null, so they are reported non-nullable (Spark requires that of row ids). */
  override def schema(): StructType = snapshot.map { s =>
    val keys = s.layout.primaryKey.toSet
    val st = if (includeHidden) s.layout.physicalSchema else s.layout.schema
    StructType(st.fields.map(f => if (keys(f.name)) f.copy(nullable = false) else f))
  }.orElse(newSchema).getOrElse(requireSnapshot.layout.schema)

  override def properties(): util.Map[String, String] = snapshot.map { s =>
    Map("image" -> s.image.hash, "primaryKey" -> s.layout.primaryKey.mkString(","), "provider" -> "versioned")
  }.getOrElse(Map("provider" -> "versioned")).asJava

  override def capabilities(): util.Set[TableCapability] = (Set(
    TableCapability.BATCH_READ, TableCapability.BATCH_WRITE, TableCapability.TRUNCATE, TableCapability.OVERWRITE_BY_FILTER,
    TableCapability.STREAMING_WRITE) ++
    (if (fromCatalog) None else Some(TableCapability.ACCEPT_ANY_SCHEMA))).asJava

  /**
   * The primary key, as Spark's SQL declares one: NOT ENFORCED (Spark's parser takes no other characteristic for a
   * PRIMARY KEY, so SHOW CREATE TABLE prints DDL that runs); the connector's writes keep the keys unique themselves.
   */
  override def constraints(): Array[Constraint] = snapshot.filterNot(_.layout.hidden).map { s =>
    Array[Constraint](Constraint.primaryKey(s"${ident.table}_pk",
      s.layout.primaryKey.map(c => org.apache.spark.sql.connector.expressions.Expressions.column(s"`${c.replace("`", "``")}`")).toArray)
      .enforced(false).build())
  }.getOrElse(Array.empty)

  /**
   * Key-less tables expose their row identity as the metadata column `_vrowid`; keyed tables the values a
   * row had when read as `_vbefore` (for UPDATE and MERGE).
   */
  override def metadataColumns(): Array[MetadataColumn] = snapshot.map { s =>
    if (s.layout.hidden) Array[MetadataColumn](RowIdScanBuilder.column(s.layout))
    else read.BeforeValuesScan.column(s.layout).toArray
  }.getOrElse(Array.empty)

  /**
   * Validates the scan's options and the session's settings first: the format's reads take the read
   * options; catalog tables take only Spark's time-travel options (their version comes from the name,
   * VERSION AS OF or those options, never from `ref`).
   */
  override def newScanBuilder(opts: CaseInsensitiveStringMap): ScanBuilder = {
    val spark = SparkSession.active
    val scanOptions = opts.asCaseSensitiveMap().asScala.toMap
    if (fromCatalog) VersionedOptions.validate(scanOptions, VersionedTable.timeTravelOptions(spark),
      s"reads of catalog table ${ident} (select a version with VERSION AS OF, or `${ident.table}@<ref>`)")
    else VersionedOptions.validate(options ++ scanOptions, VersionedOptions.ReadOptions, "reads of the versioned format")
    Settings.of(spark).checkedForReads()
    val s = requireSnapshot
    if (s.layout.hidden && !includeHidden) new RowIdScanBuilder(s, schema())
    else new VersionedScanBuilder(s, schema())
  }

  override def newRowLevelOperationBuilder(info: RowLevelOperationInfo): RowLevelOperationBuilder =
    new VersionedRowLevelOperationBuilder(this, info)

  /**
   * TRUNCATE TABLE: one commit on this value's branch in which the table has no rows (its schema and key kept), as
   * an overwrite with no data is; a table with no rows commits nothing. A tag, lock or hash is IMMUTABLE_REF.
   */
  override def truncateTable(): Boolean = {
    val s = requireSnapshot
    write.Truncation.commit(this, s.layout.schema, deferred)
    true
  }

  /** A batch write, or a streaming query's micro-batch ([[stream.StreamWriteBuilder]], docs/STREAMING.md). */
  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder =
    if (stream.StreamWriteBuilder.streaming(info)) new stream.StreamWriteBuilder(this, info)
    else new VersionedWriteBuilder(this, info, deferred)
}

private[versioned] object VersionedTable {
  /** The table named by `path` with the revision named by read options. */
  def fromOptions(spark: SparkSession, path: String, options: Map[String, String],
                  newSchema: Option[StructType]): VersionedTable = {
    VersionedOptions.validate(options, VersionedOptions.FormatOptions, "the versioned format")
    val o = options.map { case (k, v) => k.toLowerCase -> v }
    def get(key: String) = o.get(key.toLowerCase)
    import VersionedOptions.{AsOf, Branch, Image, Ref}
    VersionedTable(TableIdent.parse(path), Warehouses.config(spark, options), Revision.of(get(Ref), get(Image), get(AsOf)),
      get(Branch), options, newSchema,
      get(VersionedOptions.Pinned).map(read.PinnedRead.request))
  }

  /** Spark's time-travel option keys (`versionAsOf`, `timestampAsOf` unless reconfigured). */
  def timeTravelOptions(spark: SparkSession): Seq[String] = Seq(
    spark.conf.getOption("spark.sql.timeTravelVersionKey").getOrElse("versionAsOf"),
    spark.conf.getOption("spark.sql.timeTravelTimestampKey").getOrElse("timestampAsOf"))
}
