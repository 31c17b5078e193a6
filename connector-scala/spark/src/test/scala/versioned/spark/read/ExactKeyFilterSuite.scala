package versioned.spark.read

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import versioned.spark.VersionedTestBase
import versioned.spark.session.VersionedOptions

/**
 * Filters that are exactly a set of values of an integral first key are applied by the scan's readers, so Spark
 * plans no filter for them (and compiles no code per looked-up value); the results stay exact with DIFFs present,
 * when the key is not selected, with a LIMIT, with other filters beside them, and for keys the readers cannot
 * restrict (strings), which keep Spark's filter.
 */
class ExactKeyFilterSuite extends VersionedTestBase {
  override protected def extraConf: Map[String, String] = Map(VersionedOptions.ConfFragmentRows -> "1000")

  private def filters(df: org.apache.spark.sql.DataFrame): Int =
    df.queryExecution.executedPlan.collect { case f: org.apache.spark.sql.execution.FilterExec => f }.size

  test("key-set filters on an integral key are the scan's own; results equal a plain filter over every row") {
    val schema = new StructType().add("id", LongType).add("v", IntegerType).add("s", StringType)
    val base = (0L until 5000L).map(i => Row(i, i.toInt, s"s$i"))
    write(frame(schema, base, partitions = 2), "k.t", "primaryKey" -> "id")
    // updates and deletes in DIFFs, next to rows of other keys in the same pages
    val changes = (0L until 5000L by 7L).map(i => Row(i, -i.toInt, s"u$i"))
    write(frame(schema, changes), "k.t", "upsert" -> "true")
    val deletes = new StructType().add("id", LongType).add("v", IntegerType).add("s", StringType).add("_del", BooleanType)
    write(frame(deletes, Seq(14L, 2100L, 4998L).map(i => Row(i, 0, "", true))), "k.t", "upsert" -> "true", "deleteColumn" -> "_del")
    val expected = read("k.t").collect().map(r => r.getLong(0) -> r).toMap // the whole table, no key filter
    assert(expected.size == 4997)
    def check(cond: String, keys: Set[Long], exact: Boolean, cols: Seq[String] = Seq("id", "v", "s")): Unit = {
      val df = read("k.t").filter(cond).select(cols.map(org.apache.spark.sql.functions.col): _*)
      val want = keys.toSeq.flatMap(expected.get).map(r => Row(cols.map(c => r.get(r.fieldIndex(c))): _*)).sortBy(_.toString)
      assert(df.collect().toSeq.sortBy(_.toString) == want, cond)
      assert((filters(df) == 0) == exact, s"$cond: ${df.queryExecution.executedPlan}")
    }
    check("id = 4000", Set(4000L), exact = true)
    check("id = 14", Set.empty, exact = true) // deleted
    check("id IN (7, 8, 2100, 4999, 123456)", Set(7L, 8L, 4999L), exact = true)
    check("id = 7 OR id = 701 OR id IN (3, 9)", Set(7L, 701L, 3L, 9L), exact = true, cols = Seq("v"))
    check("id IN (1, 2, 3) AND id IN (2, 3, 4)", Set(2L, 3L), exact = true, cols = Seq("s"))
    check("id IN (1, 2, 3, 4) AND v > 2", Set(3L, 4L), exact = false)
    check("id BETWEEN 10 AND 20", (10L to 20L).toSet, exact = false)
    assert(read("k.t").filter("id IN (7, 8, 9)").count() == 3)
    assert(read("k.t").filter("id IN (7, 8, 9)").limit(2).collect().length == 2)
    assert(read("k.t").filter("id IN (7, 8, 9)").select("v").limit(5).collect().map(_.getInt(0)).sorted.toSeq == Seq(-7, 8, 9))
  }

  test("a string key keeps Spark's filter") {
    val schema = new StructType().add("k", StringType).add("v", IntegerType)
    write(frame(schema, (0 until 3000).map(i => Row(f"k$i%05d", i))), "sk.t", "primaryKey" -> "k")
    val df = read("sk.t").filter("k IN ('k00010', 'k02999', 'nope')")
    assert(df.collect().map(_.getInt(1)).sorted.toSeq == Seq(10, 2999))
    assert(filters(df) == 1)
  }
}
