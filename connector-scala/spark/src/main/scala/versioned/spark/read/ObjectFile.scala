package versioned.spark.read

/**
 * One object to read: its URI (under the warehouse's `objects/`, or the first location recorded for an object a
 * lazy clone or an import reads in place in another warehouse), byte size, row count, id and recorded
 * checksum (verified on open). `bounds`: the fragment it is read in, when some of its rows may lie outside that
 * fragment (the read rule, [[FragmentBounds]]): its rows are then read within them ([[ObjectFiles.open]]).
 * `alternates`: the object's other recorded locations, tried in order when it cannot be opened at `uri`.
 */
private[versioned] final case class ObjectFile(uri: String, size: Long, rows: Long, id: String, checksum: String,
                                               bounds: Option[FragmentBounds] = None, alternates: Seq[String] = Nil) {
  /** What the object's rows read in its fragment are cached under: the URI, and the bounds when they restrict it. */
  def readName: String = bounds.fold(uri)(b => s"$uri@${b.lower.getOrElse("")}..${b.upper.getOrElse("")}")
}

private[versioned] object ObjectFile {
  def of(config: versioned.core.WarehouseConfig, m: versioned.core.ObjectMeta): ObjectFile =
    // in place at its locations, if it has any
    m.urisIn(config) match { case first +: rest => ObjectFile(first, m.sizeBytes, m.rowCount, m.id, m.checksum, alternates = rest) }
}
