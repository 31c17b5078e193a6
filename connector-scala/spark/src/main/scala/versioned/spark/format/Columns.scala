package versioned.spark.format

import org.apache.spark.sql.{functions, Column}

/** Column references by exact name: dots and backticks in user column names are never parsed. */
private[versioned] object Columns {
  def quote(name: String): String = "`" + name.replace("`", "``") + "`"
  def col(name: String): Column = functions.col(quote(name))
}
