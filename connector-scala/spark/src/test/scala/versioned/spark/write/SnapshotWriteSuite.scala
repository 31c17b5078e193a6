package versioned.spark
package write

import versioned.spark.format.{Values, TableLayout}

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types._
import versioned.core.{ErrorClass, ObjectKind}
import versioned.spark.format.SparkKeys

/**
 * Writes that make a new SNAP (first load, overwrite changing the schema) take the one-pass path
 * (`write.SnapshotWrite`: Spark range-partitions and sorts by key, the tasks write the fragments). With
 * default compaction settings: the content equals the input, fragments are key-ordered, do not overlap
 * and hold at most the target rows; bad keys raise the same typed errors and commit nothing.
 */
class SnapshotWriteSuite extends VersionedTestBase {
  private val schema = new StructType().add("id", IntegerType).add("name", StringType).add("x", DoubleType)

  /** Rows 0 until n in a shuffled order over `partitions` input partitions. */
  private def shuffled(n: Int, partitions: Int = 5, seed: Int = 7): (DataFrame, Seq[Row]) = {
    val rows = new scala.util.Random(seed).shuffle((0 until n).map(i => Row(i, s"n$i", i * 0.5)))
    (frame(schema, rows, partitions), rows)
  }

  private val target = 50L // the suites' spark.versioned.fragment.targetRows

  /** Checks the table's fragments: ascending bounds, each SNAP's keys inside its bounds, at most `target` rows. */
  private def assertFragments(repo: String, table: String, totalRows: Long, maxFragments: Int): Unit = {
    val e = engine
    val t = e.table(repo, e.branchHeadOption(repo, "main").get, table)
    val layout = TableLayout.of(t)
    val types = layout.keyTypes
    val cmp = SparkKeys.order(types)
    def row(values: Seq[Any]) = Values.internalRow(values, types)
    val metas = e.objects(t.fragments.flatMap(_.objects))
    assert(t.fragments.forall(_.objects.size == 1), "a new SNAP: one object per fragment")
    assert(t.fragments.headOption.forall(_.lower.isEmpty), "the first fragment has no lower bound")
    assert(t.fragments.size <= maxFragments, s"${t.fragments.size} fragments for $totalRows rows")
    val counts = t.fragments.map(f => metas(f.objects.head).rowCount)
    assert(counts.sum == totalRows)
    assert(counts.forall(c => c > 0 && c <= target), s"fragment sizes $counts exceed the target $target")
    assert(t.fragments.forall(f => metas(f.objects.head).kind == ObjectKind.Snap))
    t.fragments.zip(t.fragments.drop(1)).foreach { case (a, b) =>
      b.lower.foreach(lo => a.lower.foreach(la => assert(cmp.compare(row(la), row(lo)) < 0, "bounds must ascend")))
    }
    if (layout.keyColumns.size == 1) {
      val k = layout.keyColumns.head
      t.fragments.zipWithIndex.foreach { case (f, i) =>
        val m = metas(f.objects.head)
        val min = row(Seq(Values.fromJson(m.minValues(k), types.head)))
        val max = row(Seq(Values.fromJson(m.maxValues(k), types.head)))
        f.lower.foreach(lo => assert(cmp.compare(row(lo), min) == 0, s"fragment $i: its lower bound is its first key"))
        t.fragments.lift(i + 1).flatMap(_.lower).foreach(next =>
          assert(cmp.compare(max, row(next)) < 0, s"fragment $i overlaps the next one"))
      }
    }
  }

  /** Object files in the warehouse (written by any pass, referenced or not). */
  private def objectFiles: Int = {
    val dir = new java.io.File(warehouse, "objects")
    Option(dir.listFiles()).toSeq.flatten.flatMap(d => Option(d.listFiles()).toSeq.flatten).count(_.getName.endsWith(".parquet"))
  }

  /** Objects the tables of every repository reference on their branch heads. */
  private def referencedObjects: Int = {
    val e = engine
    e.repositories().flatMap(r => e.tables(r, e.branchHeadOption(r, "main").get.hash).flatMap(_.fragments.flatMap(_.objects)))
      .distinct.size
  }

