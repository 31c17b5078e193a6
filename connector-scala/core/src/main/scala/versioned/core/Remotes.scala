package versioned.core

import org.apache.hadoop.conf.Configuration

/**
 * A remote of a repository (docs/REMOTES.md): another warehouse, named by its object store URI and its
 * metastore's JDBC URL (never credentials), and the repository there. Recorded in `vc_upstreams`, whose
 * `url` holds it as JSON. `fetchedSeq` is the remote's commit order (`vc_images.seq`) up to which its
 * images have been fetched, so the next fetch reads only newer ones.
 */
final case class Remote(name: String, warehouse: String, metastoreUrl: String, repository: String, fetchedSeq: Long = 0L) {
  def config: WarehouseConfig = WarehouseConfig(warehouse, metastoreUrl)
  def describe: String = s"remote '$name' (repository '$repository' of ${warehouse} with metastore ${Metastore.redact(metastoreUrl)})"
  private[core] def json: String = Json.write(Map("warehouse" -> warehouse, "metastore_url" -> metastoreUrl,
    "repository" -> repository, "fetched_seq" -> fetchedSeq))
}

object Remote {
  private[core] def parse(name: String, json: String): Remote = {
    val m = Json.readMap(json)
    def s(k: String) = Option(m.getOrElse(k, null)).map(_.toString).getOrElse(throw Errors.metastore(
      s"The record of remote '$name' has no '$k' (vc_upstreams.url = $json).", null))
    Remote(name, s("warehouse"), s("metastore_url"), s("repository"),
      Option(m.getOrElse("fetched_seq", null)).map(_.toString.toLong).getOrElse(0L))
  }

  /**
   * A remote as given by a caller: names validated, and URIs refused when they carry credentials (a
   * password, a key or a `user:secret@` part): those come from the session's configuration, never from
   * the metastore.
   */
  def of(name: String, warehouse: String, metastoreUrl: String, repository: String): Remote = {
    Names.validate(Names.Remote, name)
    Names.validate(Names.Repository, repository)
    def uri(what: String, v: String): String = {
      val s = Option(v).map(_.trim).filter(_.nonEmpty).getOrElse(throw Errors.invalidOption(
        s"Remote '$name' needs a $what."))
      if (Credentials.findFirstIn(s).isDefined) throw Errors.invalidOption(s"The $what of remote '$name' " +
        s"(${Metastore.redact(s).replaceAll("//[^/@]*@", "//***@")}) carries credentials, which are never stored in the " +
        "metastore. Give it without them and set spark.versioned.remote." + name + ".metastore.user / .password " +
        "(object stores: the Hadoop configuration, e.g. spark.hadoop.fs.s3a.bucket.<bucket>.access.key).")
      s
    }
    Remote(name, uri("warehouse URI", warehouse), uri("metastore URL", metastoreUrl), repository)
  }

  private val Credentials =
    """(?i)((password|passwd|pwd|secret|token|access[._-]?key|secret[._-]?key)=)|(://[^/@?]*:[^/@?]*@)""".r
}

/** Credentials of a remote's metastore, given by the session for one call (never stored). */
final case class RemoteCredentials(user: Option[String], password: Option[String]) {
  /** The JDBC URL to connect with: `url` plus `user` / `password` parameters. */
  def applyTo(url: String): String = {
    val params = user.map("user" -> _).toSeq ++ password.map("password" -> _)
    params.foldLeft(url) { case (u, (k, v)) =>
      u + (if (u.contains("?")) "&" else "?") + k + "=" + java.net.URLEncoder.encode(v, "UTF-8")
    }
  }
}

object RemoteCredentials {
  val None: RemoteCredentials = RemoteCredentials(scala.None, scala.None)
}

/** The remotes of repositories (`vc_upstreams`) and the refs that track them (`remotes/<remote>/...`). */
final class RemoteOps(engine: Engine) {
  private def ms = engine.metastore

  private def requireRepo(c: java.sql.Connection, repo: String): Unit =
    if (!MetaDao.repoExists(c, repo)) throw new RepositoryNotFoundException(repo)

  /** Adds remote `remote` to `repo`; a remote of that name is REMOTE_EXISTS. */
  def add(repo: String, remote: Remote): Remote = ms.tx { c =>
    requireRepo(c, repo)
    def exists = new RemoteExistsException(s"'$repo' already has a remote '${remote.name}'. Remove it first, or pick another name.")
    if (MetaDao.upstreams(c, repo).exists(_._1 == remote.name)) throw exists
    Sql.unique(MetaDao.insertUpstream(c, repo, remote.name, remote.json))(exists)
    remote
  }

