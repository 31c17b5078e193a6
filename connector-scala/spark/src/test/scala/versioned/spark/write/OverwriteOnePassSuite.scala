package versioned.spark.write

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types._
import versioned.core.{ErrorClass, Hashing, ObjectKind, TableVersion}
import versioned.spark.VersionedTestBase
import versioned.spark.session.VersionedOptions

/**
 * Keyed overwrites of a table with the same columns and key take the one-pass path ([[OverwriteWrite]]):
 * tasks compare their key-sorted rows with the current rows and write only the changes. With default
 * settings (compaction on, fragments of 50 rows in these suites): the content equals the input (a plain
 * in-memory oracle), DIFF objects hold only changed rows, input that is not clustered by key is planned
 * from its rows, bad keys raise the typed errors and leave the branch and the store as they were.
 */
class OverwriteOnePassSuite extends VersionedTestBase {
  private val schema = new StructType().add("id", IntegerType).add("name", StringType).add("x", DoubleType)
  private def r(i: Int, name: String = null, x: Double = 0.0): Row = Row(i, if (name == null) s"n$i" else name, x)

  /** Rows in input partitions given explicitly (each partition's rows shuffled: Spark sorts them). */
  private def inParts(parts: Seq[Seq[Row]], s: StructType = schema): DataFrame =
    spark.createDataFrame(spark.sparkContext.parallelize(parts.map(p => scala.util.Random.shuffle(p)), math.max(1, parts.size))
      .flatMap(identity), s)

  private def head(table: String = "t"): TableVersion = {
    val e = engine
    e.table("r", e.branchHeadOption("r", "main").get, table)
  }

  /** Object files in the warehouse's store. */
  private def objectFiles: Set[String] = {
    val dir = new java.io.File(warehouse, "objects")
    Option(dir.listFiles()).toSeq.flatten.flatMap(d => Option(d.listFiles()).toSeq.flatten).map(_.getName)
      .filter(_.endsWith(".parquet")).toSet
  }

  /**
   * Overwrites r.t with `df`, checks the content against `expected` and the objects the commit added: DIFFs
   * only, at most one per fragment, holding `changed` rows in all. Returns whether the one-pass result was used.
   */
  private def overwriteChecked(df: DataFrame, expected: Seq[Row], changed: Int, clue: String, table: String = "t"): Boolean = {
    val before = head(table)
    val fallbacks = OverwriteCommit.fallbacks.get()
    overwrite(df, s"r.$table")
    assertSameRows(read(s"r.$table").collect().toSeq, expected, clue)
    val after = head(table)
    val old = (before.fragments ++ before.compacted.toSeq.flatten).flatMap(_.objects).toSet
    val added = after.fragments.flatMap(f => f.objects.filterNot(old).map(f -> _))
    val metas = engine.objects(added.map(_._2))
    assert(added.forall { case (_, id) => metas(id).kind == ObjectKind.Diff }, s"$clue: only DIFF objects are added")
    assert(added.map(_._1).distinct.size == added.size, s"$clue: one DIFF per fragment")
    assert(added.map { case (_, id) => metas(id).rowCount }.sum == changed, s"$clue: the DIFFs hold only the $changed changed rows")
    OverwriteCommit.fallbacks.get() == fallbacks
  }

  private def load(rows: Seq[Row], table: String = "t", s: StructType = schema, key: String = "id"): Unit =
    write(frame(s, rows, 4), s"r.$table", "primaryKey" -> key)