  test("object statistics: min, max and null count of every column type, as the rows have them") {
    val st = new StructType().add("id", LongType).add("i", IntegerType).add("day", DateType).add("ts", TimestampType)
      .add("d", DoubleType).add("s", StringType).add("dec", DecimalType(10, 2)).add("sh", ShortType)
    val r = new scala.util.Random(11)
    def maybe[T](v: => T): Any = if (r.nextInt(5) == 0) null else v
    val doubles = Seq(-0.0, 0.0, -3.5, 7.25, 1e300, -1e-300)
    val rows = (0 until 40).map(k => Row(k * 7L - 100, maybe(r.nextInt(2000) - 1000), maybe(java.sql.Date.valueOf(s"2026-0${1 + r.nextInt(9)}-1${r.nextInt(9)}")),
      maybe(new java.sql.Timestamp(1700000000000L + r.nextInt(1 << 30))), maybe(doubles(r.nextInt(doubles.size))),
      maybe(s"s${r.nextInt(100)}"), maybe(java.math.BigDecimal.valueOf(r.nextInt(100000) - 50000, 2)), maybe((r.nextInt(200) - 100).toShort)))
    write(frame(st, rows, 1), "r.t", "primaryKey" -> "id")
    val e = engine
    val t = e.table("r", e.branchHeadOption("r", "main").get, "t")
    assert(t.fragments.size == 1)
    val m = e.objects(t.fragments.head.objects)(t.fragments.head.objects.head)
    val internal = rows.map(row => org.apache.spark.sql.catalyst.CatalystTypeConverters.createToCatalystConverter(st)(row)
      .asInstanceOf[org.apache.spark.sql.catalyst.InternalRow])
    st.fields.zipWithIndex.foreach { case (f, c) =>
      val values = internal.filterNot(_.isNullAt(c)).map(Values.fromInternal(_, c, f.dataType))
      val ord: Ordering[Any] = f.dataType match {
        case DoubleType => (a: Any, b: Any) => java.lang.Double.compare(a.asInstanceOf[Double], b.asInstanceOf[Double])
        case StringType => (a: Any, b: Any) => org.apache.spark.unsafe.types.UTF8String.fromString(a.toString)
          .binaryCompare(org.apache.spark.unsafe.types.UTF8String.fromString(b.toString))
        case _: DecimalType => (a: Any, b: Any) => new java.math.BigDecimal(a.toString).compareTo(new java.math.BigDecimal(b.toString))
        case _ => (a: Any, b: Any) => java.lang.Long.compare(a.asInstanceOf[Long], b.asInstanceOf[Long])
      }
      def same(a: Any, b: Any) = if (f.dataType == DoubleType) a.asInstanceOf[Double] == b.asInstanceOf[Double] else ord.compare(a, b) == 0
      val (lo, hi) = (Values.fromJson(m.minValues(f.name), f.dataType), Values.fromJson(m.maxValues(f.name), f.dataType))
      assert(same(lo, values.min(ord)), s"${f.name}: min $lo, rows ${values.min(ord)}")
      assert(same(hi, values.max(ord)), s"${f.name}: max $hi, rows ${values.max(ord)}")
      assert(m.nullCounts(f.name) == rows.size - values.size, s"${f.name}: null count")
    }
  }

  test("first load of data clustered by key: the tasks' objects are the fragments (one pass)") {
    // input partitions hold disjoint key ranges (multiples of the target), rows shuffled inside each
    val rows = (0 until 1000).map(i => Row(i, s"n$i", i * 0.5))
    val parts = rows.grouped(250).map(g => scala.util.Random.shuffle(g)).toSeq
    val df = spark.createDataFrame(spark.sparkContext.parallelize(parts.reverse, 4).flatMap(identity), schema)
    write(df, "r.t", "primaryKey" -> "id")
    assertSameRows(read("r.t").collect().toSeq, rows, "first load")
    // 4 tasks of 250 rows: 5 fragments each, nothing written twice
    assertFragments("r", "t", 1000, 20)
    val e = engine
    assert(e.table("r", e.branchHeadOption("r", "main").get, "t").fragments.size == 20)
    assert(objectFiles == 20, "a clustered first load writes each row once")
    assert(stagedWrites.isEmpty)
    assert(read("r.t").collect().map(_.getInt(0)).toSeq == (0 until 1000), "a scan returns rows in key order")
  }

