package versioned.spark.write

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.{col => _, _}
import versioned.spark.Columns.col
import versioned.core.{DataValidationException, ErrorClass}
import versioned.spark.TableLayout

/** Checks on incoming data before anything is written: null keys and duplicate keys. */
private[versioned] object Validation {
  def check(input: DataFrame, layout: TableLayout): Unit = if (!layout.hidden) {
    val keys = layout.primaryKey
    // One pass: rows per key, flagging null keys; only the first offending group comes back.
    val nullFlag = keys.map(k => col(k).isNull).reduce(_ || _)
    val bad = input.groupBy(keys.map(col): _*).agg(count(lit(1)).as("_vcount"), max(nullFlag).as("_vnull"))
      .filter(col("_vcount") > 1 || col("_vnull")).orderBy(col("_vnull").desc).limit(1).collect()
    if (bad.nonEmpty && bad.head.getAs[Boolean]("_vnull")) throw new DataValidationException(ErrorClass.NullPrimaryKey,
      s"The data has rows with a null primary key (${keys.mkString(", ")}). Primary key values must not be null; " +
        "filter or fill them. Nothing was committed.")
    if (bad.nonEmpty) throw new DataValidationException(ErrorClass.DuplicateKey,
      s"The data has ${bad.head.getLong(keys.size)} rows with key (" +
        keys.zipWithIndex.map { case (k, i) => s"$k=${bad.head.get(i)}" }.mkString(", ") +
        "). Each key may appear once per write; deduplicate first. Nothing was committed.")
  }
}
