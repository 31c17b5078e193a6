package versioned.spark.write

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions._
import versioned.core.{DataValidationException, ErrorClass}
import versioned.spark.TableLayout

/** Checks on incoming data before anything is written: null keys and duplicate keys. */
private[versioned] object Validation {
  def check(input: DataFrame, layout: TableLayout): Unit = if (!layout.hidden) {
    val keys = layout.primaryKey
    val nullKey = input.filter(keys.map(k => col(k).isNull).reduce(_ || _)).limit(1).count()
    if (nullKey > 0) throw new DataValidationException(ErrorClass.NullPrimaryKey,
      s"The data has rows with a null primary key (${keys.mkString(", ")}). Primary key values must not be null; " +
        "filter or fill them. Nothing was committed.")
    val dup = input.groupBy(keys.map(col): _*).count().filter(col("count") > 1).limit(1).collect()
    if (dup.nonEmpty) throw new DataValidationException(ErrorClass.DuplicateKey,
      s"The data has ${dup.head.getLong(keys.size)} rows with key (" +
        keys.zipWithIndex.map { case (k, i) => s"$k=${dup.head.get(i)}" }.mkString(", ") +
        "). Each key may appear once per write; deduplicate first. Nothing was committed.")
  }
}
