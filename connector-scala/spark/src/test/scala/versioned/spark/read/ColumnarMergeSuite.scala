package versioned.spark.read

import java.math.BigDecimal
import java.sql.{Date, Timestamp}
import scala.util.Random
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types._
import versioned.spark.VersionedTestBase
import versioned.spark.session.VersionedOptions

/**
 * The columnar merge-on-read (SNAP batches masked in place, conflated DIFFs as batches, executor DIFF
 * cache) against an in-memory oracle and against the row-by-row merge, over every atomic type, nulls,
 * dictionary-encoded columns, batches smaller than a fragment, integral, string and composite keys.
 */
class ColumnarMergeSuite extends VersionedTestBase {
  override protected def extraConf: Map[String, String] = Map(
    "spark.sql.parquet.columnarReaderBatchSize" -> "64", VersionedOptions.ConfFragmentRows -> "400",
    VersionedOptions.ConfMaxChain -> "1000", VersionedOptions.ConfMaxDiffRatio -> "1000")

  private val schema = new StructType().add("id", LongType).add("i", IntegerType).add("d", DoubleType)
    .add("s", StringType).add("dec", DecimalType(12, 2)).add("big", DecimalType(30, 4)).add("day", DateType)
    .add("ts", TimestampType).add("flag", BooleanType).add("f", FloatType).add("sh", ShortType).add("by", ByteType)
    .add("bin", BinaryType)

  private def row(r: Random, id: Long, v: Int): Row = {
    def maybe[T](x: => T): Any = if (r.nextInt(9) == 0) null else x
    Row(id, maybe(v), maybe(r.nextDouble()), maybe(Seq("red", "green", "blue")(r.nextInt(3))),
      maybe(BigDecimal.valueOf(r.nextInt(100000), 2)), maybe(new BigDecimal(s"${r.nextInt(1000000)}123456789.0001")),
      maybe(Date.valueOf(s"2026-0${1 + r.nextInt(9)}-1${r.nextInt(9)}")), maybe(new Timestamp(1700000000000L + r.nextInt(1 << 30))),
      maybe(r.nextBoolean()), maybe(r.nextFloat()), maybe(r.nextInt(1000).toShort), maybe(r.nextInt(100).toByte),
      maybe(Array[Byte](v.toByte, 7)))
  }

  /** Byte arrays compare by identity in rows: the oracle compares their contents as lists. */
  private def norm(rows: Seq[Row]): Seq[Row] =
    rows.map(r => Row(r.toSeq.map { case b: Array[Byte] => b.toList; case x => x }: _*))

  private def columnar(df: DataFrame): Boolean =
    df.queryExecution.executedPlan.collect { case b: BatchScanExec => b.supportsColumnar }.head

  /** 2,000 rows, then 6 commits of upserts, deletes and inserts; returns the expected rows by id. */
  private def build(table: String, r: Random): Map[Long, Row] = {
    var model = (0L until 2000L).map(i => i * 3 -> row(r, i * 3, 0)).toMap
    write(frame(schema, model.values.toSeq), table, "primaryKey" -> "id")
    (1 to 6).foreach { c =>
      val ups = model.keys.toSeq.sorted.filter(_ => r.nextInt(12) == 0).map(k => k -> row(r, k, c))
      val dels = model.keys.toSeq.sorted.filter(_ => r.nextInt(25) == 0).filterNot(ups.map(_._1).toSet)
      val ins = (0 until 40).map(_ => (r.nextInt(7000) * 3 + 1).toLong).distinct.map(k => k -> row(r, k, c))
      val marked = schema.add("del", BooleanType)
      val feed = (ups ++ ins).map { case (_, x) => Row(x.toSeq :+ false: _*) } ++
        dels.map(k => Row((model(k).toSeq :+ true): _*))
      write(spark.createDataFrame(spark.sparkContext.parallelize(feed, 3), marked), table, "upsert" -> "true",
        "deleteColumn" -> "del")
      model = model -- dels ++ ups ++ ins
    }
    val t = engine.tableOption(table.split('.')(0), headHash(table.split('.')(0)).get, table.split('.')(1)).get
    assert(t.fragments.size >= 4 && t.fragments.forall(_.objects.size > 2), s"expected DIFF chains, got ${t.fragments}")
    model
  }

