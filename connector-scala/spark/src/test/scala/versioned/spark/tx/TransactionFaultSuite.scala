package versioned.spark.tx

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import versioned.spark.safety.{Faults, FaultyWarehouseSuite}

/**
 * A transaction of three operations on three tables, with the n-th file operation failing, for n spread
 * over everything it does (staging, object writes, reads of its uncommitted versions, the commit, the
 * compaction after it, cleanup): it either raises and the branch and every table are as before, or it
 * returns and every table has its new content.
 */
class TransactionFaultSuite extends FaultyWarehouseSuite {
  private val keyed = new StructType().add("id", IntegerType, nullable = false).add("v", StringType)

  private def head: Option[String] = eng.branchHeadOption("r", "main").map(_.hash)
  private def df(rows: Seq[(Int, String)]) =
    spark.createDataFrame(spark.sparkContext.parallelize(rows.map { case (i, v) => Row(i, v) }, 2), keyed)
  private def tables: Map[String, Set[Row]] = Seq("a", "b", "c").map(t => t -> read(s"r.$t").collect().toSet).toMap

  test("a transaction over three tables is all or nothing under storage faults") {
    Seq("a", "b", "c").foreach(t => write(df((1 to 120).map(i => i -> s"$t$i")), s"r.$t", "primaryKey" -> "id"))
    var k = 0
    def attempt(): Unit = {
      k += 1
      Transaction.run(spark, "r", message = s"tx $k") { tx =>
        tx.upsert(df(Seq(k -> s"u$k", (500 + k) -> s"n$k")), "a")
        tx.write(df((1 to 120).map(i => i -> (if (i % 10 == k % 10) s"o$k" else s"b$i"))), "b", mode = "overwrite")
        tx.deleteWhere("c", s"id = ${200 - k} or id = $k")
      }
    }
    def expected(before: Map[String, Set[Row]]): Map[String, Set[Row]] = Map(
      "a" -> (before("a").filterNot(r => r.getInt(0) == k || r.getInt(0) == 500 + k) ++ Set(Row(k, s"u$k"), Row(500 + k, s"n$k"))),
      "b" -> (1 to 120).map(i => Row(i, if (i % 10 == k % 10) s"o$k" else s"b$i")).toSet,
      "c" -> before("c").filterNot(r => r.getInt(0) == k || r.getInt(0) == 200 - k))
    val probe = tables
    Faults.arm(0) // the transaction's operations only, numbered as in the attempts below
    attempt()
    val ops = Faults.operations
    val kinds = Faults.kindsSinceArmed
    assert(tables == expected(probe), "the transaction without faults")
    assert(ops > 10, s"the transaction made only $ops file operations")
    val points = Faults.points(kinds)
    var raised = 0
    points.foreach { n =>
      val (h0, before) = (head, tables)
      Faults.arm(n)
      val outcome = try { attempt(); None } catch { case t: Throwable => Some(t) }
      Faults.disarm()
      outcome match {
        case Some(t) =>
          raised += 1
          assert(head == h0, s"fault at operation $n: the transaction raised ($t) but the branch moved")
          assert(tables == before, s"fault at operation $n: the transaction raised but a table changed")
        case None =>
          assert(head != h0, s"fault at operation $n: the transaction returned without a commit")
          assert(tables == expected(before), s"fault at operation $n: the transaction returned but a table is wrong")
          assert(eng.history.log("r", versioned.core.Revision.Spec("main"), 1).head.tablesChanged == Seq("a", "b", "c"))
      }
    }
    info(s"$ops file operations of ${kinds.distinct.size} kinds; faults at ${points.size} of them: $raised transactions raised and committed nothing, " +
      s"${points.size - raised} committed all three tables")
    assert(raised > 0, "no injected fault made the transaction fail")
  }
}
