package versioned.spark.catalog.procedures

import java.util.Collections
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{LocalScan, Scan}
import org.apache.spark.sql.types.StructType
import versioned.core.Engine

/**
 * Base of procedures whose result is a table (gc, verify): typed arguments as in [[RefProcedure]], the result
 * rows of a DataFrame.
 */
private[procedures] abstract class MaintenanceProcedure(engine: () => Engine) extends TypedArgsProcedure {
  /** The schema of the result (of [[row]]); the result's rows come in the schema of `run`'s DataFrame. */
  protected def outputType: StructType
  protected def run(spark: SparkSession, e: Engine, args: Args): DataFrame

  override def call(input: InternalRow): java.util.Iterator[Scan] = {
    val rows = versioned.spark.session.Identity.as(versioned.core.Actor.Sql) {
      val df = run(SparkSession.active, engine(), new Args(name(), params, input))
      (df.schema, df.queryExecution.toRdd.map(_.copy()).collect())
    }
    Collections.singleton[Scan](new FrameResult(rows._1, rows._2)).iterator()
  }

  /** A one-row result. */
  protected def row(spark: SparkSession, values: Any*): DataFrame =
    spark.createDataFrame(java.util.List.of(org.apache.spark.sql.Row(values: _*)), outputType)

  /**
   * Merge resolutions given as SQL: a map from each table to the name of a table or view holding its resolved rows,
   * e.g. `map('products', 'fixed_products')`.
   */
  protected def resolutions(spark: SparkSession, a: Args): Map[String, DataFrame] =
    a.names("resolutions").map { case (table, view) => table -> spark.table(view) }
}

private[procedures] final class FrameResult(schema: StructType, data: Array[InternalRow]) extends LocalScan {
  override def readSchema(): StructType = schema
  override def rows(): Array[InternalRow] = data
}
