package versioned.core

import java.util.concurrent.ConcurrentHashMap

/** Where a warehouse lives: a Hadoop-compatible root URI for objects and a JDBC URL for the metastore. */
final case class WarehouseConfig(warehouse: String, metastoreUrl: String, defaultBranch: String = "main") {
  def objectUri(id: String): String = s"${warehouse.stripSuffix("/")}/${ObjectMeta.relativePath(id)}"
  def stagingUri(name: String): String = s"${warehouse.stripSuffix("/")}/_staging/$name"
}

object WarehouseConfig {
  /** Embedded default: SQLite file inside a local warehouse directory. */
  def embedded(warehouse: String): WarehouseConfig = {
    val local = warehouse.stripPrefix("file:").replaceAll("^//", "")
    if (warehouse.contains("://") && !warehouse.startsWith("file:"))
      throw Errors.invalidOption(s"Warehouse '$warehouse' is not local, so the embedded SQLite metastore cannot live " +
        "in it. Set spark.versioned.metastore.url (e.g. jdbc:postgresql://host/db or jdbc:sqlite:/path/metastore.db).")
    new java.io.File(local).mkdirs()
    WarehouseConfig(warehouse, s"jdbc:sqlite:${new java.io.File(local, "metastore.db").getAbsolutePath}")
  }
}

/**
 * The versioning engine: repositories, images, tables, refs and history. Spark-free. All version
 * selection goes through [[resolver]].
 */
final class Engine(val config: WarehouseConfig) {
  val metastore: Metastore = new Metastore(config.metastoreUrl).init()
  val resolver = new Resolver(metastore)
  val refs = new RefOps(this)
  val history = new History(this)
  val maintenance = new Maintenance(this)

  private[core] def now(): Long = System.currentTimeMillis()

  def repositories(): Seq[String] = metastore.read(MetaDao.listRepos)
  def repositoryExists(repo: String): Boolean = metastore.read(MetaDao.repoExists(_, repo))

  def createRepository(repo: String, defaultBranch: String = config.defaultBranch): Unit = {
    Names.validate(Names.Repository, repo); Names.validate(Names.Branch, defaultBranch)
    metastore.tx { c =>
      if (MetaDao.repoExists(c, repo))
        throw new VersionedException(ErrorClass.RepositoryExists, s"Repository '$repo' already exists.")
      Sql.unique(MetaDao.insertRepo(c, repo, defaultBranch, now()))(
        new VersionedException(ErrorClass.RepositoryExists, s"Repository '$repo' already exists."))
    }
  }

  /** Drops a repository's metadata (its objects are removed by the next garbage collection). */
  def dropRepository(repo: String): Unit = metastore.tx { c =>
    if (!MetaDao.repoExists(c, repo)) throw new RepositoryNotFoundException(repo)
    MetaDao.deleteRepo(c, repo)
  }

  def defaultBranch(repo: String): String = metastore.read { c =>
    MetaDao.defaultBranch(c, repo).getOrElse(throw new RepositoryNotFoundException(repo))
  }

  /** The repository's default branch, or the configured default for a repository not created yet. */
  def defaultBranchOrConfig(repo: String): String =
    metastore.read(MetaDao.defaultBranch(_, repo)).getOrElse(config.defaultBranch)

  /**
   * Head of a branch a write may go to: None for a new repository (the branch is created by the
   * commit). A tag, or a missing branch of an existing repository, is an error.
   */
  def writableHead(repo: String, branch: String): Option[Image] = {
    Names.validate(Names.Repository, repo); Names.validate(Names.Branch, branch)
    metastore.read(writableHead(_, repo, branch))
  }

  private def writableHead(c: java.sql.Connection, repo: String, branch: String): Option[Image] =
    MetaDao.getRef(c, repo, Ref.branch(branch)) match {
      case Some(r) => MetaDao.getImage(c, repo, r.image)
      case None =>
        if (MetaDao.getRef(c, repo, Ref.tag(branch)).isDefined) throw new ImmutableRefException(
          s"'$branch' is a tag of '$repo'; tags never move. Commit to a branch (create one from the tag first).")
        val refs = MetaDao.listRefs(c, repo)
        // Read-committed databases (PostgreSQL) may show a branch created by a concurrent first commit.
        if (refs.exists(_.fullName == Ref.branch(branch))) throw new RefConflictException(
          s"Branch '$branch' of '$repo' was just created by another writer. Nothing was committed; retry.")
        if (MetaDao.repoExists(c, repo) && refs.exists(_.kind == RefKind.Branch))
          throw new RefNotFoundException(s"Branch '$branch' does not exist in repository '$repo'. " +
            "Create it first with create_branch(name, from_ref).")
        None
    }

  def resolve(repo: String, rev: Revision): Image = resolver.resolve(repo, rev)

  /** Head image of a branch, or None when the repository or branch does not exist yet. */
  def branchHeadOption(repo: String, branch: String): Option[Image] = metastore.read { c =>
    MetaDao.getRef(c, repo, Ref.branch(branch)).flatMap(r => MetaDao.getImage(c, repo, r.image))
  }

