package versioned.core

import java.sql.{Connection, ResultSet}
import com.zaxxer.hikari.{HikariConfig, HikariDataSource}

/**
 * The relational metastore over JDBC (embedded SQLite by default, PostgreSQL when configured), through
 * a pool of connections (HikariCP) with timeouts, so a stalled database is a clear error, not a hang.
 * Portable SQL only. Every public write happens inside one transaction via [[tx]].
 */
final class Metastore(val url: String) extends AutoCloseable {
  val isSqlite: Boolean = url.startsWith("jdbc:sqlite:")

  private val pool: HikariDataSource = {
    val hc = new HikariConfig()
    hc.setJdbcUrl(url)
    hc.setPoolName(s"versioned-metastore-${Metastore.counter.incrementAndGet()}")
    hc.setMaximumPoolSize(if (isSqlite) 4 else 8)
    hc.setMinimumIdle(0)
    hc.setIdleTimeout(60000L)
    hc.setConnectionTimeout(Metastore.ConnectionTimeoutMs)
    hc.setValidationTimeout(5000L)
    hc.setInitializationFailTimeout(-1L) // fail on first use with our error, not in the constructor
    if (isSqlite) {
      hc.addDataSourceProperty("busy_timeout", "30000")
      hc.addDataSourceProperty("transaction_mode", "IMMEDIATE")
      hc.addDataSourceProperty("foreign_keys", "false")
    } else if (url.startsWith("jdbc:postgresql:")) {
      // connect and handshake within 10 s; a query that gets no answer for 5 minutes fails (URL parameters override)
      hc.addDataSourceProperty("connectTimeout", "10")
      hc.addDataSourceProperty("loginTimeout", "10")
      hc.addDataSourceProperty("socketTimeout", "300")
      hc.addDataSourceProperty("tcpKeepAlive", "true")
    }
    try new HikariDataSource(hc) catch {
      case e: RuntimeException if Option(e.getMessage).exists(_.contains("driver")) =>
        throw Errors.invalidOption(s"No JDBC driver for metastore URL '${Metastore.redact(url)}' (${e.getMessage}). " +
          "The metastore is jdbc:sqlite:<file> (embedded) or jdbc:postgresql://host/db; check spark.versioned.metastore.url.")
    }
  }

  private def connect(): Connection =
    try pool.getConnection()
    catch { case e: java.sql.SQLException => throw Errors.metastore(s"Cannot open metastore '${Metastore.redact(url)}': " +
      s"${e.getMessage}. Check spark.versioned.metastore.url and that the database is reachable.", e) }

  /** The embedded metastore's file, and its identity (inode) when this metastore first opened it. */
  private val sqliteFile: Option[java.io.File] = Metastore.sqliteFile(url)
  @volatile private var sqliteIdentity: Option[AnyRef] = None
  private def fileKey(f: java.io.File): Option[AnyRef] =
    try Option(java.nio.file.Files.readAttributes(f.toPath, classOf[java.nio.file.attribute.BasicFileAttributes]).fileKey())
    catch { case _: java.io.IOException => None }

  /**
   * An embedded metastore file deleted (or replaced) while this process has it open would take commits into an
   * unlinked file that vanishes with the process: every transaction checks, before it writes, that the file is
   * still the one it opened.
   */
  private def requireSameFile(): Unit = sqliteFile.foreach { f =>
    val now = fileKey(f)
    sqliteIdentity match {
      case None => if (now.isDefined) sqliteIdentity = now
      case Some(id) if now.contains(id) => ()
      case Some(_) => throw Errors.warehouseMismatch(s"The metastore file $f was ${if (now.isEmpty) "deleted" else "replaced"} " +
        "while this session was using it. Nothing was committed. Restore the file (or set spark.versioned.metastore.url " +
        "to where it is now), then start a new session.")
    }
  }

  /** Connections this metastore closed after a failure instead of returning them to its pool (tests). */
  private[core] val evicted = new java.util.concurrent.atomic.AtomicLong()

