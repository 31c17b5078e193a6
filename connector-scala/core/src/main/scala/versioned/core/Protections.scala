package versioned.core

import java.sql.Connection
import org.slf4j.LoggerFactory
import versioned.core.governance.{BranchRule, BranchRules, Move}

/**
 * Protected branches (docs/GOVERNANCE.md): the rules of each repository (`vc_branch_rules`), changed here,
 * and [[guard]], which every transaction that moves a branch calls before it moves it ([[Engine.commit]],
 * [[RefOps]] reset, delete and rename, a push into this warehouse). On PostgreSQL a trigger on `vc_refs`
 * enforces the same rules for clients that bypass the library ([[GovernanceSchema]]).
 */
final class Protections(engine: Engine) {
  private val log = LoggerFactory.getLogger(classOf[Protections])
  private def ms = engine.metastore

  /** Adds or replaces the rule for `rule.pattern`. The branches it covers need not exist yet. */
  def protect(repo: String, rule: BranchRule): BranchRule = {
    Names.validate(Names.Repository, repo)
    Protections.validatePattern(rule.pattern)
    rule.requiredChecks.foreach(Names.validate(Names.Table, _))
    ms.tx { c =>
      if (!MetaDao.repoExists(c, repo)) throw new RepositoryNotFoundException(repo)
      val defined = engine.checks.defs(c, repo).map(_.name).toSet
      rule.requiredChecks.find(!defined(_)).foreach(n => throw engine.checks.notFound(repo, n))
      Sql.update(c, "DELETE FROM vc_branch_rules WHERE repo = ? AND pattern = ?", repo, rule.pattern)
      Sql.update(c, "INSERT INTO vc_branch_rules (repo, pattern, pattern_regex, require_merge, allow_force, allow_delete, " +
        "required_checks, created_ms) VALUES (?,?,?,?,?,?,?,?)", repo, rule.pattern, rule.regex, rule.requireMerge,
        rule.allowForce, rule.allowDelete, Json.write(rule.requiredChecks), engine.now())
      MetaDao.logChange(c, repo, Protections.RulePrefix + rule.pattern, engine.cause(Cause.Protect, rule.describe))
    }
    log.info(s"versioned: protect $repo ${rule.describe}")
    rule
  }

  /** Removes the rule for `pattern`; REF_NOT_FOUND when there is none. */
  def unprotect(repo: String, pattern: String): Unit = {
    Names.validate(Names.Repository, repo)
    ms.tx { c =>
      MetaDao.deletePatternRule(c, "vc_branch_rules", repo, pattern)(new RefNotFoundException(s"'$repo' has no " +
        s"protection rule '$pattern'. The rules are listed by the procedure protections (or the API's protections)."))
      MetaDao.logChange(c, repo, Protections.RulePrefix + pattern, engine.cause(Cause.Unprotect))
    }
    log.info(s"versioned: unprotect $repo '$pattern'")
  }

  /** The rules of `repo`, by pattern. */
  def rules(repo: String): Seq[BranchRule] = ms.read { c =>
    if (!MetaDao.repoExists(c, repo)) throw new RepositoryNotFoundException(repo)
    rulesOf(c, repo).rules
  }

  /** The checks that must pass on the image a merge lands on `branch`. */
  def requiredChecks(repo: String, branch: String): Seq[String] = ms.read(rulesOf(_, repo).requiredChecks(branch))

  /** True when a merge into `branch` must record a merge commit (a rule requires merges: no fast-forward). */
  def mergeCommitOnly(repo: String, branch: String): Boolean = ms.read(rulesOf(_, repo).mergeCommitOnly(branch))

  /** Raises [[BranchProtectedException]] when a rule of `repo` refuses `move` of `branch`; nothing else is done. */
  private[core] def guard(c: Connection, repo: String, branch: String, move: => Move): Unit = {
    val rules = rulesOf(c, repo)
    if (rules.covering(branch).nonEmpty) rules.refusal(branch, move).foreach { case (rule, advice) =>
      throw new BranchProtectedException(repo, branch, rule.pattern, s"Branch '$branch' of '$repo' is protected by " +
        s"${rule.describe}: a ${move.label} is refused. $advice Nothing was changed.")
    }
  }

  private[core] def rulesOf(c: Connection, repo: String): BranchRules = BranchRules(Sql.query(c,
    "SELECT pattern, require_merge, allow_force, allow_delete, required_checks FROM vc_branch_rules WHERE repo = ? " +
      "ORDER BY pattern", repo) { rs =>
    BranchRule(rs.getString(1), rs.getInt(2) == 1, rs.getInt(3) == 1, rs.getInt(4) == 1, Json.readStrings(rs.getString(5)))
  })
}

object Protections {
  /** The reflog's name of a rule change's "ref": `rules/<pattern>`. */
  val RulePrefix = "rules/"

  /** A pattern is a branch name in which `*` may stand for a part of it. */
  def validatePattern(pattern: String): String = {
    if (pattern == null || pattern.isEmpty) throw new InvalidNameException("Invalid branch pattern '': it is empty.")
    try Names.validate(Names.Branch, pattern.replace("*", "x")) catch {
      case e: InvalidNameException => throw new InvalidNameException(
        s"Invalid branch pattern '$pattern': ${e.getMessage.substring(e.getMessage.indexOf(':') + 1).trim} " +
          "A pattern is a branch name where '*' matches any characters but '/' and '**' any characters.")
    }
    pattern
  }
}
