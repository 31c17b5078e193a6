package versioned.spark.catalog.procedures

import org.apache.spark.sql.catalyst.InternalRow
import versioned.core.{Errors, Revision}

/**
 * The one reader of a call's arguments, typed by its procedure's [[Param]]s: each getter reads the value Spark
 * bound to the parameter (already cast to its type) and checks what the type cannot (a number's range).
 */
private[procedures] final class Args(procedure: String, params: Seq[Param], input: InternalRow) {
  private def at(name: String, kind: ParamKind => Boolean): Int = {
    val i = params.indexWhere(_.name == name)
    require(i >= 0 && kind(params(i).kind), s"$procedure has no parameter '$name' of that kind")
    i
  }

  /** A text argument; None when NULL. */
  def opt(name: String): Option[String] = {
    val i = at(name, _ == ParamKind.Text)
    if (input.isNullAt(i)) None else Option(input.getUTF8String(i)).map(_.toString)
  }

  /** A required argument; an empty string is passed on, for the check of what it names (a name, a revision). */
  def apply(name: String): String = opt(name).getOrElse(throw Errors.invalidOption(
    s"$procedure: argument '$name' is required (it is NULL)."))

  /** A text argument holding a comma-separated list of names; empty when NULL. */
  def list(name: String): Seq[String] = opt(name).toSeq.flatMap(_.split(',')).map(_.trim).filter(_.nonEmpty)

  /** A revision argument: a spec, or the repository's default branch when NULL (an empty string is no revision). */
  def revision(name: String): Revision = opt(name).map(s => Revision.Spec(s.trim)).getOrElse(Revision.DefaultBranch)

  /** A boolean argument; NULL is the parameter's default. */
  def flag(name: String): Boolean = {
    val i = at(name, _.isInstanceOf[ParamKind.Flag])
    if (input.isNullAt(i)) params(i).kind.asInstanceOf[ParamKind.Flag].value else input.getBoolean(i)
  }

  /** A number of seconds as milliseconds; -1 when NULL (the caller's default). */
  def millis(name: String): Long = {
    val i = at(name, _ == ParamKind.Seconds)
    if (input.isNullAt(i)) -1L
    else {
      val s = input.getDouble(i)
      if (s.isNaN || s.isInfinite || s < 0) throw Errors.invalidOption(
        s"$procedure: argument '$name' must be a number of seconds >= 0, not $s.")
      (s * 1000).toLong
    }
  }

  /** A number counting from 1; None when NULL. */
  def ordinal(name: String): Option[Int] = {
    val i = at(name, _ == ParamKind.Ordinal)
    Option.when(!input.isNullAt(i))(input.getInt(i)).map { n =>
      if (n < 1) throw Errors.invalidOption(s"$procedure: argument '$name' counts from 1 (1, 2, ...), not $n.")
      n
    }
  }

  /** A map of names (NULL keys are refused by Spark, NULL or blank values here); empty when NULL. */
  def names(name: String): Map[String, String] = {
    val i = at(name, _ == ParamKind.Names)
    if (input.isNullAt(i)) Map.empty
    else {
      val m = input.getMap(i)
      (0 until m.numElements()).map { j =>
        val k = m.keyArray().getUTF8String(j).toString
        val v = Option.when(!m.valueArray().isNullAt(j))(m.valueArray().getUTF8String(j).toString.trim).filter(_.nonEmpty)
        k -> v.getOrElse(throw Errors.invalidOption(s"$procedure: argument '$name' maps '$k' to no name; " +
          "give the name of a table or view for every entry."))
      }.toMap
    }
  }
}