  /** Runs `f` in one database transaction: all of it commits or none of it does. */
  def tx[T](f: Connection => T): T = run(f, lazySync = false)

  /**
   * A transaction for rows that matter only while this process lives (its write leases): atomic and seen by
   * every other connection as soon as it returns, like [[tx]], but on the embedded metastore its commit does
   * not wait for the disk. The next [[tx]] makes it durable with its own (the write-ahead log is one file,
   * synced as a whole), and only a crash of the machine can lose it before that: which ends the process
   * whose lease it was too. On PostgreSQL it is a [[tx]].
   */
  def processTx[T](f: Connection => T): T = run(f, lazySync = isSqlite)

  private def run[T](f: Connection => T, lazySync: Boolean): T = {
    val c = connect()
    var broken = false
    var restore: Option[String] = None // the connection's synchronous setting, while lazySync changed it
    try {
      requireSameFile()
      if (lazySync) { restore = Some(Metastore.synchronous(c)); Metastore.pragma(c, "synchronous=NORMAL") }
      c.setAutoCommit(false)
      val r = f(c)
      c.commit()
      r
    } catch {
      case e: Throwable =>
        try c.rollback() catch { case _: Throwable => broken = true }
        e match {
          case v: VersionedException => throw v
          case s: java.sql.SQLException =>
            // SQLite rolls a failed statement's transaction back itself on some errors (disk full, I/O): the
            // connection then holds no transaction, and must not go back to the pool in that state
            broken = true
            throw Metastore.failure(s, url)
          case o => throw o
        }
    } finally {
      // a pooled connection goes back with the default (durable) commits. SQLite refuses to change the setting inside
      // a transaction, and the driver begins one after each commit or rollback: back to auto-commit first, which ends it
      if (!broken) restore.foreach { v =>
        try { c.setAutoCommit(true); Metastore.pragma(c, s"synchronous=$v") } catch { case _: Throwable => broken = true }
      }
      // evicting closes the connection (and the pool opens a fresh one next time)
      if (broken) {
        evicted.incrementAndGet()
        try pool.evictConnection(c) catch { case _: Throwable => c.close() }
      } else c.close()
    }
  }

  /** A read-only query outside an explicit transaction. */
  def read[T](f: Connection => T): T = {
    val c = connect()
    try f(c)
    catch { case s: java.sql.SQLException => throw Errors.metastore(s"Metastore read failed: ${s.getMessage}", s) }
    finally c.close()
  }

  def init(): this.type = {
    if (isSqlite) { // journal mode is persistent but cannot change inside a transaction
      val c = connect()
      try Metastore.pragma(c, "journal_mode=WAL")
      catch { case _: java.sql.SQLException => () } finally c.close()
    }
    tx(c => MetastoreSchema.migrate(c, isSqlite))
    this
  }

  override def close(): Unit = pool.close()
}

object Metastore {
  private val counter = new java.util.concurrent.atomic.AtomicInteger()
  /** Longest wait for a pooled connection. */
  val ConnectionTimeoutMs = 30000L

  /** The `synchronous` setting of an embedded metastore's connection (2: FULL, every commit waits for the disk). */
  private[core] def synchronous(c: Connection): String = {
    val st = c.createStatement()
    try { val rs = st.executeQuery("PRAGMA synchronous"); rs.next(); rs.getInt(1).toString } finally st.close()
  }

  private def pragma(c: Connection, setting: String): Unit = {
    val st = c.createStatement()
    try st.execute(s"PRAGMA $setting") finally st.close()
  }

  /** The URL without credentials, for messages. */
  def redact(url: String): String = url.replaceAll("(?i)(password=)[^&;]*", "$1***")

