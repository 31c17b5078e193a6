package versioned.spark.catalog

import org.apache.spark.sql.SparkSession
import versioned.core.{BranchMoved, Engine}

/**
 * Spark's cache of a catalog's tables follows their branches (as Iceberg's catalog): when a branch moves in this
 * process (a commit through any surface, a merge, a reset), the cached reads of the tables it changed, by name
 * (`t` for the default branch, `t@branch`), are refreshed: Spark reloads each from the catalog, at the branch's new
 * head, and recomputes its cached data when it is next used. A DataFrame cached from a catalog table therefore sees
 * the commit. Moves made by another process are seen after `REFRESH TABLE`, as with any Spark cache.
 */
private[catalog] object CatalogCache {
  /** Registers the refresh of catalog `catalog`'s cached tables on `engine` (once per engine and catalog name). */
  def follow(engine: Engine, catalog: String): Unit =
    engine.moves.listen(s"spark-cache:$catalog")(move => refresh(engine, catalog, move))

  private def refresh(engine: Engine, catalog: String, move: BranchMoved): Unit =
    SparkSession.getActiveSession.collect { case s: org.apache.spark.sql.classic.SparkSession => s }.foreach { spark =>
      val cache = spark.sharedState.cacheManager
      if (!cache.isEmpty) {
        val tables = move.tables.getOrElse(engine.tables(move.repo, move.image).map(_.name))
        val onDefault = engine.defaultBranch(move.repo) == move.branch
        val names = tables.flatMap(t => (if (onDefault) Seq(t) else Nil) :+ s"$t@${move.branch}")
        names.foreach(n => cache.recacheTableOrView(spark, Seq(catalog, move.repo, n), includeTimeTravel = false))
      }
    }
}
