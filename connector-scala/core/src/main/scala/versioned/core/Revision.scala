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
