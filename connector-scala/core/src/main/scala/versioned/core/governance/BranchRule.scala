package versioned.core.governance

/**
 * A protection rule of a repository's branches: the branch name or glob it covers (`main`, or `release/` followed by `*`), and
 * what it allows. `*` matches any characters but `/`, `**` any characters; other characters match themselves.
 *
 * @param requireMerge   no direct writes: a branch it covers moves only by a merge (a merge commit)
 * @param allowForce     a reset (or a forced push) may move the branch to an image that does not descend from its head
 * @param allowDelete    the branch may be deleted (or renamed away)
 * @param requiredChecks checks that must pass on the image a merge lands on the branch
 */
final case class BranchRule(pattern: String, requireMerge: Boolean = true, allowForce: Boolean = false,
                            allowDelete: Boolean = false, requiredChecks: Seq[String] = Nil) {
  /** The pattern as an anchored regular expression (also what PostgreSQL's trigger matches with `~`). */
  def regex: String = BranchRule.regexOf(pattern)
  def matches(branch: String): Boolean = branch.matches(regex)
  def describe: String = s"rule '$pattern' (require_merge=$requireMerge, allow_force=$allowForce, " +
    s"allow_delete=$allowDelete${if (requiredChecks.isEmpty) "" else s", checks=${requiredChecks.mkString(",")}"})"
}

object BranchRule {
  def regexOf(pattern: String): String = {
    val b = new StringBuilder("^")
    var i = 0
    while (i < pattern.length) {
      val ch = pattern.charAt(i)
      if (ch == '*' && i + 1 < pattern.length && pattern.charAt(i + 1) == '*') { b ++= ".*"; i += 1 }
      else if (ch == '*') b ++= "[^/]*"
      else if ("\\.[]{}()+-?^$|".indexOf(ch) >= 0) b ++= "\\" + ch
      else b += ch
      i += 1
    }
    b ++= "$"
    b.toString
  }
}

/** How a ref move changes a branch: the one vocabulary the rules are decided on. */
sealed trait Move { def label: String }
object Move {
  /** A commit on the branch: a direct write (`merge` false) or a merge commit (`merge` true). Required checks run on it. */
  final case class Commit(merge: Boolean) extends Move {
    def label: String = if (merge) "merge" else "direct write"
  }
  /** A reset (or push) to another image; `fastForward` when it descends from the branch's head; `merge` for a merge's fast-forward. */
  final case class Reset(fastForward: Boolean, merge: Boolean = false) extends Move {
    def label: String = if (merge) "fast-forward merge" else if (fastForward) "fast-forward reset" else "reset to an image that does not descend from the head"
  }
  /** A push from another warehouse. */
  final case class Push(forced: Boolean) extends Move { def label: String = if (forced) "forced push" else "push" }
  case object Delete extends Move { val label = "deletion" }
  case object Rename extends Move { val label = "rename" }
}

/** The rules of one repository, and the decisions made on them. */
final case class BranchRules(rules: Seq[BranchRule]) {
  /** The rules covering `branch` (every matching rule applies; the most restrictive setting wins). */
  def covering(branch: String): Seq[BranchRule] = rules.filter(_.matches(branch))

  /** The checks that must pass before a merge lands on `branch`. */
  def requiredChecks(branch: String): Seq[String] = covering(branch).flatMap(_.requiredChecks).distinct

  /** True when a merge into `branch` must make a merge commit (it never fast-forwards). */
  def mergeCommitOnly(branch: String): Boolean = covering(branch).exists(r => r.requireMerge || r.requiredChecks.nonEmpty)

  /**
   * Why `move` of `branch` is refused: the rule and what to do, or None when it is allowed. Creating a branch is
   * always allowed (a rule may precede its branch).
   */
  def refusal(branch: String, move: Move): Option[(BranchRule, String)] = covering(branch).iterator.flatMap { r =>
    val why: Option[String] = move match {
      case Move.Commit(false) if r.requireMerge =>
        Some(s"Write to another branch, then merge (or publish) it into '$branch'.")
      case Move.Reset(ff, merge) if !r.allowForce && !(ff && (merge || !r.requireMerge) && r.requiredChecks.isEmpty) =>
        Some(if (r.requireMerge || r.requiredChecks.nonEmpty) s"Merge into '$branch' instead of resetting it."
          else s"Only a fast-forward may move '$branch'.")
      case Move.Push(forced) if r.requireMerge || r.requiredChecks.nonEmpty || (forced && !r.allowForce) =>
        Some(s"Push to another branch of that repository, then merge it into '$branch' there.")
      case Move.Delete | Move.Rename if !r.allowDelete =>
        Some(s"Change the rule (allow_delete) or remove it first if '$branch' should go.")
      case _ => None
    }
    why.map(w => r -> w)
  }.toSeq.headOption
}