  test("first load of unclustered data: planned again from the written objects, same guarantees") {
    val (df, expected) = shuffled(1000)
    write(df, "r.t", "primaryKey" -> "id")
    assertSameRows(read("r.t").collect().toSeq, expected, "first load")
    assertFragments("r", "t", 1000, 1000 / 50 + 2)
    assert(stagedWrites.isEmpty)
    assert(objectFiles == referencedObjects, "the first pass's objects never reach the store")
    assert(read("r.t").collect().map(_.getInt(0)).toSeq == (0 until 1000), "a scan returns rows in key order")
  }

  test("clustered input whose tasks would leave short fragments is cut as the staged path cuts it") {
    val rows = (0 until 600).map(i => Row(i, s"n$i", 0.0))
    write(spark.createDataFrame(spark.sparkContext.parallelize(rows, 60), schema), "r.t", "primaryKey" -> "id")
    assertSameRows(read("r.t").collect().toSeq, rows, "first load")
    assertFragments("r", "t", 600, 600 / 50)
    // 4 tasks of about 197 rows: 50, 50, 50 and 47 or 48 each, more than half the target: kept as written
    val more = (0 until 790).map(i => Row(i, s"n$i", 0.0))
    write(spark.createDataFrame(spark.sparkContext.parallelize(more, 4), schema), "r.u", "primaryKey" -> "id")
    assertFragments("r", "u", 790, 16)
    // 3 tasks of 67 rows: 50 + 17 each; planned again: 4 fragments of about 50
    write(spark.createDataFrame(spark.sparkContext.parallelize(rows.take(200), 3), schema), "r.v", "primaryKey" -> "id")
    assertFragments("r", "v", 200, 4)
    assert(objectFiles == referencedObjects, "objects of a pass planned again never reach the store")
  }

  test("first load with adaptive execution, same guarantees") {
    withConf("spark.sql.shuffle.partitions" -> "16") {
      val (df, expected) = shuffled(3000, partitions = 7, seed = 3)
      write(df, "r.t", "primaryKey" -> "id")
      assertSameRows(read("r.t").collect().toSeq, expected, "first load (AQE)")
      assertFragments("r", "t", 3000, 3000 / 50 + 16)
      write(spark.range(0, 2000, 1, 3).selectExpr("id", "cast(id as string) s"), "r.u", "primaryKey" -> "id")
      assert(read("r.u").count() == 2000)
    }
  }

  test("composite and oddly named keys, doubles with -0.0 and NaN") {
    val s = new StructType().add("a.b", StringType).add("k", DoubleType).add("v", LongType)
    val rows = (0 until 400).map(i => Row(s"g${i % 7}", if (i == 3) Double.NaN else if (i == 5) -0.0 else i.toDouble, i.toLong))
    write(frame(s, scala.util.Random.shuffle(rows), 4), "r.t", "primaryKey" -> "a.b,k")
    assertSameRows(read("r.t").collect().toSeq, rows, "composite key")
    assertFragments("r", "t", 400, 400 / 50 + 2)
    // -0.0 and 0.0 are one key
    val zeros = Seq(Row("g", 0.0, 1L), Row("g", -0.0, 2L))
    expectError(ErrorClass.DuplicateKey, "a.b=g")(write(frame(s, zeros, 2), "r.u", "primaryKey" -> "a.b,k"))
  }

