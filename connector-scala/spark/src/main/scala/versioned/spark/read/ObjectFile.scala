package versioned.spark.read

/**
 * One object to read: its URI (under the warehouse's `objects/`, or the location recorded for an object a
 * lazy clone or an import reads in place in another warehouse), byte size, row count, id and recorded
 * checksum (verified on open).
 */
private[versioned] final case class ObjectFile(uri: String, size: Long, rows: Long, id: String, checksum: String)

private[versioned] object ObjectFile {
  def of(config: versioned.core.WarehouseConfig, m: versioned.core.ObjectMeta): ObjectFile =
    ObjectFile(m.uriIn(config), m.sizeBytes, m.rowCount, m.id, m.checksum) // in place at its location, if it has one
}
