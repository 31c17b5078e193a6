package versioned.core

import java.sql.Connection
import org.slf4j.LoggerFactory
import versioned.core.governance.BranchRule

/**
 * A retention policy of the branches matching `pattern` (a name or glob, matched as protection rules match:
 * [[BranchRule.regexOf]]); docs/SAFETY.md, "Retention policies".
 *
 * @param keepDays         keep the commits of the branch's first-parent line made within this many days
 * @param keepCommits      keep the newest this many commits of the branch's first-parent line (1: the head only)
 * @param expireBranchDays delete the branch (not the default branch, nor one a protection rule keeps) when its head
 *                         was not updated for this many days (opt-in)
 * With both `keepDays` and `keepCommits`, a commit either keeps is kept. The head of every branch is always kept.
 */
final case class RetentionPolicy(pattern: String, keepDays: Option[Int] = None, keepCommits: Option[Int] = None,
                                 expireBranchDays: Option[Int] = None) {
  def regex: String = BranchRule.regexOf(pattern)
  def matches(branch: String): Boolean = branch.matches(regex)
  /** Whether the policy limits the history of its branches (else it only expires stale branches). */
  def limitsHistory: Boolean = keepDays.isDefined || keepCommits.isDefined
  /** Whether commit number `i` (0: the head) of a first-parent line, made at `createdMs`, is kept at `now`. */
  def keeps(i: Int, createdMs: Long, now: Long): Boolean =
    i == 0 || keepCommits.exists(i < _) || keepDays.exists(d => createdMs >= now - d * RetentionPolicy.DayMs)
  def describe: String = s"retention policy '$pattern' (" + Seq("keep_days" -> keepDays, "keep_commits" -> keepCommits,
    "expire_branches_after_days" -> expireBranchDays).collect { case (k, Some(v)) => s"$k=$v" }.mkString(", ") + ")"
}

object RetentionPolicy {
  val DayMs: Long = 24L * 60 * 60 * 1000
  /** A hundred years: more is taken for a mistake. */
  val MaxDays = 36500
  val MaxCommits = 100000000

  /** INVALID_OPTION unless the pattern is valid, every value is in range, and the policy says something. */
  def validate(p: RetentionPolicy): Unit = {
    Protections.validatePattern(p.pattern)
    def range(name: String, v: Option[Int], max: Int): Unit = v.foreach(n => if (n < 1 || n > max)
      throw Errors.invalidOption(s"Retention policy '${p.pattern}': $name must be between 1 and $max, not $n. Nothing was stored."))
    range("keep_days", p.keepDays, MaxDays)
    range("keep_commits", p.keepCommits, MaxCommits)
    range("expire_branches_after_days", p.expireBranchDays, MaxDays)
    if (p.keepDays.isEmpty && p.keepCommits.isEmpty && p.expireBranchDays.isEmpty) throw Errors.invalidOption(
      s"Retention policy '${p.pattern}' sets nothing: give keep_days, keep_commits or expire_branches_after_days. " +
        "Nothing was stored.")
  }
}

/** What the retention step of garbage collection expires, and why: image hash or branch name -> reason. */
final case class ExpiryPlan(images: Map[String, String], branches: Map[String, String]) {
  def isEmpty: Boolean = images.isEmpty && branches.isEmpty
}

/**
 * Retention policies (`vc_retention`, [[RetentionSchema]]) and the expiry of versions they no longer keep. An expired
 * image keeps its commit (the log, parents, message) and loses its table versions (`vc_tables` rows), so that the
 * objects only it used become unreferenced and are collected; `vc_expired` records why, and every lookup of an
 * expired image's tables raises [[VersionExpiredException]] ([[Retention.refuse]]), never an empty version.
 */
final class Retention(engine: Engine) {
  private val log = LoggerFactory.getLogger(classOf[Retention])
  private def ms = engine.metastore