  test("duplicate and null keys raise the same typed errors and commit nothing") {
    def attempt(rows: Seq[Row], errorClass: String, parts: String*): Unit = {
      expectError(errorClass, parts :+ "Nothing was committed": _*)(
        write(frame(schema, scala.util.Random.shuffle(rows), 4), "bad.t", "primaryKey" -> "id"))
      assert(!engine.repositoryExists("bad"), "a rejected first write created the repository")
      assert(stagedWrites.isEmpty)
    }
    val base = (0 until 500).map(i => Row(i, s"n$i", 0.0))
    // the duplicate's rows are in one task or several: counted all the same
    attempt(base ++ Seq(Row(480, "b", 1.0), Row(480, "c", 2.0)), ErrorClass.DuplicateKey, "id=480", "3 rows")
    // clustered input: a duplicate inside one task, and across two tasks' key ranges
    val clustered = (0 until 400).map(i => Row(i, "a", 0.0))
    def inTasks(rows: Seq[Row]) = spark.createDataFrame(spark.sparkContext.parallelize(rows, 4), schema)
    expectError(ErrorClass.DuplicateKey, "id=10", "2 rows")(write(inTasks(clustered.patch(11, Seq(Row(10, "b", 0.0)), 1)),
      "bad.t", "primaryKey" -> "id"))
    expectError(ErrorClass.DuplicateKey, "id=100", "2 rows")(write(inTasks(clustered.patch(99, Seq(Row(100, "b", 0.0)), 1)),
      "bad.t", "primaryKey" -> "id"))
    expectError(ErrorClass.NullPrimaryKey)(write(inTasks(clustered.patch(200, Seq(Row(null, "b", 0.0)), 1)),
      "bad.t", "primaryKey" -> "id"))
    // every row twice, in two tasks that write identical objects
    val twice = inTasks(clustered.take(100)).union(inTasks(clustered.take(100)))
    expectError(ErrorClass.DuplicateKey, "2 rows")(write(twice, "bad.t", "primaryKey" -> "id"))
    assert(!engine.repositoryExists("bad"))
    attempt(base :+ Row(null, "z", 1.0), ErrorClass.NullPrimaryKey, "(id)")
    // both: the null key is reported, as the staged path does
    attempt(base ++ Seq(Row(null, "z", 1.0), Row(7, "d", 1.0)), ErrorClass.NullPrimaryKey)
    // and on an existing table, an overwrite that changes the schema
    write(frame(schema, base, 3), "r.t", "primaryKey" -> "id")
    val before = repoState("r", "t")
    val wider = schema.add("extra", IntegerType)
    expectError(ErrorClass.DuplicateKey, "id=1")(overwrite(frame(wider, Seq(Row(1, "a", 0.0, 1), Row(1, "b", 0.0, 2)), 2),
      "r.t", "primaryKey" -> "id"))
    assert(repoState("r", "t") == before)
  }

  test("overwrite that changes the schema makes a SNAP; an overwrite with the same schema a DIFF") {
    val (df, _) = shuffled(300)
    write(df, "r.t", "primaryKey" -> "id")
    val wider = schema.add("extra", IntegerType)
    val rows = (0 until 280).map(i => Row(i, s"m$i", i * 1.0, i % 3))
    overwrite(frame(wider, scala.util.Random.shuffle(rows), 3), "r.t", "primaryKey" -> "id")
    assertSameRows(read("r.t").collect().toSeq, rows, "overwrite with a new column")
    assertFragments("r", "t", 280, 280 / 50 + 2)
    val changed = rows.map(r => if (r.getInt(0) == 10) Row(10, "changed", 10.0, 1) else r)
    overwrite(frame(wider, changed, 3), "r.t")
    assertSameRows(read("r.t").collect().toSeq, changed, "overwrite with the same schema")
    val e = engine
    val t = e.table("r", e.branchHeadOption("r", "main").get, "t")
    assert(t.fragments.map(_.objects.size).sum == t.fragments.size + 1, "one DIFF for the one changed row")
    // the changed version builds on the SNAP: later appends and upserts work as usual
    write(frame(wider, Seq(Row(1000, "new", 0.0, 0)), 1), "r.t")
    assert(read("r.t").count() == 281)
  }

  test("an empty first write creates an empty table; a write without a key keeps the staged path") {
    write(frame(schema, Seq.empty, 2), "r.t", "primaryKey" -> "id")
    assert(read("r.t").count() == 0)
    write(frame(schema, Seq(Row(1, "a", 0.0)), 1), "r.t")
    assert(read("r.t").collect().toSeq == Seq(Row(1, "a", 0.0)))
    val (df, expected) = shuffled(200)
    write(df, "r.nokey")
    assertSameRows(read("r.nokey").collect().toSeq, expected, "key-less table")
  }
}
