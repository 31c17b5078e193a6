package versioned.spark.catalog

import org.apache.spark.sql.{Row, SparkSession}
import versioned.core.{Engine, ErrorClass, Image, InvalidInputException, Revision}
import versioned.spark.diff.DiffSummary

/**
 * The `$diff` metadata tables: [[DiffSummary]] between two revisions of a repository (`$diff`) or of one
 * table (`t$diff`). The revision names the range, `<from>..<to>` (ref names cannot contain `..`), or
 * `<from>` alone (to the head of the default branch), in the name (`t$diff@v1..main`) or as
 * `VERSION AS OF 'v1..main'`.
 */
private[catalog] object DiffView {
  private def usage(what: String) = new InvalidInputException(ErrorClass.InvalidRevision,
    s"$what `$$diff` compares two revisions: name them in the table name, `t$$diff@<from>..<to>` (or `$$diff@<from>..<to>` " +
      "for every table), or with VERSION AS OF '<from>..<to>'; `<from>` alone compares with the head of the default branch.")

  /** The two images a `$diff` revision names. */
  def range(engine: Engine, repo: String, rev: Revision): (Image, Image) = rev match {
    case Revision.Spec(s) =>
      val (from, to) = s.indexOf("..") match {
        case -1 => (s.trim, None)
        case i => (s.substring(0, i).trim, Some(s.substring(i + 2).trim))
      }
      if (from.isEmpty || to.exists(_.isEmpty)) throw usage(s"'$s' is not a range:")
      (engine.resolve(repo, Revision.Spec(from)), engine.resolve(repo, to.map(Revision.Spec).getOrElse(Revision.DefaultBranch)))
    case Revision.AsOf(_, _) => throw usage("TIMESTAMP AS OF names one version;")
    case Revision.DefaultBranch => throw usage("No revisions given:")
  }

  /** Checks the range (and that the table exists on one side) when the table is loaded. */
  def validate(engine: Engine, target: MetaTarget, rev: Revision): Unit = {
    val (from, to) = range(engine, target.repo, rev)
    target.table.foreach(DiffSummary.requireTable(engine, target.repo, from, to, _))
  }

  def rows(engine: Engine, target: MetaTarget, rev: Revision): Seq[Row] = {
    val (from, to) = range(engine, target.repo, rev)
    DiffSummary.rows(SparkSession.active, engine, target.repo, from, to, target.table)
  }
}
