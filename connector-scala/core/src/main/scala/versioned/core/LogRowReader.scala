package versioned.core

import java.nio.charset.StandardCharsets.UTF_8
import java.sql.ResultSet

/**
 * Reads log entries from rows of [[columns]] (by position), allocating little, because a whole history may
 * be 100,000 rows: with `utf8Bytes` (SQLite, whose text is UTF-8) text columns are read as bytes, as
 * sqlite-jdbc's getString costs about twice as much; JSON arrays are parsed from those bytes; an author (and a
 * committer, application id or client) equal to the previous row's is shared; and `known` maps a parent hash to the string of an image already
 * read, so each hash is held once. With `graphOnly`, only hashes and parents are read: the entries have
 * no creation time, author, message or changed tables (for counting what a log would list).
 */
private[core] final class LogRowReader(repo: String, utf8Bytes: Boolean, val graphOnly: Boolean, known: String => String) {
  // the last value read of each repeated column (author, committer, application id, client), as bytes and as text
  private val lastBytes = new Array[Array[Byte]](4)
  private val lastText = new Array[String](4)

  def columns: String =
    if (graphOnly) "hash, parents" else "hash, parents, created_ms, author, message, changed_tables, committer, app_id, client"

  def apply(rs: ResultSet): LogEntry =
    if (graphOnly) LogEntry(Image(repo, text(rs, 1), strings(rs, 2).map(known), 0L, "", ""), Nil)
    else LogEntry(Image(repo, text(rs, 1), strings(rs, 2).map(known), rs.getLong(3), repeated(rs, 4, 0), text(rs, 5),
      MetaDao.actorOf(repeated(rs, 7, 1), repeated(rs, 8, 2), repeated(rs, 9, 3))), strings(rs, 6))

  private def text(rs: ResultSet, i: Int): String =
    if (!utf8Bytes) rs.getString(i) else { val b = rs.getBytes(i); if (b == null) null else new String(b, UTF_8) }

  private def strings(rs: ResultSet, i: Int): Seq[String] =
    if (utf8Bytes) Json.readStrings(rs.getBytes(i)) else Json.readStrings(rs.getString(i))

  /** Column `i`, shared with the previous row's when equal (`slot`: which of the repeated columns). */
  private def repeated(rs: ResultSet, i: Int, slot: Int): String =
    if (!utf8Bytes) rs.getString(i)
    else {
      val b = rs.getBytes(i)
      if (b == null) null
      else {
        if (!java.util.Arrays.equals(b, lastBytes(slot))) { lastBytes(slot) = b; lastText(slot) = new String(b, UTF_8) }
        lastText(slot)
      }
    }
}