  def list(repo: String): Seq[Remote] = ms.read { c =>
    requireRepo(c, repo)
    MetaDao.upstreams(c, repo).map { case (n, json) => Remote.parse(n, json) }
  }

  def get(repo: String, name: String): Remote = ms.read(get(_, repo, name))

  private[core] def get(c: java.sql.Connection, repo: String, name: String): Remote = {
    Names.validate(Names.Remote, name)
    requireRepo(c, repo)
    MetaDao.upstreams(c, repo).collectFirst { case (`name`, json) => Remote.parse(name, json) }.getOrElse {
      val known = MetaDao.upstreams(c, repo).map(_._1)
      throw new RemoteNotFoundException(s"'$repo' has no remote '$name'" + (if (known.isEmpty) "; it has none. " else
        s" (it has ${known.mkString(", ")}). ") + "Add one first (procedure add_remote, or the API's add remote).")
    }
  }

  /** Removes a remote and the refs tracking it (local branches and the history they hold stay). */
  def remove(repo: String, name: String): Unit = ms.tx { c =>
    get(c, repo, name)
    MetaDao.deleteUpstream(c, repo, name)
    MetaDao.listRefs(c, repo).filter(_.fullName.startsWith(Ref.remotePrefix(name))).foreach(r =>
      MetaDao.deleteRef(c, repo, r.fullName, engine.cause(Cause.RemoveRemote, name)))
  }

  /** The refs tracking remote `name` (`remotes/<name>/<branch>`, `remotes/<name>/tags/<tag>`), or every remote's. */
  def trackingRefs(repo: String, name: Option[String]): Seq[Ref] = ms.read { c =>
    requireRepo(c, repo)
    name.foreach(get(c, repo, _))
    MetaDao.listRefs(c, repo).filter(r => r.kind == RefKind.Remote && name.forall(n => r.fullName.startsWith(Ref.remotePrefix(n))))
  }

  private[core] def update(c: java.sql.Connection, repo: String, remote: Remote): Unit =
    if (!MetaDao.updateUpstream(c, repo, remote.name, remote.json)) throw new RemoteNotFoundException(
      s"Remote '${remote.name}' of '$repo' was removed while it was in use. Nothing was changed.")
}

object Remotes {
  /**
   * The engine of a remote's warehouse. `create`: a push may start an empty warehouse there; fetch and
   * clone need one that exists (an identity in its object store and, for SQLite, its metastore file),
   * so a wrong URI never leaves an empty warehouse behind. A store or metastore that cannot be reached
   * is REMOTE_UNREACHABLE. A remote naming this very warehouse is `local` itself.
   */
  def open(remote: Remote, credentials: RemoteCredentials, hadoopConf: Configuration, create: Boolean, local: Engine): Engine = {
    val config = WarehouseConfig(remote.warehouse, credentials.applyTo(remote.metastoreUrl))
    if (config.warehouse == local.config.warehouse && remote.metastoreUrl == local.config.metastoreUrl) local
    else {
      def unreachable(why: String, cause: Throwable = null) = new RemoteUnreachableException(
        s"Cannot reach ${remote.describe}: $why. Nothing was changed; check the URIs (add_remote), the network and the " +
          "credentials (spark.versioned.remote.<name>.metastore.user / .password, the Hadoop configuration).", cause)
      if (!create) {
        val marker = try new WarehouseStore(config, hadoopConf).readMarker() catch {
          case e: ObjectStoreUnsupportedException => throw e
          case e: VersionedException => throw unreachable(s"its object store failed (${e.getMessage})", e)
        }
        if (marker.isEmpty) throw unreachable("its object store holds no warehouse")
        Metastore.sqliteFile(config.metastoreUrl).filterNot(_.exists()).foreach(f => throw unreachable(s"its metastore $f does not exist"))
      }
      try Engine(config, hadoopConf) catch {
        case e: VersionedException if Set(ErrorClass.MetastoreError, ErrorClass.StorageError)(e.errorClass) =>
          throw unreachable(e.getMessage.stripPrefix(s"[${e.errorClass}] "), e)
      }
    }
  }
}