  test("every atomic type merges column-wise as the oracle and as the row-wise merge say") {
    val model = build("r.t", new Random(5L))
    val expected = norm(model.values.toSeq)
    DiffCache.clear()
    assert(columnar(read("r.t")))
    assertSameRows(norm(read("r.t").collect().toSeq), expected, "columnar, cold cache")
    assertSameRows(norm(read("r.t").collect().toSeq), expected, "columnar, warm cache")
    withConf(VersionedOptions.ConfDiffCacheBytes -> "0") {
      assertSameRows(norm(read("r.t").collect().toSeq), expected, "columnar, no cache")
    }
    withConf(VersionedOptions.ConfMaxOverlayRows -> "0") {
      // every fragment's DIFFs over the limit: each merged row by row, its rows handed out as batches
      assert(columnar(read("r.t")))
      val before = FragmentReaderFactory.rowMerged.get()
      assertSameRows(norm(read("r.t").collect().toSeq), expected, "row-wise merge")
      assert(FragmentReaderFactory.rowMerged.get() - before >= 4)
    }
    // fragments over and under the limit in one scan: some merged row by row, the others column-wise
    val table = engine.tableOption("r", headHash("r").get, "t").get
    val metas = engine.objects(table.fragments.flatMap(_.objects))
    val diffRows = table.fragments.map(_.objects.map(metas).filter(_.kind == versioned.core.ObjectKind.Diff).map(_.rowCount).sum).sorted
    withConf(VersionedOptions.ConfMaxOverlayRows -> diffRows(diffRows.size / 2).toString) {
      DiffCache.clear()
      val before = FragmentReaderFactory.rowMerged.get()
      assertSameRows(norm(read("r.t").collect().toSeq), expected, "mixed merges")
      val merged = FragmentReaderFactory.rowMerged.get() - before
      assert(merged > 0 && merged < diffRows.count(_ > 0), s"$merged of ${diffRows.size} fragments merged row by row ($diffRows)")
    }
    // projections without the key, and filters Spark re-applies after the merge
    assertSameRows(read("r.t").select("s", "dec").collect().toSeq,
      model.values.toSeq.map(x => Row(x.get(3), x.get(4))), "projection without the key")
    assertSameRows(read("r.t").filter(col("s") === "red").select("id").collect().toSeq,
      model.values.toSeq.filter(_.get(3) == "red").map(x => Row(x.get(0))), "non-key filter")
    // cached DIFF batches shared by scans with other output layouts, repeated (warm cache)
    (1 to 2).foreach { _ =>
      assertSameRows(read("r.t").select("s", "id").collect().toSeq,
        model.values.toSeq.map(x => Row(x.get(3), x.get(0))), "key last")
      assertSameRows(read("r.t").select("id", "s").collect().toSeq,
        model.values.toSeq.map(x => Row(x.get(0), x.get(3))), "key first")
    }
    assert(read("r.t").count() == model.size)
    // an older version through the same cache
    assert(read("r.t", "ref" -> "main~3").count() != model.size || model.isEmpty)
  }

  test("string and composite keys merge column-wise through the key comparator") {
    val s = new StructType().add("k", StringType).add("n", IntegerType).add("v", StringType)
    val r = new Random(8L)
    var model = (0 until 900).map(i => (f"key$i%05d", i % 3) -> Row(f"key$i%05d", i % 3, s"v$i")).toMap
    write(frame(s, model.values.toSeq), "r.c", "primaryKey" -> "k,n")
    (1 to 4).foreach { c =>
      val ups = model.keys.toSeq.filter(_ => r.nextInt(10) == 0).map(k => k -> Row(k._1, k._2, s"u$c"))
      val ins = (0 until 30).map(i => (f"new$c-$i", i) -> Row(f"new$c-$i", i, s"n$c"))
      write(frame(s, (ups ++ ins).map(_._2)), "r.c", "upsert" -> "true")
      model = model ++ ups ++ ins
    }
    DiffCache.clear()
    assert(columnar(read("r.c")))
    assertSameRows(read("r.c").collect().toSeq, model.values.toSeq, "composite key, columnar")
    withConf(VersionedOptions.ConfMaxOverlayRows -> "0") {
      val before = FragmentReaderFactory.rowMerged.get()
      assertSameRows(read("r.c").collect().toSeq, model.values.toSeq, "composite key, row-wise")
      assert(FragmentReaderFactory.rowMerged.get() > before)
    }
  }

  test("a table with a nested column is merged row by row") {
    val s = new StructType().add("id", IntegerType).add("tags", ArrayType(StringType))
    write(frame(s, (0 until 300).map(i => Row(i, Seq(s"t$i")))), "r.n", "primaryKey" -> "id")
    write(frame(s, Seq(Row(5, Seq("changed")), Row(1000, Seq.empty[String]))), "r.n", "upsert" -> "true")
    assert(!columnar(read("r.n")))
    val got = read("r.n").collect().map(x => x.getInt(0) -> x.getSeq[String](1)).toMap
    assert(got.size == 301 && got(5) == Seq("changed") && got(1000).isEmpty && got(6) == Seq("t6"))
  }
}
