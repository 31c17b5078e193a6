package versioned.core

import java.sql.Connection
import org.slf4j.LoggerFactory

/**
 * A named check of a repository (docs/GOVERNANCE.md): a SQL query over the tables of an image that must return
 * no rows (`kind` query), or a row predicate every row of `table` must satisfy (`kind` predicate).
 * `severity` error blocks a gated merge; warn is recorded only.
 */
final case class CheckDef(name: String, kind: String, table: Option[String], expression: String, severity: String) {
  def blocks: Boolean = severity == CheckDef.Error
}

object CheckDef {
  val Query = "query"
  val Predicate = "predicate"
  val Error = "error"
  val Warn = "warn"

  /** A definition with its kind and severity checked (what Spark validates, the engine does not). */
  def of(name: String, table: Option[String], expression: String, severity: String): CheckDef = {
    Names.validate(Names.Table, name)
    table.foreach(Names.validate(Names.Table, _))
    if (expression == null || expression.trim.isEmpty) throw new CheckInvalidException(
      s"Check '$name' has no ${if (table.isDefined) "predicate" else "query"}. Give a SQL query that returns the " +
        "failing rows, or a table and a predicate every row must satisfy.")
    val sev = Option(severity).map(_.trim.toLowerCase).filter(_.nonEmpty).getOrElse(Error)
    if (sev != Error && sev != Warn) throw new CheckInvalidException(
      s"Check '$name' has severity '$severity'; use '$Error' (blocks a gated merge) or '$Warn' (recorded only).")
    CheckDef(name, if (table.isDefined) Predicate else Query, table, expression.trim, sev)
  }
}

/** One check's outcome on one image: `status` pass, fail or error (it could not run). */
final case class CheckRun(check: String, severity: String, status: String, failingRows: Long, sampleKeys: Seq[String],
                          error: Option[String], durationMs: Long) {
  def failed: Boolean = status != CheckRun.Pass
  def describe: String = error match {
    case Some(e) => s"'$check' could not run ($e)"
    case None => s"'$check' found $failingRows failing row(s)" +
      (if (sampleKeys.isEmpty) "" else s" (e.g. ${sampleKeys.mkString(", ")})")
  }
}

object CheckRun {
  val Pass = "pass"
  val Fail = "fail"
  val Error = "error"
}

/** A recorded run (`vc_check_runs`): what the `$checks` metadata table shows. */
final case class RecordedRun(runId: String, image: String, run: CheckRun, who: String, purpose: String, runMs: Long)

/** The checks of each repository (`vc_checks`) and the record of every run (`vc_check_runs`). */
final class Checks(engine: Engine) {
  private val log = LoggerFactory.getLogger(classOf[Checks])
  private def ms = engine.metastore

  private def requireRepo(c: Connection, repo: String): Unit =
    if (!MetaDao.repoExists(c, repo)) throw new RepositoryNotFoundException(repo)

  /** Adds (or replaces) a check the caller has validated against the repository's tables. */
  def add(repo: String, check: CheckDef): CheckDef = {
    ms.tx { c =>
      requireRepo(c, repo)
      Sql.update(c, "DELETE FROM vc_checks WHERE repo = ? AND name = ?", repo, check.name)
      Sql.update(c, "INSERT INTO vc_checks (repo, name, kind, table_name, expression, severity, created_ms) VALUES (?,?,?,?,?,?,?)",
        repo, check.name, check.kind, check.table, check.expression, check.severity, engine.now())
    }
    log.info(s"versioned: check ${check.name} added to $repo (${check.kind}, ${check.severity})")
    check
  }

  /** Removes a check; one a protection rule requires is refused (remove it from the rule first). */
  def remove(repo: String, name: String): Unit = ms.tx { c =>
    requireRepo(c, repo)
    engine.protections.rulesOf(c, repo).rules.find(_.requiredChecks.contains(name)).foreach(r => throw new ProtectedRefException(
      s"Check '$name' of '$repo' is required by protection rule '${r.pattern}'. Change the rule first, then remove the check."))
    if (Sql.update(c, "DELETE FROM vc_checks WHERE repo = ? AND name = ?", repo, name) == 0) throw notFound(repo, name)
  }

