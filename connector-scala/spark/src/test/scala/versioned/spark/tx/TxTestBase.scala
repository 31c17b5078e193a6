package versioned.spark.tx

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import versioned.spark.VersionedTestBase

/** Repository r with tables a and b (keyed) and c (key-less), and what a failed transaction must keep. */
abstract class TxTestBase extends VersionedTestBase {
  protected val keyed: StructType = new StructType().add("id", IntegerType, nullable = false).add("v", StringType)
  protected val keyless: StructType = new StructType().add("k", StringType).add("n", IntegerType)

  protected def rowsOf(ids: Range, v: String): Seq[Row] = ids.map(i => Row(i, s"$v$i"))

  /** Repository r: a (id 1..60), b (id 1..60), c (key-less, 30 rows) on main, one commit each. */
  protected def seed(): Unit = {
    write(frame(keyed, rowsOf(1 to 60, "a")), "r.a", "primaryKey" -> "id")
    write(frame(keyed, rowsOf(1 to 60, "b")), "r.b", "primaryKey" -> "id")
    write(frame(keyless, (1 to 30).map(i => Row(s"k${i % 5}", i % 3))), "r.c")
  }

  protected def at(table: String, ref: String = "main"): Seq[Row] = read(s"r.$table", "ref" -> ref).collect().toSeq

  /** Everything a failed transaction must leave as it was: refs, log length and every table's rows. */
  protected def everything(): (Seq[(String, String)], Int, Map[String, Map[Row, Int]]) =
    (engine.refs.all("r").map(r => r.fullName -> r.image).sorted, logSize("r"),
      engine.tables("r", headHash("r").get).map(t => t.name -> multiset(at(t.name))).toMap)
}
