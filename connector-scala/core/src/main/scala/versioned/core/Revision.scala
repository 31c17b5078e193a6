package versioned.core

import java.time.{Instant, LocalDate, LocalDateTime, ZoneOffset}
import scala.util.Try

/** What a reader asked for. Exactly one resolver turns it into an image, for every entry point. */
sealed trait Revision

object Revision {
  /**
   * A branch, tag, lock, remote-tracking ref (`remotes/origin/main` or `origin/main`), full hash or unique
   * prefix, optionally followed by `~N` / `^` / `^N`.
   */
  final case class Spec(spec: String) extends Revision
  /** The newest image on `branch` (default branch if None) created at or before `timestampMs`. */
  final case class AsOf(timestampMs: Long, branch: Option[String]) extends Revision
  case object DefaultBranch extends Revision

  /**
   * The revision a read asks for with its options `ref`, `image` and `asOf` (each None when not given): at most one
   * of them, except `asOf` with a branch in `ref`; none is the default branch. An `image` must look like a hash.
   */
  def of(ref: Option[String], image: Option[String], asOf: Option[String]): Revision = {
    if (Seq(image, asOf).count(_.isDefined) > 1 || (image.isDefined && ref.isDefined))
      throw Errors.invalidOption("Give at most one of 'ref'/'image'/'asOf' (asOf may be combined with a branch in 'ref').")
    (ref, image, asOf) match {
      case (_, Some(h), _) =>
        if (!Hashing.looksLikePrefix(h.toLowerCase)) throw new InvalidInputException(
          ErrorClass.InvalidRevision, s"Option image='$h' is not an image hash or a prefix of at least 4 hex digits.")
        Spec(h)
      case (b, None, Some(ts)) => AsOf(parseTimestamp(ts), b)
      case (Some(r), None, None) => Spec(r)
      case _ => DefaultBranch
    }
  }

  /** Parses ISO-8601 instants, `yyyy-MM-dd[ HH:mm:ss[.SSS]]` (UTC) or epoch milliseconds. */
  def parseTimestamp(s: String): Long = {
    val t = s.trim
    Try(t.toLong).toOption
      .orElse(Try(Instant.parse(t).toEpochMilli).toOption)
      .orElse(Try(LocalDateTime.parse(t.replace(' ', 'T')).toInstant(ZoneOffset.UTC).toEpochMilli).toOption)
      .orElse(Try(LocalDate.parse(t).atStartOfDay().toInstant(ZoneOffset.UTC).toEpochMilli).toOption)
      .getOrElse(throw new InvalidInputException(ErrorClass.InvalidRevision,
        s"Cannot parse timestamp '$s'. Use ISO-8601 (2026-01-31T12:00:00Z), 'yyyy-MM-dd HH:mm:ss' (UTC) or epoch millis."))
  }
}
