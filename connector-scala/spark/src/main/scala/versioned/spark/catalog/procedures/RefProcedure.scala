package versioned.spark.catalog.procedures

import java.util.Collections
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.catalog.procedures.{BoundProcedure, ProcedureParameter, UnboundProcedure}
import org.apache.spark.sql.connector.read.{LocalScan, Scan}
import org.apache.spark.sql.types.{DataTypes, StructType}
import org.apache.spark.unsafe.types.UTF8String
import versioned.core.{Engine, Ref}

/** A procedure of typed parameters ([[Param]]), named or positional, optional ones taking their default. */
private[procedures] trait TypedArgsProcedure extends UnboundProcedure with BoundProcedure {
  protected def params: Seq[Param]

  override def bind(inputType: StructType): BoundProcedure = this
  override def isDeterministic: Boolean = false

  override def parameters(): Array[ProcedureParameter] = params.map { p =>
    val b = ProcedureParameter.in(p.name, p.kind.sqlType).comment(p.comment)
    (if (p.required) b else b.defaultValue(p.kind.default)).build()
  }.toArray
}

/**
 * Base of the ref procedures (`CALL <catalog>.system.<name>(...)`): named or positional
 * arguments, the first always `repository`; the result is one row (name, kind, image) describing the ref
 * after the call (for deletions: the image it pointed at).
 */
private[procedures] abstract class RefProcedure(engine: () => Engine) extends TypedArgsProcedure {
  protected def run(e: Engine, args: Args): Ref

  override def call(input: InternalRow): java.util.Iterator[Scan] = {
    val ref = versioned.spark.session.Identity.as(versioned.core.Actor.Sql)(run(engine(), new Args(name(), params, input)))
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
