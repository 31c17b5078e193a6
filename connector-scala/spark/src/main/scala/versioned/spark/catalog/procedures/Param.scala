package versioned.spark.catalog.procedures

import org.apache.spark.sql.types.{BooleanType, DataType, DoubleType, IntegerType, MapType, StringType}

/**
 * A procedure parameter: its name, SQL type ([[ParamKind]]), and whether a call may leave it out (an optional one
 * takes its kind's default). Spark casts each argument to the parameter's type before the call (a string literal
 * such as `'true'` or `'3600'` too), so a procedure reads typed values ([[Args]]).
 */
private[procedures] final case class Param(name: String, required: Boolean, comment: String,
                                           kind: ParamKind = ParamKind.Text)

private[procedures] object Param {
  /** An optional boolean parameter, false unless given. */
  def flag(name: String, comment: String, default: Boolean = false): Param =
    Param(name, required = false, comment, ParamKind.Flag(default))
}

/** The SQL type of a parameter and the SQL expression of its default (NULL for every kind but flags). */
private[procedures] sealed abstract class ParamKind(val sqlType: DataType) {
  def default: String = s"CAST(NULL AS ${sqlType.sql})"
}

private[procedures] object ParamKind {
  /** A string: a name, a revision, a condition, an enumerated choice. */
  case object Text extends ParamKind(StringType)
  /** A boolean with a default. */
  final case class Flag(value: Boolean) extends ParamKind(BooleanType) {
    override def default: String = if (value) "TRUE" else "FALSE"
  }
  /** A number of seconds (fractions allowed). */
  case object Seconds extends ParamKind(DoubleType)
  /** A whole number counting from 1. */
  case object Ordinal extends ParamKind(IntegerType)
  /** Names by name (a `map('products', 'fixed_products')`). */
  case object Names extends ParamKind(MapType(StringType, StringType))
}