  /**
   * A failed metastore statement as a typed error: a full disk or an I/O error of the embedded file is a storage
   * error that says what to do; anything else a metastore error.
   */
  def failure(s: java.sql.SQLException, url: String): VersionedException = {
    val msg = Option(s.getMessage).getOrElse("")
    if (msg.contains("SQLITE_FULL") || msg.contains("database or disk is full") || msg.contains("No space left"))
      Errors.storage(s"The metastore ${redact(url)} could not be written: the disk is full. Nothing was committed. " +
        "Free space (gc removes unreferenced objects), then retry.", s)
    else if (msg.contains("SQLITE_IOERR") || msg.contains("SQLITE_READONLY") || msg.contains("SQLITE_CANTOPEN"))
      Errors.storage(s"The metastore ${redact(url)} could not be written ($msg). Nothing was committed. Check that its " +
        "directory is writable and has space, then retry.", s)
    else if (msg.contains("[" + ErrorClass.ProtectedRef + "]")) // refused by the PostgreSQL trigger (GovernanceSchema)
      new ProtectedRefException(msg.substring(msg.indexOf("]") + 1).takeWhile(_ != '\n').trim)
    else Errors.metastore(s"Metastore operation failed: $msg", s)
  }

  /** The file of an embedded SQLite metastore, if the URL names one. */
  def sqliteFile(url: String): Option[java.io.File] =
    Option(url).filter(_.startsWith("jdbc:sqlite:")).map(_.stripPrefix("jdbc:sqlite:").takeWhile(_ != '?'))
      .filter(p => p.nonEmpty && p != ":memory:" && !p.startsWith("file::memory")).map(p => new java.io.File(p.stripPrefix("file:")))
}

/** Small JDBC helpers shared by the DAOs. */
object Sql {
  /** A NULL of an INT column as an argument (a plain null binds as a string, which PostgreSQL refuses there). */
  case object NullInt
  /** Whether `c` is a connection to an embedded SQLite metastore (else PostgreSQL). */
  def isSqlite(c: Connection): Boolean = c.getMetaData.getURL.startsWith("jdbc:sqlite:")

  /** True for a primary-key/unique violation (PostgreSQL SQLSTATE 23505, SQLite SQLITE_CONSTRAINT). */
  def isUniqueViolation(e: java.sql.SQLException): Boolean =
    e.getSQLState == "23505" || e.getErrorCode == 19 || Option(e.getMessage).exists(_.contains("UNIQUE constraint failed"))

  /** Runs `body`; a unique violation (a concurrent writer inserted the same row first) becomes `onConflict`. */
  def unique[T](body: => T)(onConflict: => Throwable): T =
    try body catch { case e: java.sql.SQLException if isUniqueViolation(e) => throw onConflict }

  def update(c: Connection, sql: String, args: Any*): Int = {
    val ps = c.prepareStatement(sql)
    try { bind(ps, args); ps.executeUpdate() } finally ps.close()
  }

  def query[T](c: Connection, sql: String, args: Any*)(row: ResultSet => T): Vector[T] = {
    val out = Vector.newBuilder[T]
    foreach(c, sql, args: _*)(rs => out += row(rs))
    out.result()
  }

  /** Runs a query and hands each row to `f` (for large results that need no intermediate collection). */
  def foreach(c: Connection, sql: String, args: Any*)(f: ResultSet => Unit): Unit = {
    val ps = c.prepareStatement(sql)
    try {
      bind(ps, args)
      val rs = ps.executeQuery()
      while (rs.next()) f(rs)
    } finally ps.close()
  }

  def batch(c: Connection, sql: String, rows: Iterable[Seq[Any]]): Unit = if (rows.nonEmpty) {
    val ps = c.prepareStatement(sql)
    try {
      rows.foreach { r => bind(ps, r); ps.addBatch() }
      ps.executeBatch()
    } finally ps.close()
  }