  def tables(repo: String, image: String): Seq[TableVersion] = metastore.read(MetaDao.tablesOf(_, repo, image)).map(_.table)

  def table(repo: String, image: Image, name: String): TableVersion = tableOption(repo, image.hash, name).getOrElse(
    throw new TableNotFoundException(repo, name, s"image ${image.shortHash}"))

  def tableOption(repo: String, image: String, name: String): Option[TableVersion] =
    metastore.read(MetaDao.tableOf(_, repo, image, name)).map(_.table)

  def objects(ids: Seq[String]): Map[String, ObjectMeta] = metastore.read(MetaDao.getObjects(_, ids))

  /** Records an equivalent, shorter representation of a table version (the image hash is unchanged). */
  def setCompacted(repo: String, image: String, table: String, compacted: Seq[Fragment], newObjects: Seq[ObjectMeta]): Unit =
    metastore.tx { c =>
      MetaDao.insertObjects(c, newObjects, now())
      MetaDao.setCompacted(c, repo, image, table, Some(compacted))
    }

  def clearCompacted(repo: String, image: String, table: String): Unit =
    metastore.tx(MetaDao.setCompacted(_, repo, image, table, None))

  /**
   * Commits table updates as one new image on `branch`, in one metastore transaction. The branch
   * moves by compare-and-swap from `expectedHead` (None: the branch must not exist yet, and is
   * created, with the repository if needed). A lost race raises [[RefConflictException]].
   */
  def commit(repo: String, branch: String, expectedHead: Option[String], updates: Map[String, TableUpdate],
             author: String, message: String): CommitResult = {
    Names.validate(Names.Repository, repo); Names.validate(Names.Branch, branch)
    updates.keys.foreach(Names.validate(Names.Table, _))
    metastore.tx { c =>
      val fullRef = Ref.branch(branch)
      val current = writableHead(c, repo, branch).map(_.hash)
      if (current != expectedHead) throw new RefConflictException(
        s"Branch '$branch' of '$repo' moved to ${current.map(_.take(12)).getOrElse("nothing")} while this commit " +
          s"was prepared on ${expectedHead.map(_.take(12)).getOrElse("an empty branch")}. Nothing was committed; retry.")
      def lostRace = new RefConflictException(
        s"Another writer created branch '$branch' of '$repo' at the same time. Nothing was committed; retry.")
      if (!MetaDao.repoExists(c, repo)) Sql.unique(MetaDao.insertRepo(c, repo, branch, now()))(lostRace)
      val parent = current.flatMap(MetaDao.getImage(c, repo, _))
      val parentTables = current.map(MetaDao.tablesOf(c, repo, _)).getOrElse(Vector.empty).map(t => t.table.name -> t.table).toMap
      val newObjects = updates.values.collect { case TableUpdate.Put(_, objs) => objs }.flatten.toSeq
      MetaDao.insertObjects(c, newObjects, now())
      val nextTables: Map[String, TableVersion] = updates.foldLeft(parentTables.map { case (n, t) => n -> t }) {
        case (acc, (name, TableUpdate.Drop)) =>
          if (!acc.contains(name)) throw new TableNotFoundException(repo, name, s"branch '$branch'")
          acc - name
        case (acc, (name, TableUpdate.Put(t, _))) => acc + (name -> t.copy(name = name).withHash)
      }
      val created = math.max(now(), parent.map(_.createdMs + 1).getOrElse(0L))
      val parents = current.toSeq
      val hash = Hashing.imageHash(parents, author, message, created, nextTables.toSeq.map { case (n, t) => n -> t.hash })
      val image = Image(repo, hash, parents, created, author, message)
      val rows = nextTables.values.toSeq.map(t => ImageTable(hash, t, !parentTables.get(t.name).exists(_.hash == t.hash)))
      val dropped = updates.collect { case (n, TableUpdate.Drop) => n }
      val changed = (rows.filter(_.changed).map(_.table.name) ++ dropped).sorted
      // Identical content, parents and metadata give an identical image (e.g. on two branches): reuse it.
      if (MetaDao.getImage(c, repo, hash).isEmpty) Sql.unique {
        MetaDao.insertImage(c, image, MetaDao.nextSeq(c, repo), changed)
        MetaDao.insertTables(c, repo, hash, rows)
      }(lostRace)
      current match {
        case None => Sql.unique(MetaDao.insertRef(c, repo, Ref(fullRef, RefKind.Branch, hash, created)))(lostRace)
        case Some(old) =>
          if (!MetaDao.casRef(c, repo, fullRef, old, hash)) throw new RefConflictException(
            s"Branch '$branch' of '$repo' moved during this commit. Nothing was committed; retry.")
      }
      CommitResult(image, branch, changed)
    }
  }
}

/** One engine per warehouse configuration per JVM. */
object Engine {
  private val engines = new ConcurrentHashMap[WarehouseConfig, Engine]()
  def apply(config: WarehouseConfig): Engine = engines.computeIfAbsent(config, c => new Engine(c))
}
