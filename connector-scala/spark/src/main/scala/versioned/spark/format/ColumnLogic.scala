package versioned.spark.format

import org.apache.spark.sql.Column
import org.apache.spark.sql.functions.lit
import versioned.core.format.Logic

/** The kernel's [[Logic]] over boolean columns, so kernel rules evaluate in distributed plans. */
private[versioned] object ColumnLogic extends Logic[Column] {
  override def and(a: Column, b: Column): Column = a && b
  override def or(a: Column, b: Column): Column = a || b
  override def not(a: Column): Column = !a
  override def constant(v: Boolean): Column = lit(v)
}
