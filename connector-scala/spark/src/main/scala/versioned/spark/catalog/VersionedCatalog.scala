package versioned.spark.catalog

import java.util
import scala.jdk.CollectionConverters._
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.{NoSuchNamespaceException, NoSuchTableException, TableAlreadyExistsException}
import org.apache.spark.sql.connector.catalog._
import org.apache.spark.sql.connector.catalog.procedures.UnboundProcedure
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import versioned.core._
import versioned.spark.VersionedTable
import versioned.spark.session.TableIdent
import versioned.spark.session.{VersionedOptions, Warehouses}
import versioned.spark.catalog.procedures.Procedures

/**
 * The SQL catalog: `spark.sql.catalog.<name>=versioned.spark.catalog.VersionedCatalog`, with optional
 * catalog options `warehouse`, `metastoreUrl` and `defaultBranch` (each falls back to the session's
 * `spark.versioned.*` conf). Namespaces are repositories; tables resolve to the same
 * [[VersionedTable]] the `versioned` format uses, through the same resolver. See docs/SQL.md.
 */
class VersionedCatalog extends StagingTableCatalog with SupportsNamespaces with ProcedureCatalog {
  private var catalogName: String = "versioned"
  private var catalogOptions: Map[String, String] = Map.empty

  override def initialize(name: String, options: CaseInsensitiveStringMap): Unit = {
    catalogName = name
    catalogOptions = options.asCaseSensitiveMap().asScala.toMap
    VersionedOptions.validate(catalogOptions, VersionedOptions.CatalogOptions,
      s"catalog '$name' (spark.sql.catalog.$name.<option>)")
  }

  override def name(): String = catalogName

  /** Resolved on every call, so a session's `spark.versioned.*` conf changes are picked up. */
  private[catalog] def config: WarehouseConfig = Warehouses.config(SparkSession.active, catalogOptions)
  private[catalog] def engine: Engine = Warehouses.engine(SparkSession.active, config)

  /**
   * Whether repository `repo` exists; false, without opening the engine (which would create a warehouse), where there
   * is no warehouse: looking up names never creates anything.
   */
  private def hasRepository(repo: String): Boolean = !Warehouses.absent(SparkSession.active, config) && engine.repositoryExists(repo)
  private def locationOptions(c: WarehouseConfig): Map[String, String] =
    Map(VersionedOptions.Warehouse -> c.warehouse, VersionedOptions.MetastoreUrl -> c.metastoreUrl)
  private def ddl: TableDdl = new TableDdl(engine, locationOptions(config))

  override def capabilities(): util.Set[TableCatalogCapability] =
    Set(TableCatalogCapability.SUPPORT_TABLE_CONSTRAINT).asJava

  // ---------------------------------------------------------------- tables

  private def tableTarget(ident: Identifier): TableTarget = CatalogNames.parse(ident) match {
    case t: TableTarget => t
    case m: MetaTarget => throw Errors.unsupported(s"'${ident.name()}' is a read-only metadata table.")
  }

  private def baseTable(t: TableTarget): VersionedTable = {
    val c = config
    val table = VersionedTable(TableIdent(t.repo, t.table), c, Revision.DefaultBranch, None,
      locationOptions(c) + (VersionedOptions.CatalogTable -> "true"))
    t.ref match {
      case None => table
      case Some(b) if engine.branchHeadOption(t.repo, b).isDefined => table.withBranch(b)
      case Some(r) => table.copy(revision = Revision.Spec(r), branch = Some(r))
    }
  }

  /** Loads a table or metadata table; `travel` (given the repository and the `@ref` of the name) selects a version. */
  private def load(ident: Identifier, travel: Option[(String, Option[String]) => Revision]): org.apache.spark.sql.connector.catalog.Table = {
    val target = try CatalogNames.parse(ident) catch {
      case _: InvalidNameException if travel.isEmpty && !ident.name().contains('$') => throw new NoSuchTableException(ident)
    }
    if (!hasRepository(target.repo)) throw new NoSuchTableException(ident)
    target match {
      case m: MetaTarget =>
        val rev = travel.map(_(m.repo, m.ref)).orElse(m.ref.map(Revision.Spec)).getOrElse(Revision.DefaultBranch)
        if (m.kind == MetaKind.Blame) BlameTable.load(engine, locationOptions(config), m, rev)
        else MetadataTable.load(engine, m, rev)
      case t: TableTarget =>
        // an INSERT, UPDATE or MERGE of a null key raises NULL_PRIMARY_KEY, not Spark's generic error
        versioned.spark.write.NullKeys.register(SparkSession.active)
        CatalogCache.follow(engine, catalogName)
        val table = travel.map(f => baseTable(t).withRevision(f(t.repo, t.ref))).getOrElse(baseTable(t))
        if (table.snapshot.isEmpty) {
          if (travel.isEmpty) throw new NoSuchTableException(ident)
          table.requireSnapshot
        }
        table
    }
  }

