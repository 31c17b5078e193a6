package versioned.spark.format

import org.apache.spark.sql.{functions, Column}
import org.apache.spark.sql.catalyst.expressions.RowOrdering
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StructType}

/** Column references by exact name: dots and backticks in user column names are never parsed. */
private[versioned] object Columns {
  def quote(name: String): String = "`" + name.replace("`", "``") + "`"
  def col(name: String): Column = functions.col(quote(name))

  /**
   * Whether two values of type `dt` are the same value, null-safely, as Spark's `<=>` compares them (-0.0 equals 0.0,
   * NaN equals NaN): what "unchanged" means for a changed row, a diff, a merge's cells. Spark does not compare maps,
   * so a map (also inside a struct or an array) is compared as its entries sorted by key.
   */
  def same(a: Column, b: Column, dt: DataType): Column =
    if (RowOrdering.isOrderable(dt)) a <=> b else comparable(a, dt) <=> comparable(b, dt)

  /** `c` with every map in it as the array of its entries sorted by key (orderable when the map's types are). */
  private def comparable(c: Column, dt: DataType): Column = dt match {
    case _ if RowOrdering.isOrderable(dt) => c
    case m: MapType => functions.array_sort(functions.transform(functions.map_entries(c), e => functions.struct(
      comparable(e.getField("key"), m.keyType).as("key"), comparable(e.getField("value"), m.valueType).as("value"))))
    case a: ArrayType => functions.transform(c, x => comparable(x, a.elementType))
    case s: StructType => functions.when(c.isNotNull,
      functions.struct(s.fields.toSeq.map(f => comparable(c.getField(f.name), f.dataType).as(f.name)): _*))
    case _ => c
  }
}
