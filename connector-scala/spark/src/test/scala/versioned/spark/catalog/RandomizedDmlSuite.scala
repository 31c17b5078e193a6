package versioned.spark.catalog

import scala.util.Random
import org.apache.spark.sql.Row

/**
 * Seeded random sequences of SQL INSERT / UPDATE / DELETE / MERGE, DataFrame upserts, overwrites and re-keying
 * overwrites against an in-memory oracle, with Spark's defaults (adaptive execution on) and background
 * compaction as users run it. After every statement the head equals the oracle; a MERGE whose source holds a
 * matched key twice fails and commits nothing.
 *
 * Rows are (id, item, qty) with `item` derived from `id`, so both columns are unique and either can be the key.
 */
class RandomizedDmlSuite extends CatalogSuiteBase {
  private final case class State(rows: Map[Long, Int], key: String)

  private def item(id: Long) = s"k$id"
  private def values(rows: Iterable[(Long, Int)]) = rows.map { case (i, q) => s"($i, '${item(i)}', $q)" }.mkString(", ")

  private def check(step: String, s: State): Unit = {
    val got = spark.table("c.d.t").collect().map(r => (r.getLong(0), r.getString(1), r.getInt(2))).sortBy(_._1).toSeq
    val want = s.rows.toSeq.sortBy(_._1).map { case (i, q) => (i, item(i), q) }
    if (got != want) {
      val odd = ((got diff want) ++ (want diff got)).map(_._1).distinct.take(3)
      val trail = engine.history.log("d", versioned.core.Revision.DefaultBranch).map { e =>
        val at = spark.read.format("versioned").option("image", e.image.hash).load("d.t")
          .where(s"id IN (${odd.mkString(",")})").collect().mkString(" ")
        s"${e.image.shortHash} '${e.image.message}': $at"
      }
      fail(s"$step: differs: extra ${(got diff want).take(5)}, missing ${(want diff got).take(5)}; history of those keys, newest first:\n${trail.mkString("\n")}")
    }
  }

  private def run(seed: Long, steps: Int): Unit = {
    val r = new Random(seed)
    sql("CREATE NAMESPACE IF NOT EXISTS c.d")
    sql("CREATE TABLE c.d.t (id BIGINT, item STRING, qty INT, PRIMARY KEY (id))")
    var s = State(Map.empty, "id")
    var next = 0L
    def fresh(n: Int): Seq[Long] = (0 until n).map { _ => next += 1 + r.nextInt(3); next }
    def some(n: Int): Seq[Long] = r.shuffle(s.rows.keys.toSeq).take(n)
    def range: (Long, Long) = { val a = r.nextInt((next + 1).toInt).toLong; (a, a + r.nextInt(40)) }
    val initial = fresh(60 + r.nextInt(60)).map(_ -> r.nextInt(100))
    sql(s"INSERT INTO c.d.t VALUES ${values(initial)}")
    s = s.copy(rows = initial.toMap)
    check(s"seed $seed: first insert", s)
    for (step <- 1 to steps) {
      val what = r.nextInt(9)
      val label = s"seed $seed step $step (op $what, key ${s.key})"
      what match {
        case 0 =>
          val rows = fresh(1 + r.nextInt(8)).map(_ -> r.nextInt(100))
          sql(s"INSERT INTO c.d.t VALUES ${values(rows)}")
          s = s.copy(rows = s.rows ++ rows)
        case 1 =>
          val (m, d) = (2 + r.nextInt(5), 1 + r.nextInt(9))
          val k = r.nextInt(m)
          sql(s"UPDATE c.d.t SET qty = qty + $d WHERE id % $m = $k")
          s = s.copy(rows = s.rows.map { case (i, q) => i -> (if (i % m == k) q + d else q) })
        case 2 =>
          val (a, b) = range
          sql(s"UPDATE c.d.t SET qty = -qty WHERE id BETWEEN $a AND $b")
          s = s.copy(rows = s.rows.map { case (i, q) => i -> (if (i >= a && i <= b) -q else q) })
        case 3 =>
          val (a, b) = range
          sql(s"DELETE FROM c.d.t WHERE id BETWEEN $a AND $b")
          s = s.copy(rows = s.rows.filterNot { case (i, _) => i >= a && i <= b })
        case 4 | 5 =>
          val src = (some(1 + r.nextInt(6)) ++ fresh(r.nextInt(4))).map(i => i -> (r.nextInt(60) - 10))
          val cond = if (s.key == "id") "t.id = s.id" else "t.item = s.item"
          sql(s"""MERGE INTO c.d.t t USING (SELECT * FROM VALUES ${values(src)} AS v(id, item, qty)) s ON $cond
                 |WHEN MATCHED AND s.qty < 0 THEN DELETE WHEN MATCHED THEN UPDATE SET t.qty = s.qty
                 |WHEN NOT MATCHED THEN INSERT *""".stripMargin)
          val (gone, set) = src.partition { case (i, q) => q < 0 && s.rows.contains(i) }
          s = s.copy(rows = s.rows -- gone.map(_._1) ++ set)
        case 6 if s.rows.nonEmpty =>
          val dup = some(1).head
          failsWithoutCommit("d") {
            sql(s"""MERGE INTO c.d.t t USING (SELECT * FROM VALUES ${values(Seq(dup -> 1, dup -> 2))} AS v(id, item, qty)) s
                   |ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *""".stripMargin).collect()
          }
        case 7 =>
          val rows = some(1 + r.nextInt(5)).map(_ -> r.nextInt(100)) ++ fresh(r.nextInt(3)).map(_ -> r.nextInt(100))
          spark.createDataFrame(rows.map { case (i, q) => (i, item(i), q) }).toDF("id", "item", "qty")
            .write.format("versioned").mode("append").option("upsert", "true").save("d.t")
          s = s.copy(rows = s.rows ++ rows)
        case _ =>
          // an overwrite: some rows dropped, some changed, and half the time the key switches column
          val kept = s.rows.filter(_ => r.nextInt(10) > 0).map { case (i, q) => i -> (if (r.nextInt(5) == 0) q + 1000 else q) }
          val key = if (r.nextBoolean()) s.key else if (s.key == "id") "item" else "id"
          spark.createDataFrame(kept.toSeq.map { case (i, q) => (i, item(i), q) }).toDF("id", "item", "qty")
            .write.format("versioned").mode("overwrite").option("primaryKey", key).save("d.t")
          s = State(kept, key)
      }
      check(label, s)
    }
  }

  versioned.core.TestDepth(Seq(11L, 23L), Seq(11L, 23L, 37L)).foreach { seed =>
    test(s"random SQL DML, upserts, overwrites and re-keying against the oracle (seed $seed)") {
      run(seed, 30)
    }
  }
}
