package versioned.spark.merge

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types._
import versioned.core.Revision
import versioned.spark.VersionedTestBase

/** Helpers of the merge suites: a small keyed table, branch writes, merges through the public Scala API. */
abstract class MergeTestBase extends VersionedTestBase {
  protected val schema: StructType = new StructType().add("id", IntegerType, nullable = false)
    .add("a", StringType).add("b", IntegerType)

  protected def upsert(rows: Seq[Row], table: String = "r.t", branch: String = "main", deletes: Seq[Int] = Nil): Unit = {
    val s = schema.add("_del", BooleanType)
    val all = rows.map(r => Row.fromSeq(r.toSeq :+ false)) ++ deletes.map(k => Row(k, null, null, true))
    write(frame(s, all), table, "branch" -> branch, "upsert" -> "true", "deleteColumn" -> "_del", "primaryKey" -> "id")
  }

  protected def seed(rows: Seq[Row], table: String = "r.t"): Unit =
    write(frame(schema, rows), table, "primaryKey" -> "id")

  protected def at(ref: String, table: String = "r.t"): Seq[Row] = read(table, "ref" -> ref).collect().toSeq

  protected def merge(source: String, into: String = "main", strategy: String = null, ff: String = null,
                      dryRun: Boolean = false, resolutions: Map[String, DataFrame] = Map.empty,
                      unrelated: Boolean = false): MergeOutcome =
    versioned.spark.api.VersionedApi.merge(spark, null, "r", source, into, strategy, ff, dryRun, null, "tester",
      if (resolutions.isEmpty) null else java.util.Map.copyOf(scala.jdk.CollectionConverters.MapHasAsJava(resolutions).asJava),
      unrelated)

  protected def hash(ref: String): String = engine.resolve("r", Revision.Spec(ref)).hash

  protected def conflictRows(o: MergeOutcome): Set[(String, String, String, String)] =
    o.conflicts.collect().map(r => (r.getString(0), r.getString(1), r.getString(2), r.getString(6))).toSet
}