  private def bind(ps: java.sql.PreparedStatement, args: Seq[Any]): Unit =
    args.zipWithIndex.foreach {
      case (null, i) => ps.setNull(i + 1, java.sql.Types.VARCHAR)
      case (None, i) => ps.setNull(i + 1, java.sql.Types.VARCHAR)
      case (Sql.NullInt, i) => ps.setNull(i + 1, java.sql.Types.INTEGER)
      case (Some(v), i) => ps.setObject(i + 1, v)
      case (v: Boolean, i) => ps.setInt(i + 1, if (v) 1 else 0)
      case (v, i) => ps.setObject(i + 1, v)
    }
}

/** Schema version and migrations. Version 1 is the first published format (docs/FORMAT.md). */
object MetastoreSchema {
  val CurrentVersion = 8

  private val v1 = Seq(
    """CREATE TABLE vc_meta (key VARCHAR(64) PRIMARY KEY, value VARCHAR(256) NOT NULL)""",
    """CREATE TABLE vc_repositories (name VARCHAR(128) PRIMARY KEY, created_ms BIGINT NOT NULL,
      default_branch VARCHAR(200) NOT NULL)""",
    """CREATE TABLE vc_images (repo VARCHAR(128) NOT NULL, hash CHAR(64) NOT NULL, parents TEXT NOT NULL,
      created_ms BIGINT NOT NULL, author TEXT NOT NULL, message TEXT NOT NULL, seq BIGINT NOT NULL,
      changed_tables TEXT NOT NULL, PRIMARY KEY (repo, hash))""",
    """CREATE INDEX vc_images_seq ON vc_images (repo, seq)""",
    """CREATE TABLE vc_tables (repo VARCHAR(128) NOT NULL, image_hash CHAR(64) NOT NULL, name VARCHAR(128) NOT NULL,
      schema_json TEXT NOT NULL, primary_key TEXT NOT NULL, hidden_key INT NOT NULL, table_hash CHAR(64) NOT NULL,
      fragments TEXT NOT NULL, compacted TEXT, changed INT NOT NULL, PRIMARY KEY (repo, image_hash, name))""",
    """CREATE TABLE vc_objects (id CHAR(64) PRIMARY KEY, kind VARCHAR(8) NOT NULL, parents TEXT NOT NULL,
      row_count BIGINT NOT NULL, size_bytes BIGINT NOT NULL, format VARCHAR(16) NOT NULL, min_values TEXT NOT NULL,
      max_values TEXT NOT NULL, null_counts TEXT NOT NULL, created_ms BIGINT NOT NULL)""",
    """CREATE TABLE vc_refs (repo VARCHAR(128) NOT NULL, name VARCHAR(512) NOT NULL, kind VARCHAR(16) NOT NULL,
      image_hash CHAR(64) NOT NULL, created_ms BIGINT NOT NULL, PRIMARY KEY (repo, name))""",
    """CREATE TABLE vc_upstreams (repo VARCHAR(128) NOT NULL, remote VARCHAR(128) NOT NULL, url TEXT NOT NULL,
      PRIMARY KEY (repo, remote))""",
    """CREATE TABLE vc_object_locations (object_id CHAR(64) PRIMARY KEY, protocol VARCHAR(32) NOT NULL,
      location TEXT NOT NULL)"""
  )

  /**
   * Version 2: garbage collection that cannot race a commit (docs/FORMAT.md, "Garbage collection"):
   * objects record when a commit last used them (`touched_ms`), the repository that first stored them
   * (`repo`) and a checksum of their file; write leases protect objects in flight; one generation row
   * serializes commits that add references with garbage collection.
   */
  private val v2 = Seq(
    "ALTER TABLE vc_objects ADD COLUMN touched_ms BIGINT",
    "ALTER TABLE vc_objects ADD COLUMN repo VARCHAR(128)",
    "ALTER TABLE vc_objects ADD COLUMN checksum VARCHAR(256)",
    "UPDATE vc_objects SET touched_ms = created_ms",
    """CREATE TABLE vc_leases (id VARCHAR(64) PRIMARY KEY, repo VARCHAR(128) NOT NULL, purpose VARCHAR(64) NOT NULL,
      started_ms BIGINT NOT NULL, heartbeat_ms BIGINT NOT NULL)""",
    "CREATE TABLE vc_generation (id INT PRIMARY KEY, value BIGINT NOT NULL)",
    "INSERT INTO vc_generation (id, value) VALUES (1, 0)"
  )

