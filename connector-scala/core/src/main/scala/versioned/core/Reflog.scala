package versioned.core

import java.sql.{Connection, ResultSet}

/**
 * One movement of a ref (docs/AUDIT.md): entry `seq` of the repository's reflog. `ref` is the ref's full name
 * (`heads/main`, `tags/v1`, `locks/ns:name`, `remotes/origin/main`), `HEAD` for a default-branch change or
 * `rules/<pattern>` for a protection rule change, `retention/<pattern>` for a retention policy change; `oldImage`/`newImage` are None where the ref did not exist
 * before/after. `hash` covers `prevHash` (the previous entry's hash) and every field ([[Reflog.hashOf]]).
 */
final case class ReflogEntry(repo: String, seq: Long, ref: String, oldImage: Option[String], newImage: Option[String],
                             operation: String, who: String, appId: String, client: String, detail: String, atMs: Long,
                             prevHash: String, hash: String) {
  /** How the entry is named where a revision is taken from it: `reflog@{seq}`. */
  def id: String = Reflog.idOf(seq)
  /** The image the entry restores: where the ref went, or, for a deletion, where it was. */
  def image: Option[String] = newImage.orElse(oldImage)
}

/** A reflog entry `verify` found changed, removed or reordered (`status`, one of [[Reflog]]'s statuses). */
final case class ReflogProblem(seq: Long, status: String, detail: String)

/**
 * The reflog: every ref movement appends an entry in the transaction of the move ([[Reflog.append]], called by
 * every metastore function that moves a ref). Entries are hash-chained, so [[verify]] finds an entry changed,
 * removed or put in another place by hand.
 */
final class Reflog(engine: Engine) {
  private def ms = engine.metastore

  /** Entries of `repo`, newest first; only those of `ref` (a full name, or a name in [[Reflog.Namespaces]]) when given; at most `limit` (<= 0: all). */
  def entries(repo: String, ref: Option[String] = None, limit: Int = 0): Seq[ReflogEntry] = ms.read { c =>
    if (!MetaDao.repoExists(c, repo)) throw new RepositoryNotFoundException(repo)
    val all = Reflog.entries(c, repo, newestFirst = true)
    val sel = ref.fold(all)(r => all.filter(e => e.ref == r || Reflog.Namespaces.exists(ns => e.ref == ns + r)))
    if (limit > 0) sel.take(limit) else sel
  }

  /** The problems of `repo`'s reflog; empty when the chain is intact. */
  def verify(repo: String): Seq[ReflogProblem] = audit(repo)._2

  /** How many entries `repo`'s reflog has, and its problems (empty when the chain is intact): one read of the log. */
  def audit(repo: String): (Int, Seq[ReflogProblem]) = ms.read { c =>
    if (!MetaDao.repoExists(c, repo)) throw new RepositoryNotFoundException(repo)
    val es = Reflog.entries(c, repo, newestFirst = false)
    (es.size, Reflog.verify(c, repo, es))
  }
}

object Reflog {
  /** The previous hash of a repository's first entry. */
  val Genesis: String = "0" * Hashing.HashLength
  val Changed = "changed"
  val Removed = "removed"
  val Reordered = "reordered"
  /** The ref name of a default-branch change's entry. */
  val Head = "HEAD"

  /** The namespaces a short ref name is looked up in by [[Reflog.entries]]. */
  val Namespaces: Seq[String] = Seq("heads/", "tags/", "locks/", "remotes/", "rules/", "retention/")

  private val Id = """reflog@\{(\d{1,18})\}""".r

  def idOf(seq: Long): String = s"reflog@{$seq}"

  /** The `seq` an entry id names (`reflog@{N}`), or None when `s` is no entry id. */
  def parseId(s: String): Option[Long] = s.trim match {
    case Id(n) => Some(n.toLong)
    case _ => None
  }

  /**
   * The entry's hash: SHA-256 of the length-prefixed UTF-8 fields `reflog`, prev hash, repo, seq, ref, old image,
   * new image (empty when absent), operation, who, app id, client, detail, at_ms ([[Hashing.sha256Hex]]).
   */
  def hashOf(e: ReflogEntry): String =
    Hashing.sha256Hex("reflog", e.prevHash, e.repo, e.seq.toString, e.ref, e.oldImage.getOrElse(""),
      e.newImage.getOrElse(""), e.operation, e.who, e.appId, e.client, e.detail, e.atMs.toString)

