package versioned.spark.rowlevel

import scala.jdk.CollectionConverters._
import scala.util.Random
import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.CatalystTypeConverters
import org.apache.spark.sql.catalyst.expressions.GenericRowWithSchema
import org.apache.spark.sql.connector.write.RowLevelOperation.Command
import org.apache.spark.sql.types._
import versioned.core.ChangeKind
import versioned.spark.VersionedSparkSuite
import versioned.spark.format.TableLayout

/**
 * The driver-side changes of a small UPDATE or MERGE ([[DeltaChanges.computeLocal]], decided row by row) against
 * the distributed computation of the same changes ([[DeltaChanges.compute]]: joins and Spark's `<=>`) as the
 * oracle, on seeded random staged rows: updates in place (with and without the old values read), updates that
 * change a value to an equal one (-0.0 for 0.0, NaN for NaN, an equal array), updates that move a key, deletes
 * and inserts, over value columns of several types with nulls.
 */
class LocalChangesSuite extends VersionedSparkSuite {
  private val schema = StructType(Seq(
    StructField("id", LongType, nullable = false), StructField("x", DoubleType), StructField("s", StringType),
    StructField("d", DecimalType(10, 2)), StructField("arr", ArrayType(IntegerType))))
  private val layout = TableLayout.create(schema, Seq("id"))
  private val values = layout.nonKeyColumns
  import DeltaChanges.{Before, KnownColumn, New, Old, OpColumn}
  private val stagedSchema = StructType(
    StructField(OpColumn, ByteType, nullable = false) +: StructField(Old + "id", LongType) +:
      (schema.fields.map(f => StructField(New + f.name, f.dataType, nullable = true)).toSeq ++
        (StructField(KnownColumn, BooleanType, nullable = false) +:
          values.map(v => StructField(Before + v, schema(v).dataType, nullable = true)))))

  private def randomValues(r: Random): Seq[Any] = Seq(
    Seq[Any](null, 0.0, -0.0, Double.NaN, 1.5, -2.0)(r.nextInt(6)),
    Seq[Any](null, "a", "b", "")(r.nextInt(4)),
    Seq[Any](null, BigDecimal("1.10").bigDecimal, BigDecimal("-3.00").bigDecimal)(r.nextInt(3)),
    Seq[Any](null, Seq(1, 2), Seq(1, null), Seq.empty[Int])(r.nextInt(4)))

  /** The same values where the comparison decides nothing changed: -0.0 for 0.0, an equal but new array. */
  private def equalValues(vs: Seq[Any]): Seq[Any] = vs.map {
    case d: Double if d == 0.0 => if (1 / d > 0) -0.0 else 0.0
    case s: Seq[_] => s.toList
    case other => other
  }

  private def staged(op: Byte, oldKey: Any, row: Option[(Long, Seq[Any])], before: Option[Seq[Any]]): Row =
    new GenericRowWithSchema((Seq(op, oldKey) ++ row.fold(Seq.fill[Any](schema.size)(null))(r => r._1 +: r._2) ++
      (before.isDefined +: before.getOrElse(Seq.fill[Any](values.size)(null)))).toArray, stagedSchema)

  private def sorted(rows: Seq[Row]): Seq[String] = rows.map(_.toSeq.map {
    case s: scala.collection.Seq[_] => s.mkString("[", ",", "]")
    case d: java.math.BigDecimal => d.stripTrailingZeros().toPlainString
    case other => String.valueOf(other)
  }.mkString("|")).sorted

  test("row-by-row changes of a small MERGE equal the distributed computation (seeded random operations)") {
    for (seed <- 1 to versioned.core.TestDepth(16, 40)) {
      val r = new Random(seed)
      val current: Map[Long, Seq[Any]] = (0L until 30L).filter(_ => r.nextInt(3) > 0).map(k => k -> randomValues(r)).toMap
      var free = (30L until 60L).toList // keys no row has: inserts and key moves go there
      def fresh(): Long = { val k = free.head; free = free.tail; k }
      val rows = current.keys.toSeq.sorted.filter(_ => r.nextInt(2) == 0).map { k =>
        val known = r.nextBoolean()
        r.nextInt(5) match {
          case 0 => staged(ChangeKind.Delete, k, None, Option.when(known)(current(k)))
          case 1 => staged(ChangeKind.Update, k, Some(k -> equalValues(current(k))), Option.when(known)(current(k)))
          case 2 => staged(ChangeKind.Update, k, Some(fresh() -> randomValues(r)), Option.when(known)(current(k)))
          case _ => staged(ChangeKind.Update, k, Some(k -> randomValues(r)), Option.when(known)(current(k)))
        }
      } ++ (0 until r.nextInt(4)).map(_ => staged(ChangeKind.Insert, null, Some(fresh() -> randomValues(r)), None))
      val currentRows = current.toSeq.map { case (k, vs) => new GenericRowWithSchema((k +: vs).toArray, schema): Row }

      val local = DeltaChanges.computeLocal(spark, rows, stagedSchema, currentRows, layout, Command.MERGE)
      assert(local.schema == layout.diffSchema)
      val toRow = CatalystTypeConverters.createToScalaConverter(layout.diffSchema)
      val got = local.localRows.getOrElse(fail("changes computed on the driver should be local rows"))
        .map(toRow(_).asInstanceOf[Row])
      val oracle = DeltaChanges.compute(spark.createDataFrame(rows.asJava, stagedSchema),
        spark.createDataFrame(currentRows.asJava, schema), layout, Command.MERGE).collect().toSeq
      assert(sorted(got) == sorted(oracle), s"seed $seed: staged ${rows.mkString("; ")}")
      assert(got.map(_.getAs[Byte](layout.diffSchema.fieldNames.last)).toSet.subsetOf(
        Set(ChangeKind.Insert, ChangeKind.Update, ChangeKind.Delete)))
    }
  }
}