  /**
   * Version 6: commits carry who made them (docs/FORMAT.md, "Images"): the committer (the actor's user), the
   * application id and the client; null on images committed before (their hashes do not cover them).
   */
  private val v6 = Seq("committer", "app_id", "client").map(c => s"ALTER TABLE vc_images ADD COLUMN $c TEXT")

  /**
   * Version 7: shared objects (docs/FORMAT.md, format version 2): an object may be listed by several fragments'
   * chains and hold keys of each (`vc_objects.shared` = 1); a table version records its format version
   * (`vc_tables.format_version`, NULL = 1), which a reader that does not know it refuses.
   */
  private val v7 = Seq(
    "ALTER TABLE vc_objects ADD COLUMN shared INT NOT NULL DEFAULT 0",
    "ALTER TABLE vc_tables ADD COLUMN format_version INT")

  /**
   * Version 8: an object may be recorded at several locations (docs/REMOTES.md, "Lazy objects"), tried in `ordinal`
   * order; the one each object had so far becomes its first. PostgreSQL changes the table in place (its grants to
   * writer roles stay, docs/GOVERNANCE.md); SQLite, which cannot change a primary key, copies it into a new one.
   */
  private def v8(sqlite: Boolean): Seq[String] = if (sqlite) Seq(
    """CREATE TABLE vc_object_locations_v8 (object_id CHAR(64) NOT NULL, ordinal INT NOT NULL, protocol VARCHAR(32) NOT NULL,
      location TEXT NOT NULL, PRIMARY KEY (object_id, location))""",
    "INSERT INTO vc_object_locations_v8 (object_id, ordinal, protocol, location) SELECT object_id, 0, protocol, location " +
      "FROM vc_object_locations",
    "DROP TABLE vc_object_locations",
    "ALTER TABLE vc_object_locations_v8 RENAME TO vc_object_locations")
  else Seq(
    "ALTER TABLE vc_object_locations ADD COLUMN ordinal INT NOT NULL DEFAULT 0",
    "ALTER TABLE vc_object_locations DROP CONSTRAINT vc_object_locations_pkey",
    "ALTER TABLE vc_object_locations ADD PRIMARY KEY (object_id, location)")

  private def migrations(sqlite: Boolean): Seq[(Int, Seq[String])] =
    Seq(1 -> v1, 2 -> v2, 3 -> GovernanceSchema.v3(sqlite), 4 -> ReflogSchema.v4, 5 -> RetentionSchema.v5, 6 -> v6, 7 -> v7,
      8 -> v8(sqlite))

  def migrate(c: Connection, sqlite: Boolean): Unit = {
    val current = currentVersion(c)
    if (current > CurrentVersion)
      throw Errors.metastore(s"Metastore schema version $current is newer than this build supports ($CurrentVersion). " +
        "Upgrade the versioned connector.", null)
    migrations(sqlite).filter(_._1 > current).foreach { case (v, stmts) =>
      stmts.foreach(s => Sql.update(c, s))
      if (v == 1) Sql.update(c, "INSERT INTO vc_meta (key, value) VALUES ('schema_version', ?)", v.toString)
      else Sql.update(c, "UPDATE vc_meta SET value = ? WHERE key = 'schema_version'", v.toString)
    }
  }

  private def currentVersion(c: Connection): Int = {
    val rs = c.getMetaData.getTables(null, null, "%", null)
    var exists = false
    while (rs.next()) if (rs.getString("TABLE_NAME").equalsIgnoreCase("vc_meta")) exists = true
    rs.close()
    if (!exists) 0
    else Sql.query(c, "SELECT value FROM vc_meta WHERE key = 'schema_version'")(_.getString(1).toInt).headOption.getOrElse(0)
  }
}