  /**
   * Appends the entry of a ref movement in the caller's transaction: reads the repository's chain head row,
   * locked (so appends of a repository never interleave), then moves the head to the new entry and inserts it.
   * Two statements on PostgreSQL (the locking read, then one statement writing both rows); on SQLite, whose
   * transactions take the write lock when they begin, the read and the two writes run in process. A repository
   * whose reflog has no head row yet (one made before the reflog) gets it first.
   */
  private[core] def append(c: Connection, repo: String, ref: String, old: Option[String], next: Option[String],
                           cause: Cause): ReflogEntry = {
    val sqlite = Sql.isSqlite(c)
    val lock = if (sqlite) "" else " FOR UPDATE"
    def tail() = Sql.query(c, s"SELECT seq, entry_hash FROM vc_reflog_heads WHERE repo = ?$lock", repo)(r =>
      (r.getLong(1), r.getString(2))).headOption
    val (last, prev) = tail().getOrElse {
      Sql.update(c, "INSERT INTO vc_reflog_heads (repo, seq, entry_hash) VALUES (?, 0, ?) ON CONFLICT (repo) DO NOTHING",
        repo, Genesis)
      tail().get
    }
    val a = cause.actor
    val draft = ReflogEntry(repo, last + 1, ref, old, next, cause.operation, a.user, a.appId, a.client, cause.detail,
      System.currentTimeMillis(), prev, "")
    val e = draft.copy(hash = hashOf(draft))
    val head = "UPDATE vc_reflog_heads SET seq = ?, entry_hash = ? WHERE repo = ?"
    val insert = "INSERT INTO vc_reflog (repo, seq, ref, old_image, new_image, operation, who, app_id, client, detail, " +
      "at_ms, prev_hash, entry_hash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)"
    val entryArgs = Seq(repo, e.seq, ref, old, next, e.operation, e.who, e.appId, e.client, e.detail, e.atMs, prev, e.hash)
    if (sqlite) { Sql.update(c, head, e.seq, e.hash, repo); Sql.update(c, insert, entryArgs: _*) }
    else Sql.update(c, s"WITH h AS ($head) $insert", (Seq(e.seq, e.hash, repo) ++ entryArgs): _*)
    e
  }

  private def row(rs: ResultSet): ReflogEntry =
    ReflogEntry(rs.getString("repo"), rs.getLong("seq"), rs.getString("ref"), Option(rs.getString("old_image")),
      Option(rs.getString("new_image")), rs.getString("operation"), rs.getString("who"), rs.getString("app_id"),
      rs.getString("client"), rs.getString("detail"), rs.getLong("at_ms"), rs.getString("prev_hash"),
      rs.getString("entry_hash"))

  private[core] def entries(c: Connection, repo: String, newestFirst: Boolean): Vector[ReflogEntry] =
    Sql.query(c, s"SELECT * FROM vc_reflog WHERE repo = ? ORDER BY seq ${if (newestFirst) "DESC" else "ASC"}", repo)(row)

  private[core] def entry(c: Connection, repo: String, seq: Long): Option[ReflogEntry] =
    Sql.query(c, "SELECT * FROM vc_reflog WHERE repo = ? AND seq = ?", repo, seq)(row).headOption

  /** Forgets a dropped repository's reflog. */
  private[core] def drop(c: Connection, repo: String): Unit =
    Seq("vc_reflog", "vc_reflog_heads").foreach(t => Sql.update(c, s"DELETE FROM $t WHERE repo = ?", repo))

  /**
   * Walks the chain in `seq` order: an entry whose hash is not its fields' is changed (or, when its fields hash
   * right under the place the chain gives it, reordered); a gap in `seq`, or a head past the last entry, is a
   * removal; an entry whose hash is not the one the next entry (or the head) recorded was changed and re-hashed.
   */
  private[core] def verify(c: Connection, repo: String, es: Vector[ReflogEntry]): Seq[ReflogProblem] = {
    val head = Sql.query(c, "SELECT seq, entry_hash FROM vc_reflog_heads WHERE repo = ?", repo)(r => (r.getLong(1), r.getString(2)))
      .headOption.getOrElse((0L, Genesis))
    // where the chain (each entry naming its predecessor's hash) places each entry, from the first on
    val byPrev = es.groupBy(_.prevHash)
    val chainSeq = Iterator.iterate((Genesis, 0L)) { case (h, n) => byPrev.get(h).map(e => (e.head.hash, n + 1)).getOrElse(("", -1L)) }
      .drop(1).takeWhile(_._2 > 0).take(es.size).map { case (h, n) => h -> n }.toMap
    val found = scala.collection.mutable.LinkedHashMap.empty[Long, ReflogProblem]
    def report(seq: Long, status: String, detail: String): Unit =
      if (!found.contains(seq)) found(seq) = ReflogProblem(seq, status, detail)
    var (prevSeq, prevHash) = (0L, Genesis)
    es.foreach { e =>
      if (e.seq != prevSeq + 1) report(prevSeq + 1, Removed, s"entries ${prevSeq + 1} to ${e.seq - 1} are missing")
      if (hashOf(e) != e.hash) chainSeq.get(e.hash).filter(s => s != e.seq && hashOf(e.copy(seq = s)) == e.hash) match {
        case Some(s) => report(e.seq, Reordered, s"entry ${e.seq} is entry $s of the chain, moved")
        case None => report(e.seq, Changed, s"entry ${e.seq} (${e.ref}, ${e.operation}) does not match its hash")
      } else if (e.prevHash != prevHash && e.seq == prevSeq + 1 && prevSeq > 0 && !found.contains(e.seq))
        report(prevSeq, Changed, s"entry $prevSeq does not have the hash entry ${e.seq} recorded (changed and re-hashed)")
      prevSeq = e.seq; prevHash = e.hash
    }
    if (head._1 > prevSeq) report(prevSeq + 1, Removed, s"entries ${prevSeq + 1} to ${head._1} are missing (the head is at ${head._1})")
    else if (head._1 < prevSeq) report(head._1 + 1, Changed, s"entries after ${head._1} were added by hand (the head is at ${head._1})")
    else if (prevSeq > 0 && head._2 != prevHash) report(prevSeq, Changed, s"entry $prevSeq is not the last entry the head recorded")
    found.values.toSeq.sortBy(_.seq)
  }
}
