package versioned.spark.write

import versioned.core.Errors
import versioned.spark.{VersionedOptions, VersionedTable}

/** Builds a [[WriteRequest]] from write options, with defaults for author and message. */
private[versioned] object WriteRequests {
  def from(table: VersionedTable, options: Map[String, String], mode: WriteMode): WriteRequest = {
    val o = options.map { case (k, v) => k.toLowerCase -> v }
    def opt(k: String) = o.get(k.toLowerCase).filter(_.nonEmpty)
    val pk = opt(VersionedOptions.PrimaryKey).map(_.split(',').map(_.trim).filter(_.nonEmpty).toSeq)
    val upsert = opt(VersionedOptions.Upsert).map(_.toLowerCase) match {
      case None | Some("false") => false
      case Some("true") => true
      case Some(other) => throw Errors.invalidOption(s"Option upsert='$other' must be 'true' or 'false'.")
    }
    val author = opt(VersionedOptions.Author)
      .orElse(org.apache.spark.sql.SparkSession.active.conf.getOption(VersionedOptions.ConfAuthor))
      .getOrElse(System.getProperty("user.name", "unknown"))
    val message = opt(VersionedOptions.Message).getOrElse(mode match {
      case WriteMode.Append => s"append to ${table.ident.table}"
      case WriteMode.Overwrite => s"overwrite ${table.ident.table}"
      case WriteMode.Changes => s"update ${table.ident.table}"
    })
    val deleteColumn = opt(VersionedOptions.DeleteColumn)
    if (deleteColumn.isDefined && mode != WriteMode.Append) throw Errors.invalidOption(
      "Option deleteColumn applies to mode 'append' (it upserts and deletes by key); remove it for 'overwrite'.")
    WriteRequest(table.ident, opt(VersionedOptions.Branch).orElse(table.branch), mode, pk, upsert || deleteColumn.isDefined,
      author, message, options, deleteColumn = deleteColumn)
  }
}