  /** Adds or replaces the policy of `policy.pattern`. */
  def set(repo: String, policy: RetentionPolicy): RetentionPolicy = {
    Names.validate(Names.Repository, repo)
    RetentionPolicy.validate(policy)
    ms.tx { c =>
      if (!MetaDao.repoExists(c, repo)) throw new RepositoryNotFoundException(repo)
      Sql.update(c, "DELETE FROM vc_retention WHERE repo = ? AND pattern = ?", repo, policy.pattern)
      def int(v: Option[Int]): Any = v.getOrElse(Sql.NullInt)
      Sql.update(c, "INSERT INTO vc_retention (repo, pattern, pattern_regex, keep_days, keep_commits, " +
        "expire_branch_days, created_ms) VALUES (?,?,?,?,?,?,?)", repo, policy.pattern, policy.regex,
        int(policy.keepDays), int(policy.keepCommits), int(policy.expireBranchDays), engine.now())
      MetaDao.logChange(c, repo, Retention.PolicyPrefix + policy.pattern, engine.cause(Cause.Retain, policy.describe))
    }
    log.info(s"versioned: set $repo ${policy.describe}")
    policy
  }

  /** Removes the policy of `pattern`; REF_NOT_FOUND when there is none. */
  def remove(repo: String, pattern: String): Unit = {
    Names.validate(Names.Repository, repo)
    ms.tx { c =>
      MetaDao.deletePatternRule(c, "vc_retention", repo, pattern)(new RefNotFoundException(
        s"'$repo' has no retention policy '$pattern'. The policies are listed by the procedure retention (or the API's " +
          "retention)."))
      MetaDao.logChange(c, repo, Retention.PolicyPrefix + pattern, engine.cause(Cause.Unretain))
    }
    log.info(s"versioned: remove $repo retention policy '$pattern'")
  }

  /** The policies of `repo`, by pattern. */
  def policies(repo: String): Seq[RetentionPolicy] = ms.read { c =>
    if (!MetaDao.repoExists(c, repo)) throw new RepositoryNotFoundException(repo)
    Retention.policiesOf(c, repo)
  }

  /**
   * What the policies of `repo` expire at `now`: images no ref keeps (a branch's head and, per the policies matching
   * it, its first-parent line within their window, or its whole history when no policy limits it; the image of a
   * tag, lock or remote-tracking ref; the merge base of each branch with the default branch), made before `floorMs`
   * (the repository-wide horizon), not yet expired; and branches stale for longer than a policy's
   * `expire_branches_after_days`. Read in `c`, under the generation lock of the caller.
   */
  private[core] def plan(c: Connection, repo: String, now: Long, floorMs: Long): ExpiryPlan = {
    val policies = Retention.policiesOf(c, repo)
    if (policies.isEmpty) return ExpiryPlan(Map.empty, Map.empty)
    val graph = Sql.query(c, "SELECT hash, parents, created_ms FROM vc_images WHERE repo = ?", repo)(r =>
      r.getString(1) -> (Json.readStrings(r.getString(2)), r.getLong(3))).toMap
    val refs = MetaDao.listRefs(c, repo)
    val default = MetaDao.defaultBranch(c, repo)
    val rules = engine.protections.rulesOf(c, repo)
    val stale = refs.filter(_.kind == RefKind.Branch).flatMap { b =>
      val branch = b.shortName
      val updated = math.max(b.createdMs, graph.get(b.image).map(_._2).getOrElse(0L))
      policies.filter(p => p.matches(branch) && p.expireBranchDays.exists(d => updated < now - d * RetentionPolicy.DayMs))
        .headOption.filterNot(_ => default.contains(branch) ||
          rules.refusal(branch, versioned.core.governance.Move.Delete).nonEmpty)
        .map(p => branch -> s"branch '$branch' not updated for ${p.expireBranchDays.get} days: expired by ${p.describe}")
    }.toMap
    val kept = scala.collection.mutable.HashSet.empty[String]
    val why = scala.collection.mutable.HashMap.empty[String, String]
    val live = refs.filterNot(r => r.kind == RefKind.Branch && stale.contains(r.shortName))
    live.foreach { r =>
      val matching = if (r.kind == RefKind.Branch) policies.filter(_.matches(r.shortName)) else Nil
      if (r.kind != RefKind.Branch) kept += r.image // a tag, lock or remote-tracking ref pins its image
      else if (matching.isEmpty || matching.exists(!_.limitsHistory)) kept ++= Retention.ancestors(graph, r.image)
      else {
        var h = Option(r.image).filter(graph.contains)
        var i = 0
        while (h.isDefined) {
          val (parents, created) = graph(h.get)
          if (matching.exists(_.keeps(i, created, now))) kept += h.get
          else why.getOrElseUpdate(h.get, s"older than what ${matching.map(_.describe).mkString(" and ")} keeps of branch '${r.shortName}'")
          h = parents.headOption.filter(graph.contains)
          i += 1
        }
      }
    }
    // the merge base of each branch with the default branch: what a merge between them reads
    val defaultHead = default.flatMap(d => live.find(r => r.kind == RefKind.Branch && r.shortName == d)).map(_.image)
    defaultHead.foreach { dh =>
      val ofDefault = Retention.ancestors(graph, dh)
      live.filter(r => r.kind == RefKind.Branch && r.image != dh).foreach { b =>
        val common = Retention.ancestors(graph, b.image).filter(ofDefault)
        if (common.nonEmpty) kept += common.maxBy(h => (graph(h)._2, h))
      }
    }
    val already = Sql.query(c, "SELECT image_hash FROM vc_expired WHERE repo = ?", repo)(_.getString(1)).toSet
    val expired = graph.collect { case (h, (_, created)) if !kept(h) && !already(h) && created < floorMs =>
      h -> why.getOrElse(h, "no ref keeps it (this repository has retention policies)") }
    ExpiryPlan(expired, stale)
  }

