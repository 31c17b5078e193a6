package versioned.spark.catalog.procedures

import java.util.Collections
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{LocalScan, Scan}
import org.apache.spark.sql.types.StructType
import versioned.core.{Engine, Errors}

/**
 * Base of procedures whose result is a table (gc, verify): string arguments as in [[RefProcedure]]
 * (boolean and number arguments are strings parsed here), the result rows of a DataFrame.
 */
private[procedures] abstract class MaintenanceProcedure(engine: () => Engine) extends StringArgsProcedure {
  /** The schema of the result (of [[row]]); the result's rows come in the schema of `run`'s DataFrame. */
  protected def outputType: StructType
  protected def run(spark: SparkSession, e: Engine, args: Args): DataFrame

  override def call(input: InternalRow): java.util.Iterator[Scan] = {
    val df = run(SparkSession.active, engine(), new Args(name(), params, input))
    val rows = df.queryExecution.toRdd.map(_.copy()).collect()
    Collections.singleton[Scan](new FrameResult(df.schema, rows)).iterator()
  }

  /** A one-row result. */
  protected def row(spark: SparkSession, values: Any*): DataFrame =
    spark.createDataFrame(java.util.List.of(org.apache.spark.sql.Row(values: _*)), outputType)

  /**
   * Merge resolutions given as SQL: a JSON object mapping each table to the name of a table or view
   * holding its resolved rows, e.g. `'{"products": "fixed_products"}'`.
   */
  protected def resolutions(spark: SparkSession, a: Args): Map[String, DataFrame] = a.opt("resolutions").map(_.trim)
    .filter(_.nonEmpty).map { json =>
      val parsed = scala.util.Try(versioned.core.Json.readMap(json)).getOrElse(throw Errors.invalidOption(
        s"${this.name()}: argument 'resolutions' must be a JSON object mapping tables to table or view names, not '$json'."))
      parsed.map {
        case (table, view: String) if view.trim.nonEmpty => table -> spark.table(view.trim)
        case (table, other) => throw Errors.invalidOption(
          s"${this.name()}: resolutions for '$table' must name a table or view (a string), not '$other'.")
      }
    }.getOrElse(Map.empty)

  protected def bool(a: Args, name: String): Boolean = a.opt(name).map(_.trim.toLowerCase) match {
    case None | Some("") | Some("false") => false
    case Some("true") => true
    case Some(v) => throw Errors.invalidOption(s"${this.name()}: argument '$name' must be 'true' or 'false', not '$v'.")
  }

  /** A comma-separated list of names (empty when absent). */
  protected def names(a: Args, name: String): Seq[String] =
    a.opt(name).toSeq.flatMap(_.split(',')).map(_.trim).filter(_.nonEmpty)

  /** Seconds as milliseconds; -1 when absent (the default retention). */
  protected def seconds(a: Args, name: String): Long = a.opt(name).map(_.trim).filter(_.nonEmpty) match {
    case None => -1L
    case Some(v) => v.toDoubleOption.filter(d => d >= 0 && !d.isInfinite).map(d => (d * 1000).toLong).getOrElse(
      throw Errors.invalidOption(s"${this.name()}: argument '$name' must be a number of seconds >= 0, not '$v'."))
  }
}

private[procedures] final class FrameResult(schema: StructType, data: Array[InternalRow]) extends LocalScan {
  override def readSchema(): StructType = schema
  override def rows(): Array[InternalRow] = data
}