  override def loadTable(ident: Identifier): Table = load(ident, None)

  override def loadTable(ident: Identifier, version: String): Table = {
    if (version == null || version.trim.isEmpty) throw new InvalidInputException(ErrorClass.InvalidRevision,
      "VERSION AS OF needs a branch, tag, lock ('namespace:name'), image hash or prefix, optionally with ~N or ^N, " +
        "or a commit number (the change feed's _commit_version).")
    val v = version.trim
    // `t@ref` VERSION AS OF v names two versions: refused (as Spark refuses a version and a timestamp together)
    scala.util.Try(CatalogNames.parse(ident)).toOption match {
      case Some(t: TableTarget) if t.ref.isDefined => throw new InvalidInputException(ErrorClass.InvalidRevision,
        s"`${ident.name()}` already names revision '${t.ref.get}'; VERSION AS OF '$v' names another. Give one: " +
          s"`${t.table}@$v`, or `${t.table}` VERSION AS OF '$v'.")
      case _ =>
    }
    // all digits: a revision if one resolves, else a commit sequence number (`_commit_version` of the change feed),
    // by the change feed's own rule, so the numbers `CHANGES FROM VERSION` accepts and reports work here too
    if (v.forall(Character.isDigit))
      load(ident, Some((repo, _) => Revision.Spec(versioned.spark.diff.ChangeFeed.resolveVersion(engine, repo, v).image.hash)))
    else load(ident, Some((_, _) => Revision.Spec(v)))
  }

  /** TIMESTAMP AS OF: Spark passes microseconds; the newest image at or before it on the (qualified) branch. */
  override def loadTable(ident: Identifier, timestamp: Long): Table =
    load(ident, Some((_, ref) => Revision.AsOf(Math.floorDiv(timestamp, 1000L), ref)))

  /**
   * Spark's change feed (`CHANGES FROM VERSION ...`, `DataFrameReader.changes`): the row changes of the
   * commits of a range of the table's first-parent history (see [[VersionedChangelog]] and docs/SQL.md).
   * The range ends by default at the head of the branch the name selects (`t@branch`) or the default branch.
   */
  override def loadChangelog(ident: Identifier, context: ChangelogContext, options: CaseInsensitiveStringMap): Changelog = {
    val t = tableTarget(ident)
    val e = engine
    if (!e.repositoryExists(t.repo)) throw new NoSuchTableException(ident)
    val head = () => e.resolve(t.repo, t.ref.map(Revision.Spec).getOrElse(Revision.DefaultBranch))
    val explicitEnd = context.range() match {
      case v: ChangelogRange.VersionRange => v.endingVersion().isPresent
      case _ => false
    }
    if (!explicitEnd && e.tableOption(t.repo, head().hash, t.table).isEmpty) throw new NoSuchTableException(ident)
    VersionedChangelog.load(e, locationOptions(config), s"$catalogName.${t.repo}.${ident.name()}",
      TableIdent(t.repo, t.table), context, head())
  }

  override def tableExists(ident: Identifier): Boolean =
    try { loadTable(ident); true } catch {
      case _: NoSuchTableException | _: NotFoundException => false
    }

  override def listTables(namespace: Array[String]): Array[Identifier] = {
    val repo = requireRepo(namespace)
    val e = engine
    e.branchHeadOption(repo, e.defaultBranch(repo)).toSeq
      .flatMap(h => e.tables(repo, h.hash)).map(t => Identifier.of(namespace, t.name)).toArray
  }

  override def createTable(ident: Identifier, info: TableInfo): Table = {
    val t = createTarget(ident, info.partitions(), info.properties())
    ddl.createEmpty(t, info.schema(), TableDdl.primaryKeyOf(info.constraints(), info.properties()), replace = false)
    loadTable(ident)
  }

  override def createTable(ident: Identifier, columns: Array[Column], partitions: Array[org.apache.spark.sql.connector.expressions.Transform],
                           properties: util.Map[String, String]): Table =
    createTable(ident, new TableInfo.Builder().withColumns(columns).withPartitions(partitions)
      .withProperties(properties).build())

