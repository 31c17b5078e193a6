package versioned.spark.read

import scala.jdk.CollectionConverters._
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import versioned.spark.{VersionedSource, VersionedSparkSuite, VersionedTable}

/**
 * A load resolves its revision once: the table Spark gets from the provider is the one whose schema it
 * asked for, so schema and rows come from one version even when a commit lands in between; and internal
 * (pinned) reads keep working long after they were loaded (their request lives in the table, not in a
 * registry that could forget it).
 */
class OneLoadSuite extends VersionedSparkSuite {

  test("schema and table of one load come from one resolution") {
    val s = spark
    import s.implicits._
    write(Seq((1L, "a")).toDF("id", "v"), "r.t", "primaryKey" -> "id")
    val first = engine.resolve("r", versioned.core.Revision.DefaultBranch)
    val options = Map("path" -> "r.t")
    val source = new VersionedSource
    val schema = source.inferSchema(new CaseInsensitiveStringMap(options.asJava))
    write(Seq((2L, "b")).toDF("id", "v"), "r.t") // a commit between Spark's two questions
    val table = source.getTable(schema, Array.empty, options.asJava).asInstanceOf[VersionedTable]
    assert(table.requireSnapshot.image.hash == first.hash)
    // the provider answers once: asked again, it resolves again (the newest commit)
    val again = source.getTable(schema, Array.empty, options.asJava).asInstanceOf[VersionedTable]
    assert(again.requireSnapshot.image.hash != first.hash)
  }

  test("a pinned internal read stays usable after many other internal reads") {
    val s = spark
    import s.implicits._
    write(Seq((1L, "a"), (2L, "b")).toDF("id", "v"), "r.t", "primaryKey" -> "id")
    val head = engine.resolve("r", versioned.core.Revision.DefaultBranch).hash
    val pinned = PinnedRead.table(spark, Map.empty, versioned.spark.session.TableIdent("r", "t"), head)
    (0 until 50).foreach(_ => PinnedRead.table(spark, Map.empty, versioned.spark.session.TableIdent("r", "t"), head))
    assert(PinnedRead.loading == 0, "a token lives for its load only")
    assert(pinned.filter("id = 2").select("v").as[String].collect().toSeq == Seq("b"))
    assert(pinned.count() == 2)
  }
}