  /** Carries out `plan` in `c`: deletes the stale branches, records the expired images and drops their table versions. */
  private[core] def expire(c: Connection, repo: String, plan: ExpiryPlan): Unit = {
    plan.branches.foreach { case (b, why) => MetaDao.deleteRef(c, repo, Ref.branch(b), engine.cause(Cause.Expire, why)) }
    val now = engine.now()
    Sql.batch(c, "INSERT INTO vc_expired (repo, image_hash, reason, expired_ms) VALUES (?,?,?,?)",
      plan.images.toSeq.map { case (h, why) => Seq(repo, h, why, now) })
    plan.images.keys.toSeq.grouped(500).foreach(g => Sql.update(c,
      s"DELETE FROM vc_tables WHERE repo = ? AND image_hash IN (${g.map(_ => "?").mkString(",")})", repo +: g: _*))
    if (!plan.isEmpty) log.info(s"versioned: retention of $repo expired ${plan.images.size} images and " +
      s"${plan.branches.size} branches${if (plan.branches.isEmpty) "" else plan.branches.keys.toSeq.sorted.mkString(" (", ", ", ")")}")
  }
}

object Retention {
  /** The reflog's name of a retention policy change's "ref": `retention/<pattern>`. */
  val PolicyPrefix = "retention/"

  private[core] def policiesOf(c: Connection, repo: String): Vector[RetentionPolicy] = {
    def int(r: java.sql.ResultSet, col: String) = { val v = r.getInt(col); if (r.wasNull()) None else Some(v) }
    Sql.query(c, "SELECT pattern, keep_days, keep_commits, expire_branch_days FROM vc_retention WHERE repo = ? " +
      "ORDER BY pattern", repo)(r => RetentionPolicy(r.getString("pattern"), int(r, "keep_days"), int(r, "keep_commits"),
      int(r, "expire_branch_days")))
  }

  private def ancestors(graph: Map[String, (Seq[String], Long)], from: String): Set[String] = {
    val seen = scala.collection.mutable.HashSet.empty[String]
    val todo = scala.collection.mutable.Stack(from)
    while (todo.nonEmpty) { val h = todo.pop(); if (graph.contains(h) && seen.add(h)) todo.pushAll(graph(h)._1) }
    seen.toSet
  }

  /** Why `image` of `repo` was expired, when it was. */
  private[core] def expiry(c: Connection, repo: String, image: String): Option[String] =
    Sql.query(c, "SELECT reason FROM vc_expired WHERE repo = ? AND image_hash = ?", repo, image)(_.getString(1)).headOption

  /** Raises [[VersionExpiredException]] when `image` of `repo` was expired. */
  private[core] def refuse(c: Connection, repo: String, image: String): Unit = refuse(repo, image, expiry(c, repo, image))

  /** Raises [[VersionExpiredException]] when `expired` (why `image` of `repo` was expired, if it was) is defined. */
  private[core] def refuse(repo: String, image: String, expired: Option[String]): Unit = expired.foreach { why =>
    throw new VersionExpiredException(image, why, s"Version ${image.take(12)} of '$repo' was expired by garbage " +
      s"collection: $why. Its commit is still in the log, its tables are gone. Read a newer version, or keep more " +
      "history with the retention policy (procedure set_retention, or the API's set retention).")
  }
}