  test("input clustered by key (a scan of the table with a column changed): one pass, only changed rows written") {
    val rows = (0 until 1000).map(i => r(i))
    load(rows)
    val df = read("r.t").selectExpr("id", "case when id % 97 = 0 then concat(name, '!') else name end as name", "x")
    val expected = rows.map(x => if (x.getInt(0) % 97 == 0) r(x.getInt(0), s"n${x.getInt(0)}!") else x)
    assert(overwriteChecked(df, expected, 11, "clustered"), "clustered input takes the one-pass result")
    assert(stagedWrites.isEmpty)
    // and again on the version with DIFFs (chains merged by the reader), with explicit input partitions
    val again = expected.grouped(250).toSeq.map(_.map(x => if (x.getInt(0) % 101 == 1) r(x.getInt(0), "u", 1.0) else x))
    assert(overwriteChecked(inParts(again), again.flatten, 10, "clustered, second overwrite"))
  }

  test("input not clustered by key is planned from its rows, same content") {
    val rows = (0 until 600).map(i => r(i))
    load(rows)
    val rnd = new scala.util.Random(11)
    val next = rows.filter(_.getInt(0) % 13 != 0).map(x => if (x.getInt(0) % 7 == 0) r(x.getInt(0), "u", 2.0) else x) ++
      (600 until 640).map(i => r(i))
    val fallbacks = OverwriteCommit.fallbacks.get()
    overwrite(frame(schema, rnd.shuffle(next), 4), "r.t")
    assertSameRows(read("r.t").collect().toSeq, next, "random input")
    assert(OverwriteCommit.fallbacks.get() == fallbacks + 1, "overlapping tasks fall back")
    assert(stagedWrites.isEmpty)
  }

  test("inserts, updates and deletes before the first fragment, between tasks' ranges and after the last") {
    val rows = (0 until 2000 by 2).map(i => r(i)) // 1000 rows, 20 fragments
    load(rows)
    val p1 = (-20 until -10).map(i => r(i)) // before the first fragment; current keys below 300 deleted
    val p2 = (300 to 700).flatMap { i =>
      if (i % 2 == 1) { if (i % 10 == 1) Some(r(i, "ins")) else None } // inserts between current keys
      else if (i % 11 == 0) None // deletes inside the task's range
      else if (i % 7 == 0) Some(r(i, "upd", 1.0)) else Some(r(i))
    }
    val p3 = (1500 until 2100).filter(i => i % 2 == 0 || i >= 2000).map(i => r(i)) // after the last fragment
    val expected = p1 ++ p2 ++ p3
    val old = rows.map(_.getInt(0)).toSet
    val changed = expected.count(x => !old.contains(x.getInt(0)) || x.getString(1) == "upd") +
      old.count(k => !expected.exists(_.getInt(0) == k))
    assert(overwriteChecked(inParts(Seq(p1, p2, p3)), expected, changed, "gaps"), "disjoint tasks take the one-pass result")
    // too many current rows outside the tasks' ranges to read on the driver: planned from the rows
    withConf(VersionedOptions.ConfLocalCommitMaxRows -> "10") {
      val fallbacks = OverwriteCommit.fallbacks.get()
      val only = expected.filter(x => x.getInt(0) >= 1000 && x.getInt(0) < 1100)
      overwrite(inParts(Seq(only)), "r.t")
      assertSameRows(read("r.t").collect().toSeq, only, "gaps over the budget")
      assert(OverwriteCommit.fallbacks.get() == fallbacks + 1)
    }
  }

  test("composite keys, clustered and not") {
    val s = new StructType().add("g", StringType).add("k", IntegerType).add("v", LongType)
    val rows = for (g <- Seq("a", "b", "c", "d"); k <- 0 until 100) yield Row(g, k, k.toLong)
    load(rows, "c", s, "g,k")
    def change(x: Row) = if (x.getInt(1) % 17 == 3) Row(x.getString(0), x.getInt(1), -1L) else x
    val next = rows.filterNot(x => x.getString(0) == "b" && x.getInt(1) % 5 == 0).map(change) :+ Row("e", 1, 1L)
    val parts = next.groupBy(_.getString(0)).toSeq.sortBy(_._1).map(_._2)
    // updates of the rows kept, 20 deletes, 1 insert
    val exactChanged = rows.count(x => change(x) != x && !(x.getString(0) == "b" && x.getInt(1) % 5 == 0)) + 20 + 1
    assert(overwriteChecked(inParts(parts, s), next, exactChanged, "composite clustered", "c"))
    val shuffled = scala.util.Random.shuffle(rows)
    overwrite(frame(s, shuffled, 3), "r.c")
    assertSameRows(read("r.c").collect().toSeq, rows, "composite random")
  }

