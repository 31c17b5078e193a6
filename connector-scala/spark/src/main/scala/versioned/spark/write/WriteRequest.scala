package versioned.spark.write

import org.apache.spark.sql.SparkSession
import versioned.core.Errors
import versioned.core.format.WriteMode
import versioned.spark.session.{Settings, TableHandle, TableIdent, VersionedOptions}

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
    allowEmpty: Boolean = false,
    writeId: Option[String] = None,
    deferred: Option[DeferredWrites.Handler] = None,
    stream: Option[StreamBatch] = None,
    replaceWhere: Option[String] = None) {
  /** Only the options that locate the warehouse, for internal re-reads of the table. */
  def locationOptions: Map[String, String] = options.filter { case (k, _) =>
    k.equalsIgnoreCase(VersionedOptions.Warehouse) || k.equalsIgnoreCase(VersionedOptions.MetastoreUrl)
  }
}

/**
 * [[from]] builds a request from write options, with defaults for author and message. Every write
 * builds its request before it stages anything, so this is where write options (unknown keys,
 * `primaryKey`, `upsert`) and the session's settings are validated.
 */
private[versioned] object WriteRequest {
  def from(table: TableHandle, options: Map[String, String], mode: WriteMode,
           deferred: Option[DeferredWrites.Handler] = None): WriteRequest = {
    VersionedOptions.validate(options, VersionedOptions.WriteOptions, "writes to the versioned format")
    val settings = Settings.of(SparkSession.active).checkedForWrites()
    val o = options.map { case (k, v) => k.toLowerCase -> v }
    def opt(k: String) = o.get(k.toLowerCase).filter(_.nonEmpty)
    val pk = o.get(VersionedOptions.PrimaryKey.toLowerCase).map(VersionedOptions.primaryKey)
    val upsert = o.get(VersionedOptions.Upsert.toLowerCase).exists(VersionedOptions.boolean(VersionedOptions.Upsert, _))
    val author = settings.authorOr(opt(VersionedOptions.Author))
    if (o.get(VersionedOptions.DeleteColumn.toLowerCase).exists(_.trim.isEmpty)) throw Errors.invalidOption(
      s"Option '${VersionedOptions.DeleteColumn}' is empty: name the boolean column whose true rows delete their key, " +
        "or leave the option out for a plain append.")
    val deleteColumn = opt(VersionedOptions.DeleteColumn)
    val beforeImages = o.get(VersionedOptions.BeforeImages.toLowerCase)
      .map(VersionedOptions.boolean(VersionedOptions.BeforeImages, _)).getOrElse(settings.beforeImages)
    val allowEmpty = o.get(VersionedOptions.AllowEmpty.toLowerCase).exists(VersionedOptions.boolean(VersionedOptions.AllowEmpty, _))
    val replaceWhere = o.get(VersionedOptions.ReplaceWhere.toLowerCase).map(_.trim)
    replaceWhere.foreach { c =>
      val why =
        if (c.isEmpty) Some("is empty: give the SQL condition of the rows to replace, e.g. \"day = '2026-01-31'\"")
        else if (mode != WriteMode.Overwrite) Some("applies to overwrites (mode 'overwrite'): it replaces the rows " +
          "matching the condition with the data")
        else if (upsert || deleteColumn.isDefined) Some("replaces rows by a condition; an upsert (or deleteColumn) " +
          "replaces them by key. Give one of the two")
        else if (deferred.isDefined) Some("is not taken by a transaction's writes: delete the rows (delete where) and " +
          "append the data in the transaction")
        else if (StreamBatches.fromOptions(opt).isDefined) Some("is not taken by a stream's writes")
        else None
      why.foreach(w => throw Errors.invalidOption(s"Option '${VersionedOptions.ReplaceWhere}' $w. Nothing was committed."))
    }
    val message = opt(VersionedOptions.Message).getOrElse(mode match {
      case WriteMode.Overwrite if replaceWhere.isDefined => s"replace rows of ${table.ident.table} where ${replaceWhere.get}"
      case WriteMode.Append if upsert || deleteColumn.isDefined => s"upsert into ${table.ident.table}"
      case WriteMode.Append => s"append to ${table.ident.table}"
      case WriteMode.Overwrite => s"overwrite ${table.ident.table}"
      case WriteMode.Changes => s"update ${table.ident.table}"
    })
    val stream = StreamBatches.fromOptions(opt)
    if (stream.isDefined && deferred.isDefined) throw Errors.invalidOption(s"Options '${VersionedOptions.StreamQueryId}' " +
      s"and '${VersionedOptions.StreamBatchId}' apply to writes that commit on their own, not to a transaction's writes.")
    if (deleteColumn.isDefined && mode != WriteMode.Append) throw Errors.invalidOption(
      "Option deleteColumn applies to appends (mode 'append'; a stream's append or update output mode): it upserts and " +
        "deletes by key. Remove it for an overwrite (mode 'overwrite'; a stream's complete output mode).")
    WriteRequest(table.ident, opt(VersionedOptions.Branch).orElse(table.branch), mode, pk, upsert || deleteColumn.isDefined,
      author, message, options, deleteColumn = deleteColumn, beforeImages = beforeImages,
      allowEmpty = allowEmpty, writeId = opt(VersionedOptions.WriteId), deferred = deferred, stream = stream,
      replaceWhere = replaceWhere)
  }
}
