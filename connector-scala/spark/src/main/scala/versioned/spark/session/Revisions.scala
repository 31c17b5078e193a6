package versioned.spark.session

import versioned.core.{Errors, Revision}

/** Turns read options into a [[Revision]] for the engine's resolver. */
private[versioned] object Revisions {
  def fromOptions(options: Map[String, String]): Revision = {
    val o = options.map { case (k, v) => k.toLowerCase -> v }
    val ref = o.get(VersionedOptions.Ref.toLowerCase)
    val image = o.get(VersionedOptions.Image.toLowerCase)
    val asOf = o.get(VersionedOptions.AsOf.toLowerCase)
    if (Seq(image, asOf).count(_.isDefined) > 1 || (image.isDefined && ref.isDefined))
      throw Errors.invalidOption("Give at most one of 'ref'/'image'/'asOf' (asOf may be combined with a branch in 'ref').")
    (ref, image, asOf) match {
      case (_, Some(h), _) =>
        if (!versioned.core.Hashing.looksLikePrefix(h.toLowerCase)) throw new versioned.core.InvalidInputException(
          versioned.core.ErrorClass.InvalidRevision, s"Option image='$h' is not an image hash or a prefix of at least 4 hex digits.")
        Revision.Spec(h)
      case (b, None, Some(ts)) => Revision.AsOf(Revision.parseTimestamp(ts), b)
      case (Some(r), None, None) => Revision.Spec(r)
      case _ => Revision.DefaultBranch
    }
  }
}
