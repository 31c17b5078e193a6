package versioned.spark.format

import scala.util.Random
import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.expressions.{Ascending, BoundReference, InterpretedOrdering, SortOrder}
import org.apache.spark.sql.types._
import versioned.core.Fragment
import versioned.spark.VersionedSparkSuite
import versioned.spark.write.Routing

/**
 * The Spark codec of the kernel agrees with Spark: the kernel's key order over `InternalRow`s is the order
 * Spark sorts in (so Spark's sorts produce it), and the routing column routes every key as the kernel's
 * router does.
 */
class SparkKeysSuite extends VersionedSparkSuite {
  private val r = new Random(17)
  private val doubles = Seq(0.0, -0.0, Double.NaN, Double.NegativeInfinity, 1.0, -2.5, 3.25)

  private def value(dt: DataType): Any = if (r.nextInt(10) == 0) null else dt match {
    case IntegerType => r.nextInt(5) - 2
    case LongType => r.nextInt(5).toLong * (if (r.nextBoolean()) Long.MaxValue / 4 else 1L)
    case ShortType => (r.nextInt(5) - 2).toShort
    case DoubleType => doubles(r.nextInt(doubles.size))
    case FloatType => doubles(r.nextInt(doubles.size)).toFloat
    case StringType => Seq("", "a", "ab", "\u00e9", "\uffff", "\ud83d\ude00")(r.nextInt(6))
    case BooleanType => r.nextBoolean()
    case DateType => java.time.LocalDate.ofEpochDay(r.nextInt(3))
    case TimestampType => java.time.Instant.ofEpochSecond(r.nextInt(3) - 1)
    case d: DecimalType => new java.math.BigDecimal(r.nextInt(7) - 3).movePointLeft(d.scale)
  }

  test("the kernel's key order over internal rows is Spark's sort order") {
    val typeSets = Seq(Seq(IntegerType), Seq(DoubleType), Seq(StringType, LongType), Seq(FloatType, BooleanType),
      Seq(DateType, TimestampType, DecimalType(10, 2)), Seq(ShortType, StringType, DoubleType))
    typeSets.foreach { types =>
      val schema = StructType(types.zipWithIndex.map { case (t, i) => StructField(s"c$i", t) })
      val toInternal = CatalystTypeConverters.createToCatalystConverter(schema)
      val rows = IndexedSeq.fill(200)(toInternal(Row.fromSeq(types.map(value))).asInstanceOf[InternalRow])
      val spark = new InterpretedOrdering(types.zipWithIndex.map { case (t, i) => SortOrder(BoundReference(i, t, nullable = true), Ascending) })
      val kernel = SparkKeys.order(types)
      for (a <- rows; b <- rows) assert(math.signum(kernel.compare(a, b)) == math.signum(spark.compare(a, b)), s"$types: $a $b")
    }
  }

  test("the routing column and the kernel's router route every key alike") {
    val s = spark
    import s.implicits._
    for (round <- 0 until 5) {
      val bounds = (0 until 1 + r.nextInt(9)).map(_ => (r.nextInt(200) - 100).toDouble).distinct.sorted
      val frags = Fragment(None, Nil) +: bounds.map(b => Fragment(Some(Seq(b)), Nil))
      val layout = TableLayout.create(StructType(Seq(StructField("k", DoubleType), StructField("v", StringType))), Seq("k"))
      val keys = (Seq(-0.0, 0.0, Double.NaN, Double.NegativeInfinity) ++ Seq.fill(300)((r.nextInt(240) - 120).toDouble) ++ bounds).distinct
      val routed = keys.map(Tuple1(_)).toDF("k").withColumn("v", org.apache.spark.sql.functions.lit("x"))
        .select(org.apache.spark.sql.functions.col("k"), Routing.fragmentOf(frags, layout).as("f")).collect()
      val local = Routing.local(frags, layout)
      routed.foreach { row =>
        val k = row.getDouble(0)
        assert(row.getInt(1) == local(InternalRow(k)), s"round $round key $k bounds $bounds")
      }
    }
  }
}
