package versioned.spark.catalog

import org.apache.spark.sql.{DataFrame, Row}
import versioned.core.{ObjectMeta, Revision, TableVersion, VersionedException}
import versioned.spark.VersionedSparkSuite

/** Base of the SQL catalog suites: a session with catalog `c` and helpers over the engine. */
abstract class CatalogSuiteBase extends VersionedSparkSuite {
  /** Only the catalog: commit-time compaction keeps its defaults, as users run it. */
  override protected def extraConf: Map[String, String] = Map(
    "spark.sql.catalog.c" -> classOf[VersionedCatalog].getName)

  /** A statement (commands run eagerly), then the background compaction of what it committed. */
  protected def sql(q: String): DataFrame = { val df = spark.sql(q); awaitCompaction(); df }

  /** `branch`, or (null) the repository's default branch, as a user who names none means. */
  protected def branchOr(repo: String, branch: String): String = Option(branch).getOrElse(engine.defaultBranchOrConfig(repo))

  protected def headOf(repo: String, branch: String = null): Option[String] =
    engine.branchHeadOption(repo, branchOr(repo, branch)).map(_.hash)

  protected def commits(repo: String, branch: String = null): Int = {
    val b = branchOr(repo, branch)
    engine.branchHeadOption(repo, b).map(_ => engine.history.log(repo, Revision.Spec(b)).size).getOrElse(0)
  }

  protected def tableAt(repo: String, table: String, rev: String = null): Option[TableVersion] =
    engine.tableOption(repo, engine.resolve(repo, Revision.Spec(branchOr(repo, rev))).hash, table)

  protected def objectsOf(t: TableVersion): Seq[ObjectMeta] = {
    val ids = t.fragments.flatMap(_.objects)
    val metas = engine.objects(ids)
    ids.map(metas)
  }

  protected def sorted(df: DataFrame): Seq[Row] = df.collect().toSeq.sortBy(_.toString)

  /** The first [[VersionedException]] in the cause chain (Spark wraps some failures). */
  protected def versionedCause(t: Throwable): Option[VersionedException] =
    Iterator.iterate(t)(_.getCause).takeWhile(_ != null).take(64).collectFirst { case v: VersionedException => v }

  /** Runs `f` expecting a failure; asserts the branch head did not move; returns the error. */
  protected def failsWithoutCommit(repo: String, branch: String = null)(f: => Any): Throwable = {
    val before = headOf(repo, branch)
    val t = intercept[Throwable](f)
    assert(headOf(repo, branch) == before, s"branch $branch of $repo moved although the statement failed: $t")
    t
  }

  /** Expects a [[VersionedException]] of `errorClass` whose message mentions `parts`. */
  protected def expectError(errorClass: String, parts: String*)(t: Throwable): VersionedException = {
    val v = versionedCause(t).getOrElse(fail(s"expected [$errorClass], got $t", t))
    assert(v.errorClass == errorClass, s"expected $errorClass, got ${v.getMessage}")
    parts.foreach(p => assert(v.getMessage.contains(p), s"message should mention '$p': ${v.getMessage}"))
    v
  }

  /** A repository `r` with a keyed table `r.t (id INT, v STRING)` holding `rows`. */
  protected def keyedTable(rows: (Int, String)*): Unit = {
    sql("CREATE NAMESPACE IF NOT EXISTS c.r")
    sql("CREATE TABLE c.r.t (id INT, v STRING, PRIMARY KEY (id))")
    if (rows.nonEmpty) sql(s"INSERT INTO c.r.t VALUES ${rows.map { case (i, v) => s"($i, '$v')" }.mkString(", ")}")
  }
}
