package versioned.core

import java.sql.{Connection, ResultSet}

/** Row-level reads and writes of the metastore tables. Callers own the transaction. */
private[core] object MetaDao {
  // ---- repositories
  def repoExists(c: Connection, repo: String): Boolean =
    Sql.query(c, "SELECT 1 FROM vc_repositories WHERE name = ?", repo)(_ => 1).nonEmpty

  def defaultBranch(c: Connection, repo: String): Option[String] =
    Sql.query(c, "SELECT default_branch FROM vc_repositories WHERE name = ?", repo)(_.getString(1)).headOption

  def insertRepo(c: Connection, repo: String, defaultBranch: String, now: Long): Unit =
    Sql.update(c, "INSERT INTO vc_repositories (name, created_ms, default_branch) VALUES (?, ?, ?)", repo, now, defaultBranch)

  def listRepos(c: Connection): Vector[String] =
    Sql.query(c, "SELECT name FROM vc_repositories ORDER BY name")(_.getString(1))

  def deleteRepo(c: Connection, repo: String): Unit =
  {
    Seq("vc_branch_rules", "vc_checks", "vc_check_runs", "vc_retention", "vc_expired", "vc_refs", "vc_tables", "vc_images", "vc_upstreams").foreach(t => Sql.update(c, s"DELETE FROM $t WHERE repo = ?", repo))
    Reflog.drop(c, repo)
    Sql.update(c, "DELETE FROM vc_repositories WHERE name = ?", repo)
  }

  // ---- images
  private def image(repo: String)(rs: ResultSet): Image =
    Image(repo, rs.getString("hash"), Json.readStrings(rs.getString("parents")), rs.getLong("created_ms"),
      rs.getString("author"), rs.getString("message"), actorOf(rs.getString("committer"), rs.getString("app_id"),
        rs.getString("client")))

  /** A commit's actor from its row's columns: None for an image committed before commits carried one (schema 6). */
  private[core] def actorOf(committer: String, appId: String, client: String): Option[Actor] =
    Option(committer).map(Actor(_, Option(appId).getOrElse(""), Option(client).getOrElse("")))

  private val imageCols = "hash, parents, created_ms, author, message, committer, app_id, client"

  def getImage(c: Connection, repo: String, hash: String): Option[Image] =
    Sql.query(c, s"SELECT $imageCols FROM vc_images WHERE repo = ? AND hash = ?", repo, hash)(image(repo)).headOption

  /**
   * Image `hash` and, when garbage collection expired it, why ([[Retention]]): one query, the image joined with
   * `vc_expired`, so a resolution learns both in one round trip.
   */
  def getImageExpiry(c: Connection, repo: String, hash: String): Option[(Image, Option[String])] =
    Sql.query(c, s"SELECT ${imageCols.split(", ").map("i." + _).mkString(", ")}, e.reason AS expired_reason " +
      "FROM vc_images i LEFT JOIN vc_expired e ON e.repo = i.repo AND e.image_hash = i.hash WHERE i.repo = ? AND i.hash = ?",
      repo, hash)(r => (image(repo)(r), Option(r.getString("expired_reason")))).headOption

  /** Hashes starting with `prefix` (hex only), at most `limit`. */
  def imagesByPrefix(c: Connection, repo: String, prefix: String, limit: Int): Vector[String] =
    Sql.query(c, "SELECT hash FROM vc_images WHERE repo = ? AND hash >= ? AND hash < ? ORDER BY hash",
      repo, prefix, prefix + "g")(_.getString(1)).take(limit)

  private def seqImage(repo: String)(rs: ResultSet): SeqImage = SeqImage(image(repo)(rs), rs.getLong("seq"))

  /** An image with its commit order (`seq`). */
  def getSeqImage(c: Connection, repo: String, hash: String): Option[SeqImage] =
    Sql.query(c, s"SELECT $imageCols, seq FROM vc_images WHERE repo = ? AND hash = ?", repo, hash)(seqImage(repo)).headOption

  /** The image committed with sequence number `seq`. */
  def seqImageBySeq(c: Connection, repo: String, seq: Long): Option[SeqImage] =
    Sql.query(c, s"SELECT $imageCols, seq FROM vc_images WHERE repo = ? AND seq = ?", repo, seq)(seqImage(repo)).headOption

  def allImages(c: Connection, repo: String): Vector[Image] =
    Sql.query(c, s"SELECT $imageCols FROM vc_images WHERE repo = ?", repo)(image(repo))

  def nextSeq(c: Connection, repo: String): Long =
    Sql.query(c, "SELECT MAX(seq) FROM vc_images WHERE repo = ?", repo)(_.getLong(1)).headOption.getOrElse(0L) + 1

  /** Which of `hashes` are images of `repo` (batched). */
  def existingImages(c: Connection, repo: String, hashes: Seq[String]): Set[String] =
    hashes.distinct.grouped(500).flatMap { g =>
      Sql.query(c, s"SELECT hash FROM vc_images WHERE repo = ? AND hash IN (${marks(g)})", repo +: g: _*)(_.getString(1))
    }.toSet

  private def imageRow(repo: String)(rs: ResultSet): ImageRow =
    ImageRow(image(repo)(rs), rs.getLong("seq"), Json.readStrings(rs.getString("changed_tables")))

  /** Images of `repo` committed after `seq`, in commit order (one query). */
  def imageRowsAfter(c: Connection, repo: String, seq: Long): Vector[ImageRow] =
    Sql.query(c, s"SELECT $imageCols, seq, changed_tables FROM vc_images WHERE repo = ? AND seq > ? ORDER BY seq",
      repo, seq)(imageRow(repo))

  /** The given images of `repo` (batched), in commit order. */
  def imageRowsByHash(c: Connection, repo: String, hashes: Seq[String]): Vector[ImageRow] =
    hashes.distinct.grouped(500).flatMap { g =>
      Sql.query(c, s"SELECT $imageCols, seq, changed_tables FROM vc_images WHERE repo = ? AND hash IN (${marks(g)})",
        repo +: g: _*)(imageRow(repo))
    }.toVector.sortBy(_.seq)

  def insertImage(c: Connection, img: Image, seq: Long, changedTables: Seq[String]): Unit =
    insertImages(c, Seq(ImageRow(img, seq, changedTables)))

  /** Image rows (each with its own `seq`) in one JDBC batch: a fetch of many commits is not a statement per image. */
  def insertImages(c: Connection, rows: Seq[ImageRow]): Unit =
    Sql.batch(c, "INSERT INTO vc_images (repo, hash, parents, created_ms, author, message, seq, changed_tables, " +
      "committer, app_id, client) VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows.map { r =>
      val img = r.image
      Seq(img.repo, img.hash, Json.write(img.parents), img.createdMs, img.author, img.message, r.seq, Json.write(r.changedTables),
        img.actor.map(_.user), img.actor.map(_.appId), img.actor.map(_.client))
    })

  /** Forgets an image no ref points at (a gated commit whose checks failed): its table rows, then its row. */
  def deleteImage(c: Connection, repo: String, hash: String): Unit = {
    Sql.update(c, "DELETE FROM vc_tables WHERE repo = ? AND image_hash = ?", repo, hash)
    Sql.update(c, "DELETE FROM vc_images WHERE repo = ? AND hash = ?", repo, hash)
  }

  // ---- log entries: images with the tables each changed against its first parent (see LogRowReader)
  /** Lowest and highest `seq` of a repository's images; None when it has none. */
  def seqRange(c: Connection, repo: String): Option[(Long, Long)] =
    Sql.query(c, "SELECT (SELECT MIN(seq) FROM vc_images WHERE repo = ?), (SELECT MAX(seq) FROM vc_images WHERE repo = ?)",
      repo, repo) { rs => val lo = rs.getLong(1); if (rs.wasNull()) None else Some((lo, rs.getLong(2))) }.head

  /** Every image of a repository, or those with `from <= seq <= to`, to `f`. */
  def foreachLogEntry(c: Connection, repo: String, seqs: Option[(Long, Long)], read: LogRowReader)(f: LogEntry => Unit): Unit =
    seqs match {
      case None => Sql.foreach(c, s"SELECT ${read.columns} FROM vc_images WHERE repo = ?", repo)(rs => f(read(rs)))
      case Some((from, to)) => Sql.foreach(c, s"SELECT ${read.columns} FROM vc_images WHERE repo = ? AND seq >= ? AND seq <= ?",
        repo, from, to)(rs => f(read(rs)))
    }

  def logEntry(c: Connection, repo: String, hash: String): Option[LogEntry] = {
    val read = new LogRowReader(repo, utf8Bytes = false, graphOnly = false, identity)
    Sql.query(c, s"SELECT ${read.columns} FROM vc_images WHERE repo = ? AND hash = ?", repo, hash)(read.apply).headOption
  }

  // ---- tables of an image
  private def fragmentsToJson(fs: Seq[Fragment]): String =
    Json.write(fs.map(f => Map("lower" -> f.lower.orNull, "objects" -> f.objects)))

  private def fragmentsFromJson(s: String): Seq[Fragment] =
    Json.readSeq(s).map { case m: Map[String, Any] @unchecked =>
      Fragment(Option(m("lower")).map(_.asInstanceOf[Seq[Any]]), m("objects").asInstanceOf[Seq[Any]].map(_.toString))
    }

  private def tableRow(rs: ResultSet): ImageTable = {
    val t = TableVersion(rs.getString("name"), rs.getString("schema_json"), Json.readStrings(rs.getString("primary_key")),
      rs.getInt("hidden_key") == 1, fragmentsFromJson(rs.getString("fragments")),
      Option(rs.getString("compacted")).map(fragmentsFromJson), rs.getString("table_hash"),
      TableFormat.check(rs.getString("name"), Option(rs.getObject("format_version")).fold(TableFormat.Initial)(_.toString.toInt)))
    ImageTable(rs.getString("image_hash"), t, rs.getInt("changed") == 1)
  }

  private val tableCols = "image_hash, name, schema_json, primary_key, hidden_key, table_hash, fragments, compacted, changed, " +
    "format_version"

  /** The tables of `image`; VERSION_EXPIRED (never no tables) when a retention policy expired it. */
  def tablesOf(c: Connection, repo: String, image: String): Vector[ImageTable] = {
    val out = Sql.query(c, s"SELECT $tableCols FROM vc_tables WHERE repo = ? AND image_hash = ? ORDER BY name", repo, image)(tableRow)
    if (out.isEmpty) Retention.refuse(c, repo, image)
    out
  }

  /** Table `name` of `image`; VERSION_EXPIRED (never None) when a retention policy expired it. */
  def tableOf(c: Connection, repo: String, image: String, name: String): Option[ImageTable] = {
    val out = tableIfHeld(c, repo, image, name)
    if (out.isEmpty) Retention.refuse(c, repo, image)
    out
  }

  /** [[tableOf]] without the refusal of an expired image: None when its tables are gone too. */
  def tableIfHeld(c: Connection, repo: String, image: String, name: String): Option[ImageTable] =
    Sql.query(c, s"SELECT $tableCols FROM vc_tables WHERE repo = ? AND image_hash = ? AND name = ?",
      repo, image, name)(tableRow).headOption

  /** The table rows of those of the given images of `repo` whose tables are held (none of an expired image; batched). */
  def tablesHeld(c: Connection, repo: String, images: Seq[String]): Vector[ImageTable] =
    images.distinct.grouped(500).flatMap { g =>
      Sql.query(c, s"SELECT $tableCols FROM vc_tables WHERE repo = ? AND image_hash IN (${marks(g)})", repo +: g: _*)(tableRow)
    }.toVector

  /** Every table row of `repo` (each image's tables; none of an expired image), in one query. */
  def tablesOfRepo(c: Connection, repo: String): Vector[ImageTable] =
    Sql.query(c, s"SELECT $tableCols FROM vc_tables WHERE repo = ?", repo)(tableRow)

  /** The table rows of the given images of `repo` (batched). */
  def tablesOfImages(c: Connection, repo: String, images: Seq[String]): Vector[ImageTable] = {
    val out = tablesHeld(c, repo, images)
    val found = out.iterator.map(_.image).toSet
    images.distinct.filterNot(found).foreach(Retention.refuse(c, repo, _))
    out
  }

  def insertTables(c: Connection, repo: String, image: String, rows: Seq[ImageTable]): Unit =
    insertTableRows(c, repo, rows.map(_.copy(image = image)))

  /** Table rows of any images of `repo`, each under its own `image`, in one batch. */
  def insertTableRows(c: Connection, repo: String, rows: Seq[ImageTable]): Unit =
    Sql.batch(c, s"INSERT INTO vc_tables (repo, $tableCols) VALUES (?,?,?,?,?,?,?,?,?,?,?)", rows.map { r =>
      val t = r.table
      // format 1 is recorded as NULL, as every row written before format versions existed
      val format: Any = if (t.format == TableFormat.Initial) Sql.NullInt else Integer.valueOf(TableFormat.check(t.name, t.format))
      Seq(repo, r.image, t.name, t.schemaJson, Json.write(t.primaryKey), if (t.hiddenKey) 1 else 0, t.hash,
        fragmentsToJson(t.fragments), t.compacted.map(fragmentsToJson).orNull, if (r.changed) 1 else 0, format)
    })

  def setCompacted(c: Connection, repo: String, image: String, name: String, compacted: Option[Seq[Fragment]]): Unit =
    Sql.update(c, "UPDATE vc_tables SET compacted = ? WHERE repo = ? AND image_hash = ? AND name = ?",
      compacted.map(fragmentsToJson).orNull, repo, image, name)

  /** Every object id referenced by any table row of any repository (logical or compacted). */
  def referencedFragmentJson(c: Connection): Vector[(String, Option[String])] =
    Sql.query(c, "SELECT fragments, compacted FROM vc_tables")(r => (r.getString(1), Option(r.getString(2))))

  /** [[referencedFragmentJson]] with each row's repository and image. */
  def referencedFragmentJsonOf(c: Connection): Vector[(String, String, String, Option[String])] =
    Sql.query(c, "SELECT repo, image_hash, fragments, compacted FROM vc_tables")(r =>
      (r.getString(1), r.getString(2), r.getString(3), Option(r.getString(4))))

  /** The objects the table versions of `images` of `repo` name, with their image. */
  def tableObjectIds(c: Connection, repo: String, images: Seq[String]): Vector[(String, String)] =
    images.grouped(500).flatMap { g =>
      Sql.query(c, s"SELECT image_hash, fragments, compacted FROM vc_tables WHERE repo = ? AND image_hash IN (${marks(g)})",
        repo +: g: _*)(r => (r.getString(1), objectIdsOf(r.getString(2), Option(r.getString(3)))))
    }.flatMap { case (img, ids) => ids.map(img -> _) }.toVector

  def parseFragments(json: String): Seq[Fragment] = fragmentsFromJson(json)

  /** Every object a `vc_tables` row names: its logical fragments', then its compacted representation's. */
  def objectIdsOf(fragmentsJson: String, compactedJson: Option[String]): Seq[String] =
    fragmentsFromJson(fragmentsJson).flatMap(_.objects) ++ compactedJson.toSeq.flatMap(fragmentsFromJson).flatMap(_.objects)

  // ---- objects
  private def objectRow(rs: ResultSet): ObjectMeta =
    ObjectMeta(rs.getString("id"), rs.getString("kind"), Json.readStrings(rs.getString("parents")),
      rs.getLong("row_count"), rs.getLong("size_bytes"), rs.getString("format"), Json.readMap(rs.getString("min_values")),
      Json.readMap(rs.getString("max_values")),
      Json.readMap(rs.getString("null_counts")).map { case (k, v) => k -> v.toString.toLong },
      Option(rs.getString("checksum")).getOrElse(""), Nil, rs.getInt("shared") == 1)

  private def marks(g: Seq[_]): String = g.map(_ => "?").mkString(",")

  /** Object rows with their recorded locations, in order (`vc_object_locations`; none for objects stored here). */
  def getObjects(c: Connection, ids: Seq[String]): Map[String, ObjectMeta] =
    ids.distinct.grouped(500).flatMap { g =>
      val rows = Sql.query(c, s"SELECT * FROM vc_objects WHERE id IN (${marks(g)})", g: _*)(objectRow)
      val at = locations(c, rows.map(_.id))
      rows.map(o => o.copy(locations = at.getOrElse(o.id, Nil)))
    }.map(o => o.id -> o).toMap

  /** The recorded locations of objects `ids`, each object's in the order they were recorded (omitted: none). */
  def locations(c: Connection, ids: Seq[String]): Map[String, Seq[String]] =
    ids.distinct.grouped(500).flatMap { g =>
      Sql.query(c, s"SELECT object_id, location FROM vc_object_locations WHERE object_id IN (${marks(g)}) " +
        "ORDER BY object_id, ordinal", g: _*)(r => r.getString(1) -> r.getString(2))
    }.toVector.groupBy(_._1).map { case (id, ls) => id -> ls.map(_._2) }

  /**
   * Registers objects a commit uses, in the caller's transaction: those not in `existing` (ids that
   * already have a row, as the caller read them) are inserted, with their location when they are stored
   * outside the warehouse, the others re-marked live (`touched_ms = now`).
   */
  def insertObjects(c: Connection, objs: Seq[ObjectMeta], now: Long, repo: String, existing: Set[String]): Unit = {
    val fresh = objs.filterNot(o => existing(o.id)).groupBy(_.id).values.map(_.head).toSeq
    Sql.batch(c, "INSERT INTO vc_objects (id, kind, parents, row_count, size_bytes, format, min_values, max_values, " +
      "null_counts, created_ms, touched_ms, repo, checksum, shared) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (id) DO NOTHING",
      fresh.map { o =>
        Seq(o.id, o.kind, Json.write(o.parents), o.rowCount, o.sizeBytes, o.format, Json.write(o.minValues),
          Json.write(o.maxValues), Json.write(o.nullCounts), now, now, repo, o.checksum, if (o.shared) 1 else 0)
      })
    insertLocations(c, fresh.flatMap(o => o.locations.map(o.id -> _)))
    touchObjects(c, existing.toSeq, now)
  }

  /**
   * Records where objects stored outside the warehouse are (`protocol` [[MetaDao.HadoopProtocol]]: a Hadoop URI): each
   * location not yet recorded for its object goes after those that are (the next `ordinal`), so readers try the
   * places an object was first found at first; one already recorded is left where it is.
   */
  def insertLocations(c: Connection, locations: Seq[(String, String)]): Unit =
    Sql.batch(c, "INSERT INTO vc_object_locations (object_id, ordinal, protocol, location) SELECT ?, " +
      "COALESCE(MAX(ordinal) + 1, 0), ?, ? FROM vc_object_locations WHERE object_id = ? " +
      "ON CONFLICT (object_id, location) DO NOTHING", locations.distinct.map { case (id, uri) => Seq(id, HadoopProtocol, uri, id) })

  /** Forgets the locations of objects now stored in the warehouse itself. */
  def deleteLocations(c: Connection, ids: Seq[String]): Unit =
    ids.distinct.grouped(500).foreach(g =>
      Sql.update(c, s"DELETE FROM vc_object_locations WHERE object_id IN (${marks(g)})", g: _*))

  val HadoopProtocol = "hadoop"

  def touchObjects(c: Connection, ids: Seq[String], now: Long): Unit =
    ids.distinct.grouped(500).foreach(g =>
      Sql.update(c, s"UPDATE vc_objects SET touched_ms = ? WHERE id IN (${marks(g)})", now +: g: _*))

  def existingObjectIds(c: Connection, ids: Seq[String]): Set[String] =
    ids.distinct.grouped(500).flatMap { g =>
      Sql.query(c, s"SELECT id FROM vc_objects WHERE id IN (${marks(g)})", g: _*)(_.getString(1))
    }.toSet

  def allObjectIds(c: Connection): Vector[String] = Sql.query(c, "SELECT id FROM vc_objects")(_.getString(1))

  /** (id, touched_ms) of every object row, or of those first stored by `repo`. */
  def objectAges(c: Connection, repo: Option[String]): Vector[(String, Long)] = repo match {
    case None => Sql.query(c, "SELECT id, touched_ms FROM vc_objects")(r => (r.getString(1), r.getLong(2)))
    case Some(r) => Sql.query(c, "SELECT id, touched_ms FROM vc_objects WHERE repo = ?", r)(r => (r.getString(1), r.getLong(2)))
  }

  // ---- warehouse identity, generation and leases
  def metaValue(c: Connection, key: String): Option[String] =
    Sql.query(c, "SELECT value FROM vc_meta WHERE key = ?", key)(_.getString(1)).headOption

  def insertMeta(c: Connection, key: String, value: String): Unit =
    Sql.update(c, "INSERT INTO vc_meta (key, value) VALUES (?, ?)", key, value)

  /**
   * Takes the generation row lock (PostgreSQL; SQLite transactions are exclusive already) and returns the
   * generation; with `bump` a transaction that adds references increments it, so a garbage collection
   * that read references earlier knows to read them again.
   */
  def lockGeneration(c: Connection, bump: Boolean): Long = {
    Sql.update(c, s"UPDATE vc_generation SET value = value ${if (bump) "+ 1" else ""} WHERE id = 1")
    Sql.query(c, "SELECT value FROM vc_generation WHERE id = 1")(_.getLong(1)).head
  }

  /** The generation, without locking (garbage collection reads it before the references it goes with). */
  def generation(c: Connection): Long =
    Sql.query(c, "SELECT value FROM vc_generation WHERE id = 1")(_.getLong(1)).head

  /** touched_ms of the given objects that have a row. */
  def objectAges(c: Connection, ids: Seq[String]): Map[String, Long] =
    ids.distinct.grouped(500).flatMap { g =>
      Sql.query(c, s"SELECT id, touched_ms FROM vc_objects WHERE id IN (${marks(g)})", g: _*)(r =>
        (r.getString(1), r.getLong(2)))
    }.toMap

  def insertLease(c: Connection, id: String, repo: String, purpose: String, now: Long): Unit =
    Sql.update(c, "INSERT INTO vc_leases (id, repo, purpose, started_ms, heartbeat_ms) VALUES (?,?,?,?,?)",
      id, repo, purpose, now, now)

  def heartbeatLease(c: Connection, id: String, now: Long): Unit =
    Sql.update(c, "UPDATE vc_leases SET heartbeat_ms = ? WHERE id = ?", now, id)

  def deleteLease(c: Connection, id: String): Unit = Sql.update(c, "DELETE FROM vc_leases WHERE id = ?", id)

  /** (id, started_ms) of leases whose heartbeat is at or after `aliveSince`; older ones are dropped. */
  def liveLeases(c: Connection, aliveSince: Long): Vector[(String, Long)] = {
    Sql.update(c, "DELETE FROM vc_leases WHERE heartbeat_ms < ?", aliveSince)
    Sql.query(c, "SELECT id, started_ms FROM vc_leases")(r => (r.getString(1), r.getLong(2)))
  }

  def hasObjectRows(c: Connection): Boolean = Sql.query(c, "SELECT 1 FROM vc_objects LIMIT 1")(_ => 1).nonEmpty

  def hasAnyData(c: Connection): Boolean =
    Sql.query(c, "SELECT 1 FROM vc_repositories LIMIT 1")(_ => 1).nonEmpty ||
      Sql.query(c, "SELECT 1 FROM vc_objects LIMIT 1")(_ => 1).nonEmpty

  /** Deletes object rows and their recorded locations (never a file: callers delete the warehouse's own files). */
  def deleteObjects(c: Connection, ids: Seq[String]): Unit = {
    ids.grouped(500).foreach(g => Sql.update(c, s"DELETE FROM vc_objects WHERE id IN (${marks(g)})", g: _*))
    deleteLocations(c, ids)
  }

  // ---- refs
  private def refRow(rs: ResultSet): Ref =
    Ref(rs.getString("name"), rs.getString("kind"), rs.getString("image_hash"), rs.getLong("created_ms"))

  def getRef(c: Connection, repo: String, fullName: String): Option[Ref] =
    Sql.query(c, "SELECT name, kind, image_hash, created_ms FROM vc_refs WHERE repo = ? AND name = ?",
      repo, fullName)(refRow).headOption

  def listRefs(c: Connection, repo: String): Vector[Ref] =
    Sql.query(c, "SELECT name, kind, image_hash, created_ms FROM vc_refs WHERE repo = ? ORDER BY name", repo)(refRow)

  def allRefTargets(c: Connection): Vector[(String, String)] =
    Sql.query(c, "SELECT repo, image_hash FROM vc_refs")(r => (r.getString(1), r.getString(2)))

  // Every function below that moves a ref appends its reflog entry (Reflog.append) in the caller's transaction.
  def insertRef(c: Connection, repo: String, ref: Ref, cause: Cause): Unit = {
    Sql.update(c, "INSERT INTO vc_refs (repo, name, kind, image_hash, created_ms) VALUES (?,?,?,?,?)",
      repo, ref.fullName, ref.kind, ref.image, ref.createdMs)
    Reflog.append(c, repo, ref.fullName, None, Some(ref.image), cause)
  }

  /** Compare-and-swap of a ref's target. Returns false when the ref no longer points at `expected`. */
  def casRef(c: Connection, repo: String, fullName: String, expected: String, next: String, cause: Cause): Boolean = {
    val moved = Sql.update(c, "UPDATE vc_refs SET image_hash = ? WHERE repo = ? AND name = ? AND image_hash = ?",
      next, repo, fullName, expected) == 1
    if (moved) Reflog.append(c, repo, fullName, Some(expected), Some(next), cause)
    moved
  }

  def deleteRef(c: Connection, repo: String, fullName: String, cause: Cause): Boolean =
    getRef(c, repo, fullName).exists { old =>
      val deleted = Sql.update(c, "DELETE FROM vc_refs WHERE repo = ? AND name = ?", repo, fullName) == 1
      if (deleted) Reflog.append(c, repo, fullName, Some(old.image), None, cause)
      deleted
    }

  /** Renames a ref: two entries, the old name leaving its image and the new name taking it. */
  def renameRef(c: Connection, repo: String, from: String, to: String, cause: Cause): Unit =
    getRef(c, repo, from).foreach { old =>
      Sql.update(c, "UPDATE vc_refs SET name = ? WHERE repo = ? AND name = ?", to, repo, from)
      val why = cause.copy(detail = s"$from -> $to")
      Reflog.append(c, repo, from, Some(old.image), None, why)
      Reflog.append(c, repo, to, None, Some(old.image), why)
    }

  /** Points `fullName` at `image`, creating the ref when absent (remote-tracking refs follow their remote). */
  def setRef(c: Connection, repo: String, ref: Ref, cause: Cause): Unit = getRef(c, repo, ref.fullName) match {
    case None => insertRef(c, repo, ref, cause)
    case Some(old) if old.image != ref.image =>
      Sql.update(c, "UPDATE vc_refs SET image_hash = ? WHERE repo = ? AND name = ?", ref.image, repo, ref.fullName)
      Reflog.append(c, repo, ref.fullName, Some(old.image), Some(ref.image), cause)
    case Some(_) => ()
  }

  /**
   * Deletes the row of `pattern` from `table`, a repository's rules kept one per branch pattern (protection rules,
   * retention policies); raises `notFound` when there is none, RepositoryNotFound when `repo` does not exist.
   */
  def deletePatternRule(c: Connection, table: String, repo: String, pattern: String)(notFound: => VersionedException): Unit = {
    if (!repoExists(c, repo)) throw new RepositoryNotFoundException(repo)
    if (Sql.update(c, s"DELETE FROM $table WHERE repo = ? AND pattern = ?", repo, pattern) == 0) throw notFound
  }

  /** A change that moves no ref but is audited with them (a protection rule): an entry on `name`, no images. */
  def logChange(c: Connection, repo: String, name: String, cause: Cause): Unit =
    Reflog.append(c, repo, name, None, None, cause)

  // ---- remotes (vc_upstreams: `url` holds the remote as JSON, see Remote)
  def upstreams(c: Connection, repo: String): Vector[(String, String)] =
    Sql.query(c, "SELECT remote, url FROM vc_upstreams WHERE repo = ? ORDER BY remote", repo)(r => (r.getString(1), r.getString(2)))

  def insertUpstream(c: Connection, repo: String, remote: String, url: String): Unit =
    Sql.update(c, "INSERT INTO vc_upstreams (repo, remote, url) VALUES (?, ?, ?)", repo, remote, url)

  def updateUpstream(c: Connection, repo: String, remote: String, url: String): Boolean =
    Sql.update(c, "UPDATE vc_upstreams SET url = ? WHERE repo = ? AND remote = ?", url, repo, remote) == 1

  def deleteUpstream(c: Connection, repo: String, remote: String): Boolean =
    Sql.update(c, "DELETE FROM vc_upstreams WHERE repo = ? AND remote = ?", repo, remote) == 1

  /** Makes `branch` the default: a `HEAD` entry from the old default's head to the new one's. */
  def setDefaultBranch(c: Connection, repo: String, branch: String, cause: Cause): Unit = {
    val old = defaultBranch(c, repo)
    Sql.update(c, "UPDATE vc_repositories SET default_branch = ? WHERE name = ?", branch, repo)
    def head(b: String) = getRef(c, repo, Ref.branch(b)).map(_.image)
    if (!old.contains(branch)) Reflog.append(c, repo, Reflog.Head, old.flatMap(head), head(branch),
      cause.copy(detail = s"${old.getOrElse("")} -> $branch"))
  }
}
