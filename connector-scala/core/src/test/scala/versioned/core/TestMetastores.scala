package versioned.core

import java.sql.DriverManager
import java.util.concurrent.atomic.AtomicInteger

/**
 * The core suites run against the embedded SQLite metastore, and also against PostgreSQL when
 * `VERSIONED_TEST_POSTGRES_URL` names an admin JDBC URL (e.g.
 * `jdbc:postgresql://localhost:5432/postgres?user=postgres&password=...`): each test then gets a
 * database of its own, dropped afterwards. `bin/test` sets it up when PostgreSQL can be installed.
 */
object TestMetastores {
  val postgresAdminUrl: Option[String] = sys.env.get("VERSIONED_TEST_POSTGRES_URL").filter(_.nonEmpty)
  private val counter = new AtomicInteger()

  private def admin[T](url: String)(f: java.sql.Statement => T): T = {
    val c = DriverManager.getConnection(url)
    try { val st = c.createStatement(); try f(st) finally st.close() } finally c.close()
  }

  /** Creates a fresh database; returns its name and a JDBC URL for it (same credentials). */
  def createDatabase(adminUrl: String): (String, String) = {
    val db = s"vt_${ProcessHandle.current().pid()}_${counter.incrementAndGet()}"
    admin(adminUrl)(_.execute(s"CREATE DATABASE $db"))
    val (base, query) = adminUrl.span(_ != '?')
    (db, base.substring(0, base.lastIndexOf('/') + 1) + db + query)
  }

  def dropDatabase(adminUrl: String, db: String): Unit =
    admin(adminUrl)(_.execute(s"DROP DATABASE IF EXISTS $db WITH (FORCE)"))
}
