package versioned.spark.catalog

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.execution.columnar.InMemoryRelation
import versioned.core.Revision
import versioned.spark.api.VersionedApi

/**
 * Spark's cache of a table follows the table's branch: a commit or a ref move made in this process through the API,
 * a procedure or a DataFrame write refreshes the cached reads of the tables it changed (as Iceberg's catalog does),
 * and a read of a branch never returns a cached version the branch has left.
 */
class CacheRefreshSuite extends CatalogSuiteBase {
  private def ids(df: DataFrame): Seq[Int] = df.collect().map(_.getInt(0)).toSeq.sorted
  /** The rows of a new read of `name`, and whether Spark served it from its cache. */
  private def cachedRead(name: String): (Seq[Int], Boolean) = {
    val df = spark.table(name)
    (ids(df), df.queryExecution.withCachedData.exists(_.isInstanceOf[InMemoryRelation]))
  }

  test("a cached catalog table follows commits made through the API, a procedure and a DataFrame write") {
    keyedTable((1, "a"))
    val cached = spark.table("c.r.t")
    cached.cache()
    assert(ids(cached) == Seq(1))
    val branch = engine.defaultBranch("r")
    write(spark.createDataFrame(Seq((2, "b"))).toDF("id", "v"), "r.t", "upsert" -> "true")
    assert(cachedRead("c.r.t") == (Seq(1, 2), true), "the cache missed a DataFrame write")
    VersionedApi.createBranch(spark, null, "r", "dev", branch)
    spark.table("c.r.`t@dev`").cache()
    sql("INSERT INTO c.r.`t@dev` VALUES (3, 'c')")
    assert(cachedRead("c.r.`t@dev`") == (Seq(1, 2, 3), true), "the cache of a branch's table missed an INSERT")
    sql("CALL c.system.merge(repository => 'r', source => 'dev')").collect()
    assert(cachedRead("c.r.t") == (Seq(1, 2, 3), true), "the cache missed a merge procedure")
    val first = engine.history.log("r", Revision.DefaultBranch).reverse(1).image.hash // the INSERT of (1, a)
    sql(s"CALL c.system.reset_branch('r', '$branch', '$first')").collect()
    assert(cachedRead("c.r.t") == (Seq(1), true), "the cache missed a reset")
    // a DataFrame is a table at a version: the one cached first still reads the version it was analyzed at
    assert(ids(cached) == Seq(1))
  }

  test("a read by path of a branch never returns a cached version the branch has left") {
    keyedTable((1, "a"))
    val old = read("r.t")
    old.cache()
    assert(ids(old) == Seq(1))
    write(spark.createDataFrame(Seq((2, "b"))).toDF("id", "v"), "r.t", "upsert" -> "true")
    assert(ids(read("r.t")) == Seq(1, 2), "a fresh read returned the cached old version")
    assert(sorted(read("r.t")) == Seq(Row(1, "a"), Row(2, "b")))
    assert(ids(old) == Seq(1), "the cached DataFrame reads the version it was analyzed at")
  }
}