  def list(repo: String): Seq[CheckDef] = ms.read { c => requireRepo(c, repo); defs(c, repo) }

  def get(repo: String, name: String): CheckDef = list(repo).find(_.name == name).getOrElse(throw notFound(repo, name))

  private[core] def notFound(repo: String, name: String) = new CheckNotFoundException(s"'$repo' has no check '$name'. " +
    "Add it first (procedure add_check, or the API's add check); the metadata table $checks lists runs.")

  private[core] def defs(c: Connection, repo: String): Seq[CheckDef] =
    Sql.query(c, "SELECT name, kind, table_name, expression, severity FROM vc_checks WHERE repo = ? ORDER BY name", repo) { rs =>
      CheckDef(rs.getString(1), rs.getString(2), Option(rs.getString(3)), rs.getString(4), rs.getString(5))
    }

  /** Records the runs of one evaluation of checks on `image` (one run id). */
  def record(repo: String, image: String, runs: Seq[CheckRun], who: String, purpose: String): String = {
    val runId = java.util.UUID.randomUUID().toString
    val now = engine.now()
    if (runs.nonEmpty) ms.tx { c =>
      Sql.batch(c, "INSERT INTO vc_check_runs (repo, run_id, image_hash, check_name, severity, status, failing_rows, " +
        "sample_keys, error, duration_ms, who, purpose, run_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", runs.map { r =>
        Seq(repo, runId, image, r.check, r.severity, r.status, r.failingRows, Json.write(r.sampleKeys), r.error.orNull,
          r.durationMs, who, purpose, now)
      })
    }
    runs.foreach(r => log.info(s"versioned: check ${r.check} on $repo ${image.take(12)} ($purpose): ${r.status}" +
      s"${if (r.failed) " " + r.describe else ""} in ${r.durationMs} ms"))
    runId
  }

  /**
   * Whether check `name`, as defined now, passed on `image`: a recorded run of it on that image with status pass,
   * made after the check was (last) added. What an evaluation of a row-local check on the rows a commit changed
   * builds on (the rows it left as they were passed then).
   */
  def passedOn(repo: String, name: String, image: String): Boolean = ms.read { c =>
    Sql.query(c, "SELECT 1 FROM vc_check_runs r JOIN vc_checks k ON k.repo = r.repo AND k.name = r.check_name " +
      "WHERE r.repo = ? AND r.check_name = ? AND r.image_hash = ? AND r.status = 'pass' AND r.run_ms > k.created_ms",
      repo, name, image)(_ => true).nonEmpty
  }

  /** Every recorded run of `repo`, newest first. */
  def runs(repo: String): Seq[RecordedRun] = ms.read { c =>
    requireRepo(c, repo)
    Sql.query(c, "SELECT run_id, image_hash, check_name, severity, status, failing_rows, sample_keys, error, duration_ms, " +
      "who, purpose, run_ms FROM vc_check_runs WHERE repo = ? ORDER BY run_ms DESC, run_id, check_name", repo) { rs =>
      RecordedRun(rs.getString(1), rs.getString(2), CheckRun(rs.getString(3), rs.getString(4), rs.getString(5), rs.getLong(6),
        Json.readStrings(rs.getString(7)), Option(rs.getString(8)), rs.getLong(9)), rs.getString(10), rs.getString(11), rs.getLong(12))
    }
  }
}

/**
 * Runs checks on an image: installed in an [[Engine]] by the layer that can evaluate them (Spark's). The engine
 * calls it while a commit into a branch with required checks waits to move the branch; it raises
 * [[CheckFailedException]] when a check of severity error fails or cannot run.
 */
trait CheckGate {
  def enforce(engine: Engine, repo: String, image: Image, checks: Seq[String], purpose: String): Unit
}

object CheckGate {
  /** The gate on the class path (the Spark module declares one in META-INF/services), if any. */
  def discovered: Option[CheckGate] = {
    val it = java.util.ServiceLoader.load(classOf[CheckGate], classOf[CheckGate].getClassLoader).iterator()
    if (it.hasNext) Some(it.next()) else None
  }
}