  private def createTarget(ident: Identifier, partitions: Array[org.apache.spark.sql.connector.expressions.Transform],
                           properties: util.Map[String, String]): TableTarget = {
    val t = tableTarget(ident)
    if (!hasRepository(t.repo)) throw new NoSuchNamespaceException(ident.namespace())
    requireSupported(partitions, properties)
    if (tableExists(ident)) throw new TableAlreadyExistsException(ident)
    t
  }

  /**
   * PARTITIONED BY and a provider other than `versioned` are refused, whichever statement creates or replaces the table (a DataFrame's
   * `saveAsTable` without `format("versioned")` passes the session's default source, `parquet`).
   */
  private def requireSupported(partitions: Array[org.apache.spark.sql.connector.expressions.Transform],
                               properties: util.Map[String, String]): Unit = {
    if (partitions != null && partitions.nonEmpty) {
      val clause = if (partitions.exists(_.name() == "cluster_by")) "CLUSTER BY" else "PARTITIONED BY"
      throw Errors.unsupported(s"$clause is not supported: versioned tables are range-partitioned by primary key " +
        "automatically (the key's order is their clustering).")
    }
    Option(properties).flatMap(p => Option(p.get(TableCatalog.PROP_PROVIDER))).filterNot(_.equalsIgnoreCase("versioned"))
      .foreach(p => throw Errors.unsupported(s"Catalog $catalogName only holds versioned tables, not USING $p. In SQL " +
        "leave USING out (or write USING versioned); from a DataFrame use df.writeTo(...).create() or " +
        "df.write.format(\"versioned\").saveAsTable(...). Nothing was created."))
    val props = Option(properties).map(_.asScala.toMap).getOrElse(Map.empty)
    Option(props.getOrElse(TableCatalog.PROP_LOCATION, null)).foreach(l => throw Errors.unsupported(s"LOCATION '$l' is " +
      s"not supported: a versioned table's objects live in its warehouse (the catalog's warehouse setting), shared " +
      "by its branches and versions. Leave LOCATION out. Nothing was created."))
    Option(props.getOrElse(TableCatalog.PROP_COMMENT, null)).foreach(_ => throw Errors.unsupported("A table COMMENT " +
      "is not kept by versioned tables (column comments are). Leave it out, or put it in the commit message. Nothing " +
      "was created."))
    // what Spark sets itself, the key, the write options of saveAsTable, and what properties() reports (SHOW CREATE
    // TABLE prints them back)
    val kept = Set(TableCatalog.PROP_PROVIDER, TableCatalog.PROP_OWNER, TableCatalog.PROP_EXTERNAL,
      TableCatalog.PROP_IS_MANAGED_LOCATION, VersionedOptions.PrimaryKey, "image")
    // OPTIONS (...) of CREATE TABLE, and saveAsTable's write options: the format's options, checked as a write's are
    VersionedOptions.validate(props.collect { case (k, v) if k.startsWith(TableCatalog.OPTION_PREFIX) =>
      k.stripPrefix(TableCatalog.OPTION_PREFIX) -> v }, VersionedOptions.WriteOptions, "a versioned table's OPTIONS")
    val custom = props.keys.filterNot(k => kept.contains(k) || k.startsWith(TableCatalog.OPTION_PREFIX)).toSeq.sorted
    if (custom.nonEmpty) throw Errors.unsupported(s"Table propert${if (custom.size == 1) "y" else "ies"} " +
      s"${custom.map(k => s"'$k'").mkString(", ")} ${if (custom.size == 1) "is" else "are"} not kept by versioned " +
      s"tables, which take only '${VersionedOptions.PrimaryKey}' (or a PRIMARY KEY constraint). Remove them. Nothing " +
      "was created.")
  }

  private def staged(ident: Identifier, info: TableInfo, replace: Boolean): StagedTable = {
    val t = tableTarget(ident)
    if (!replace) createTarget(ident, info.partitions(), info.properties())
    else if (!hasRepository(t.repo)) throw new NoSuchNamespaceException(ident.namespace())
    else requireSupported(info.partitions(), info.properties())
    // validated now; the key as the schema spells it
    val pk = versioned.spark.format.TableLayout.create(info.schema(), TableDdl.primaryKeyOf(info.constraints(), info.properties())).primaryKey
    new StagedVersionedTable(baseTable(t), t, info.schema(), pk, replace, ddl)
  }

  override def stageCreate(ident: Identifier, info: TableInfo): StagedTable = staged(ident, info, replace = false)

  override def stageReplace(ident: Identifier, info: TableInfo): StagedTable = {
    if (!tableExists(ident)) throw new NoSuchTableException(ident)
    staged(ident, info, replace = true)
  }

  override def stageCreateOrReplace(ident: Identifier, info: TableInfo): StagedTable = staged(ident, info, replace = true)

