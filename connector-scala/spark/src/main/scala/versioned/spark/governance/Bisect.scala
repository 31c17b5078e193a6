package versioned.spark.governance

import org.apache.spark.sql.SparkSession
import versioned.core._

/** Where a check starts failing: the first bad commit, and every run made to find it (commit, status). */
final case class BisectOutcome(firstBad: Image, lastGood: Image, runs: Seq[(String, CheckRun)], candidates: Int)

/**
 * `bisect` (docs/GOVERNANCE.md): the first commit on the first-parent line from `good` (exclusive) to `bad` where a
 * check (a stored check's name, or a SQL query returning failing rows) fails, by binary search: O(log n) check
 * runs for n commits, each recorded (purpose `bisect`). `good` must be a first-parent ancestor of `bad`; the check
 * must fail on `bad` (else there is nothing to find: INVALID_OPTION).
 */
object Bisect {
  def run(spark: SparkSession, engine: Engine, repo: String, check: String, good: Revision, bad: Revision): BisectOutcome = {
    val definition = engine.checks.list(repo).find(_.name == check).getOrElse {
      if (!check.trim.contains(" ")) throw new CheckNotFoundException(s"'$repo' has no check '$check'. Name a check " +
        "(procedure checks lists them) or give a SQL query that returns the failing rows.")
      val d = CheckDef.of("bisect_query", None, check, CheckDef.Error)
      CheckRunner.validate(spark, engine, repo, Some(engine.resolve(repo, bad)), d)
      d
    }
    val (goodImage, badImage) = (engine.resolve(repo, good), engine.resolve(repo, bad))
    // the first-parent line from bad back to good: line(0) = bad, ..., good excluded
    val line = Iterator.iterate(Option(badImage))(_.flatMap(_.parents.headOption.map(engine.image(repo, _))))
      .takeWhile(i => i.isDefined && !i.exists(_.hash == goodImage.hash)).flatten.toVector
    if (line.isEmpty || line.last.parents.headOption.forall(_ != goodImage.hash)) throw Errors.invalidOption(
      s"${goodImage.shortHash} is not a first-parent ancestor of ${badImage.shortHash} in '$repo': bisect walks the " +
        "first-parent line from the good revision to the bad one. Name a good revision on that line.")
    val candidates = line.reverse // oldest first; candidates.last = bad
    val runs = Vector.newBuilder[(String, CheckRun)]
    def fails(image: Image): Boolean = {
      val r = CheckRunner.run(spark, engine, repo, image, Seq(definition)).head
      engine.checks.record(repo, image.hash, Seq(r), Option(spark.sparkContext.sparkUser).getOrElse(""), "bisect")
      runs += image.hash -> r
      r.failed
    }
    if (!fails(candidates.last)) throw Errors.invalidOption(s"The check passes on the bad revision " +
      s"${badImage.shortHash} of '$repo': there is no first failing commit to find. Name a revision where it fails.")
    // invariant: the first failing commit is in candidates[lo..hi]; candidates(hi) fails
    var (lo, hi) = (0, candidates.size - 1)
    while (lo < hi) {
      val mid = (lo + hi) / 2
      if (fails(candidates(mid))) hi = mid else lo = mid + 1
    }
    val lastGood = if (lo == 0) goodImage else candidates(lo - 1)
    org.slf4j.LoggerFactory.getLogger(getClass).info(s"versioned: bisect $repo ${definition.name}: first failing " +
      s"commit ${candidates(lo).shortHash} after ${candidates.size} candidate(s), ${runs.result().size} run(s)")
    BisectOutcome(candidates(lo), lastGood, runs.result(), candidates.size)
  }
}