  test("null and duplicate keys raise the typed errors; branch and store unchanged") {
    val rows = (0 until 400).map(i => r(i))
    load(rows)
    val before = repoState("r", "t")
    val objects = objectFiles
    def attempt(df: DataFrame, errorClass: String, parts: String*): Unit = {
      expectError(errorClass, parts :+ "Nothing was committed": _*)(overwrite(df, "r.t"))
      assert(repoState("r", "t") == before)
      assert(objectFiles == objects, "a rejected overwrite leaves no object in the store")
      assert(stagedWrites.isEmpty)
    }
    val clustered = rows.grouped(100).toSeq
    // a duplicate inside one task (clustered), across two tasks, and in random input
    attempt(inParts(clustered.updated(1, clustered(1) :+ r(150, "dup"))), ErrorClass.DuplicateKey, "id=150", "2 rows")
    attempt(inParts(clustered.updated(2, clustered(2) :+ r(150, "dup"))), ErrorClass.DuplicateKey, "id=150", "2 rows")
    attempt(frame(schema, scala.util.Random.shuffle(rows ++ Seq(r(7, "a"), r(7, "b"))), 4), ErrorClass.DuplicateKey, "id=7", "3 rows")
    // a null key, alone or with a duplicate
    attempt(inParts(clustered.updated(3, clustered(3) :+ Row(null, "z", 1.0))), ErrorClass.NullPrimaryKey, "(id)")
    attempt(inParts(clustered.updated(0, clustered(0) :+ r(5, "d")).updated(3, clustered(3) :+ Row(null, "z", 1.0))),
      ErrorClass.NullPrimaryKey)
  }

  test("empty input deletes every row; unchanged input adds no object and keeps the table hash") {
    val rows = (0 until 300).map(i => r(i))
    load(rows)
    val same = head()
    val objects = objectFiles
    overwrite(read("r.t"), "r.t")
    assertSameRows(read("r.t").collect().toSeq, rows, "unchanged")
    assert(Hashing.tableHash(head()) == Hashing.tableHash(same), "an unchanged overwrite keeps the table hash")
    assert(objectFiles == objects, "an unchanged overwrite writes no object")
    assert(overwriteChecked(inParts(Seq(rows.take(100), rows.slice(200, 300))), rows.take(100) ++ rows.slice(200, 300), 100,
      "a gap between tasks"))
    assert(overwriteChecked(frame(schema, Seq.empty, 2), Seq.empty, 200, "empty input"))
    assert(read("r.t").count() == 0)
    overwrite(frame(schema, rows.take(10), 1), "r.t")
    assertSameRows(read("r.t").collect().toSeq, rows.take(10), "refilled")
  }

  test("a one-pass result applies only to the table version it was compared with") {
    load((0 until 100).map(i => r(i)))
    val base = head()
    val moved = base.copy(fragments = base.fragments.map(f => f.copy(objects = f.objects.reverse)), compacted = None)
    val update = Some((base, Seq.empty[versioned.core.ObjectMeta]))
    assert(PrewrittenOverwrite(base, update).on(base) == update)
    val fallbacks = OverwriteCommit.fallbacks.get()
    assert(PrewrittenOverwrite(base, update).on(moved.copy(name = "other")).isEmpty, "a moved table is planned from the rows")
    assert(OverwriteCommit.fallbacks.get() == fallbacks + 1)
    assert(PrewrittenOverwrite(base, None).on(base).isEmpty)
  }
}
