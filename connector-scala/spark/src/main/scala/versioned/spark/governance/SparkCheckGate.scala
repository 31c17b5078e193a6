package versioned.spark.governance

import org.apache.spark.sql.SparkSession
import versioned.core._

/**
 * The engine's [[CheckGate]] in a Spark process (found by the engine through `java.util.ServiceLoader`): runs a
 * gated commit's required checks on its image in the active session, records every run, and raises CHECK_FAILED
 * naming each failed check of severity error (its failing row count and sample keys, or why it could not run).
 */
final class SparkCheckGate extends CheckGate {
  override def enforce(engine: Engine, repo: String, image: Image, checks: Seq[String], purpose: String): Unit = {
    val spark = SparkSession.getActiveSession.orElse(SparkSession.getDefaultSession).getOrElse(
      throw new CheckFailedException(checks, s"Checks ${checks.mkString(", ")} of '$repo' must pass first, and no Spark " +
        "session is active to run them. Nothing was committed."))
    val (runs, failed) = SparkCheckGate.evaluate(spark, engine, repo, image, checks, purpose)
    if (failed.nonEmpty) throw SparkCheckGate.failure(repo, image, failed, s"Nothing was committed: '${purpose.stripPrefix("gate:")}' did not move.")
  }
}

object SparkCheckGate {
  /** Runs and records the named checks on `image`; returns the runs and those that block (severity error, not passed). */
  def evaluate(spark: SparkSession, engine: Engine, repo: String, image: Image, checks: Seq[String],
               purpose: String): (Seq[CheckRun], Seq[CheckRun]) = {
    val defs = engine.checks.list(repo)
    // the checks run asks for by name, else those a protection rule requires
    val hint = if (purpose == "run") s"Checks of '$repo': ${if (defs.isEmpty) "none" else defs.map(_.name).sorted.mkString(", ")}; " +
        "add it first (add_check)." else "A protection rule requires it: add it again, or change the rule."
    val named = checks.map(n => defs.find(_.name == n).getOrElse(throw new CheckNotFoundException(
      s"'$repo' has no check '$n'. $hint")))
    val runs = CheckRunner.run(spark, engine, repo, image, named)
    engine.checks.record(repo, image.hash, runs, Option(spark.sparkContext.sparkUser).getOrElse(""), purpose)
    (runs, runs.filter(r => r.failed && r.severity == CheckDef.Error))
  }

  def failure(repo: String, image: Image, failed: Seq[CheckRun], outcome: String): CheckFailedException =
    new CheckFailedException(failed.map(_.check), s"${failed.size} check(s) of '$repo' failed on image ${image.shortHash}: " +
      s"${failed.map(_.describe).mkString("; ")}. $outcome Fix the data on the source branch and merge again; every run " +
      "is in the metadata table $checks.")
}