  override def alterTable(ident: Identifier, changes: TableChange*): Table = {
    val t = tableTarget(ident)
    if (!tableExists(ident)) throw new NoSuchTableException(ident)
    ddl.alter(t, changes)
    loadTable(ident)
  }

  override def dropTable(ident: Identifier): Boolean = CatalogNames.parse(ident) match {
    case t: TableTarget => hasRepository(t.repo) && ddl.drop(t)
    case _: MetaTarget => throw Errors.unsupported(s"'${ident.name()}' is a read-only metadata table.")
  }

  override def renameTable(oldIdent: Identifier, newIdent: Identifier): Unit = {
    if (!tableExists(oldIdent)) throw new NoSuchTableException(oldIdent)
    val ns = newIdent.namespace() match {
      case Array() => oldIdent.namespace()
      case Array(c, r) if c.equalsIgnoreCase(catalogName) => Array(r)
      case other => other
    }
    val to = tableTarget(Identifier.of(ns, newIdent.name()))
    ddl.rename(tableTarget(oldIdent), to)
  }

  // ---------------------------------------------------------------- namespaces (repositories)

  private def requireRepo(namespace: Array[String]): String = {
    val repo = try CatalogNames.repoOf(namespace) catch { case _: InvalidNameException => throw new NoSuchNamespaceException(namespace) }
    if (!hasRepository(repo)) throw new NoSuchNamespaceException(namespace)
    repo
  }

  override def listNamespaces(): Array[Array[String]] =
    if (Warehouses.absent(SparkSession.active, config)) Array.empty else engine.repositories().map(r => Array(r)).toArray

  override def listNamespaces(namespace: Array[String]): Array[Array[String]] =
    if (namespace.isEmpty) listNamespaces() else { requireRepo(namespace); Array.empty }

  override def namespaceExists(namespace: Array[String]): Boolean =
    namespace.length == 1 && scala.util.Try(hasRepository(namespace(0))).getOrElse(false)

  override def loadNamespaceMetadata(namespace: Array[String]): util.Map[String, String] = {
    val repo = requireRepo(namespace)
    Map("defaultBranch" -> engine.defaultBranch(repo), "branches" -> engine.refs.branches(repo).map(_.shortName).mkString(","),
      SupportsNamespaces.PROP_LOCATION -> config.warehouse).asJava
  }

  override def createNamespace(namespace: Array[String], metadata: util.Map[String, String]): Unit = {
    val repo = CatalogNames.repoOf(namespace)
    if (hasRepository(repo)) throw new org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException(namespace)
    val branch = Option(metadata).flatMap(m => m.asScala.collectFirst { case (k, v) if k.equalsIgnoreCase("defaultBranch") => v })
    engine.createRepository(repo, branch.getOrElse(config.defaultBranch))
  }

  override def alterNamespace(namespace: Array[String], changes: NamespaceChange*): Unit = {
    requireRepo(namespace)
    throw Errors.unsupported("ALTER NAMESPACE is not supported for repositories; manage branches with CALL system procedures.")
  }

  override def dropNamespace(namespace: Array[String], cascade: Boolean): Boolean = {
    val repo = requireRepo(namespace)
    val e = engine
    // a tag or lock keeps history as a branch does: any ref whose image has tables makes the repository non-empty
    val tables = e.refs.all(repo).map(_.image).distinct.flatMap(e.tables(repo, _).map(_.name)).distinct
    if (tables.nonEmpty && !cascade) throw new org.apache.spark.sql.catalyst.analysis.NonEmptyNamespaceException(
      namespace, s"Repository '$repo' has tables (${tables.sorted.mkString(", ")}) on some branch, tag or lock; use CASCADE.", None)
    e.dropRepository(repo)
    true
  }

  // ---------------------------------------------------------------- procedures

  override def loadProcedure(ident: Identifier): UnboundProcedure =
    if (ident.namespace().sameElements(Array(CatalogNames.SystemNamespace))) Procedures.load(
      versioned.spark.catalog.procedures.ProcedureContext(() => engine, () => locationOptions(config)), ident.name())
    else throw Errors.unsupported(s"Procedures live in namespace '${CatalogNames.SystemNamespace}': " +
      s"CALL $catalogName.${CatalogNames.SystemNamespace}.${ident.name()}(...). Available: ${Procedures.names.mkString(", ")}.")

  override def listProcedures(namespace: Array[String]): Array[Identifier] =
    if (namespace.sameElements(Array(CatalogNames.SystemNamespace)))
      Procedures.names.map(n => Identifier.of(namespace, n)).toArray
    else Array.empty
}
