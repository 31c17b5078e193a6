package versioned.spark.governance

import org.apache.spark.sql.SparkSession
import versioned.core._
import versioned.spark.merge.{MergeOptions, MergeOutcome, Merger, TableStat}

/**
 * What a publish did (or, dry, would do): the merge's outcome, the checks run on the image that lands. A dry run whose
 * image fails a check the target requires (of severity error) is `check_failed`: the publish would be refused.
 */
final case class PublishOutcome(merge: MergeOutcome, into: String, branchDeleted: Boolean, checks: Seq[CheckRun],
                                blockedBy: Seq[CheckRun] = Nil) {
  def status: String = if (blockedBy.nonEmpty) PublishOutcome.CheckFailed else merge.status
  def stats: Seq[TableStat] = merge.stats
}

object PublishOutcome {
  /** The status of a dry run that the target's required checks would refuse. */
  val CheckFailed = "check_failed"
}

/**
 * Write-audit-publish (docs/GOVERNANCE.md): `publish` merges a branch into another through the gates, every table
 * the branch changed in one image (one merge commit), and optionally deletes the branch afterwards. A dry run
 * makes the merged image, runs the target's required checks on it (every check of the repository when it requires
 * none), records the runs, and forgets the image: nothing lands.
 */
object Publisher {
  def publish(spark: SparkSession, engine: Engine, repo: String, branch: String, into: String, deleteBranch: Boolean,
              dryRun: Boolean, message: Option[String], author: String): PublishOutcome = {
    Names.validate(Names.Branch, branch); Names.validate(Names.Branch, into)
    if (engine.branchHeadOption(repo, branch).isEmpty) throw new RefNotFoundException(
      s"Branch '$branch' does not exist in '$repo'; publish takes a branch to merge.")
    val required = engine.protections.requiredChecks(repo, into)
    var probed = Seq.empty[CheckRun]
    var blocking = Seq.empty[CheckRun] // what the gate would refuse: failures of required checks only
    val probe: Image => Unit = { image =>
      val names = if (required.nonEmpty) required else engine.checks.list(repo).map(_.name)
      val (runs, failed) = SparkCheckGate.evaluate(spark, engine, repo, image, names, s"publish-dry-run:$into")
      probed = runs
      blocking = if (required.nonEmpty) failed else Nil
    }
    val opts = MergeOptions(dryRun = dryRun, message = message.orElse(Some(s"publish $branch into $into")),
      author = author, probe = Some(probe).filter(_ => dryRun))
    val merged = new Merger(spark, engine).merge(repo, branch, into, opts)
    if (merged.status == MergeOutcome.Conflicts) throw new MergeConflictException(s"Publishing '$branch' into " +
      s"'$into' of '$repo' meets ${merged.conflictCount} conflict(s). Nothing was published. Merge '$into' into " +
      s"'$branch' and resolve them there (the merge_conflicts procedure lists them), then publish again.")
    val landed = if (dryRun) probed else merged.commitHash.toSeq.flatMap { h =>
      val runs = engine.checks.runs(repo).filter(r => r.image == h && r.purpose == s"gate:$into")
      runs.filter(_.runId == runs.headOption.map(_.runId).getOrElse("")).map(_.run)
    }
    val deleted = !dryRun && deleteBranch && merged.status != MergeOutcome.Conflicts && {
      engine.refs.deleteBranch(repo, branch); true
    }
    val outcome = PublishOutcome(merged, into, deleted, landed, blocking)
    org.slf4j.LoggerFactory.getLogger(getClass).info(s"versioned: publish $repo $branch into $into: ${outcome.status}" +
      s"${if (dryRun) " (dry run)" else ""}, ${landed.size} check(s), branch ${if (deleted) "deleted" else "kept"}")
    outcome
  }
}
