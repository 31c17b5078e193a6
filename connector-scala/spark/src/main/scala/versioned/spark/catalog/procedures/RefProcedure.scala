package versioned.spark.catalog.procedures

import java.util.Collections
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.catalog.procedures.{BoundProcedure, ProcedureParameter, UnboundProcedure}
import org.apache.spark.sql.connector.read.{LocalScan, Scan}
import org.apache.spark.sql.types.{DataTypes, StructType}
import org.apache.spark.unsafe.types.UTF8String
import versioned.core.{Engine, Errors, Ref, Revision}

/** A procedure parameter: all are strings; optional ones default to NULL. */
private[procedures] final case class Param(name: String, required: Boolean, comment: String)

/** The string arguments of one call, by parameter name. */
private[procedures] final class Args(procedure: String, params: Seq[Param], input: InternalRow) {
  def opt(name: String): Option[String] = {
    val i = params.indexWhere(_.name == name)
    if (input.isNullAt(i)) None else Option(input.getUTF8String(i)).map(_.toString)
  }
  /** A required argument; an empty string is passed on, for the check of what it names (a name, a revision). */
  def apply(name: String): String = opt(name).getOrElse(throw Errors.invalidOption(
    s"$procedure: argument '$name' is required (it is NULL)."))
  /** A revision argument: a spec, or the repository's default branch when NULL (an empty string is no revision). */
  def revision(name: String): Revision = opt(name).map(s => Revision.Spec(s.trim)).getOrElse(Revision.DefaultBranch)
}

/** A procedure whose parameters are all strings (named or positional), optional ones defaulting to NULL. */
private[procedures] trait StringArgsProcedure extends UnboundProcedure with BoundProcedure {
  protected def params: Seq[Param]

  override def bind(inputType: StructType): BoundProcedure = this
  override def isDeterministic: Boolean = false

  override def parameters(): Array[ProcedureParameter] = params.map { p =>
    val b = ProcedureParameter.in(p.name, DataTypes.StringType).comment(p.comment)
    (if (p.required) b else b.defaultValue("CAST(NULL AS STRING)")).build()
  }.toArray
}

/**
 * Base of the ref procedures (`CALL <catalog>.system.<name>(...)`): named or positional string
 * arguments, the first always `repository`; the result is one row (name, kind, image) describing the ref
 * after the call (for deletions: the image it pointed at).
 */
private[procedures] abstract class RefProcedure(engine: () => Engine) extends StringArgsProcedure {
  protected def run(e: Engine, args: Args): Ref

  override def call(input: InternalRow): java.util.Iterator[Scan] = {
    val ref = run(engine(), new Args(name(), params, input))
    val row = InternalRow(UTF8String.fromString(ref.shortName), UTF8String.fromString(ref.kind),
      UTF8String.fromString(ref.image))
    Collections.singleton[Scan](new RefResult(Array(row))).iterator()
  }

  /** The ref before it is deleted, for the result row. */
  protected def existing(e: Engine, repo: String, fullName: String, what: String): Ref =
    e.refs.all(repo).find(_.fullName == fullName).getOrElse(
      throw new versioned.core.RefNotFoundException(s"$what does not exist in '$repo'."))
}

private[procedures] object RefProcedure {
  val Repo: Param = Param("repository", required = true, "repository (catalog namespace)")
  val outputType: StructType = new StructType().add("name", DataTypes.StringType, nullable = false)
    .add("kind", DataTypes.StringType, nullable = false).add("image", DataTypes.StringType, nullable = false)
}

private[procedures] final class RefResult(data: Array[InternalRow]) extends LocalScan {
  override def readSchema(): StructType = RefProcedure.outputType
  override def rows(): Array[InternalRow] = data
}
