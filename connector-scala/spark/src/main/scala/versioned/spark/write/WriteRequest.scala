package versioned.spark.write

import versioned.core.format.WriteMode
import org.apache.spark.sql.functions.{col => _, _}
import versioned.core._
import versioned.spark.session._
import versioned.spark.format._

private[versioned] final case class WriteRequest(
    ident: TableIdent,
    branch: Option[String],
    mode: WriteMode,
    primaryKey: Option[Seq[String]],
    upsert: Boolean,
    author: String,
    message: String,
    options: Map[String, String],
    expectedHead: Option[String] = None,
    deleteColumn: Option[String] = None,
    beforeImages: Boolean = false,
    allowEmpty: Boolean = false) {
  /** Only the options that locate the warehouse, for internal re-reads of the table. */
  def locationOptions: Map[String, String] = options.filter { case (k, _) =>
    k.equalsIgnoreCase(VersionedOptions.Warehouse) || k.equalsIgnoreCase(VersionedOptions.MetastoreUrl)
  }
}
