package versioned.core

/** Object kinds, as in Splitgraph: a SNAP is a full copy of a fragment, a DIFF a conflated list of changes. */
object ObjectKind {
  val Snap = "SNAP"
  val Diff = "DIFF"
}

/**
 * Change kinds stored in the `_vchange` column of DIFF objects: Splitgraph's numbering, plus Upsert
 * ("the row now has these values", written by upserts without reading the table; whether it was an
 * insert or an update follows from the previous version).
 */
object ChangeKind {
  val Insert: Byte = 0
  val Delete: Byte = 1
  val Update: Byte = 2
  val Upsert: Byte = 3
}

/**
 * An immutable, content-addressed data file. Statistics are keyed by column name; values use the
 * engine's JSON value encoding (numbers for numeric/date/timestamp columns, strings for strings).
 * `checksum` ([[ObjectChecksum]]) lets readers verify the file's bytes; empty for objects written before
 * format 2. `locations` are set for an object stored outside this warehouse's `objects/` (a lazy clone or an
 * imported table reads it in place there, docs/REMOTES.md): every place it is known to be, in the order a reader
 * tries them (the first recorded first); empty for an object this warehouse stores.
 */
final case class ObjectMeta(
    id: String,
    kind: String,
    parents: Seq[String],
    rowCount: Long,
    sizeBytes: Long,
    format: String,
    minValues: Map[String, Any],
    maxValues: Map[String, Any],
    nullCounts: Map[String, Long],
    checksum: String = "",
    locations: Seq[String] = Nil,
    shared: Boolean = false) {
  def path: String = ObjectMeta.relativePath(id)
  /** Whether the object's bytes are read elsewhere, in place ([[locations]]), rather than from this warehouse. */
  def isRemote: Boolean = locations.nonEmpty
  /**
   * Where the object's bytes are read, in the order to try them: its recorded locations (`vc_object_locations`),
   * else the one place under `config`'s `objects/`.
   */
  def urisIn(config: WarehouseConfig): Seq[String] = if (locations.nonEmpty) locations else Seq(config.objectUri(id))
  /** The first of [[urisIn]]. */
  def uriIn(config: WarehouseConfig): String = urisIn(config).head
}

object ObjectMeta {
  def relativePath(id: String): String = s"objects/${id.take(2)}/$id.parquet"
}

/**
 * A contiguous primary-key range of a table version: keys k with lower <= k < next fragment's lower
 * (the first fragment has no lower bound). `objects` is the chain, oldest first: an optional SNAP,
 * then DIFFs in commit order.
 */
final case class Fragment(lower: Option[Seq[Any]], objects: Seq[String])

/**
 * One table as recorded in one image. `fragments` is the logical content (hashed into the image);
 * `compacted` is an optional equivalent representation with shorter chains, used for reads and as
 * the base of later commits. `hiddenKey` marks tables without a user primary key, whose identity is
 * the whole row plus a duplicate ordinal (see docs/FORMAT.md).
 */
final case class TableVersion(
    name: String,
    schemaJson: String,
    primaryKey: Seq[String],
    hiddenKey: Boolean,
    fragments: Seq[Fragment],
    compacted: Option[Seq[Fragment]] = None,
    hash: String = "",
    format: Int = TableFormat.Initial) {
  def withHash: TableVersion = copy(hash = Hashing.tableHash(this))
  /** The representation a reader or a writer should use. */
  def effectiveFragments: Seq[Fragment] = compacted.getOrElse(fragments)
  /** Every object the version lists: its logical chains, then its compacted ones (ids may repeat). */
  def objectIds: Seq[String] = (fragments ++ compacted.toSeq.flatten).flatMap(_.objects)
  def sameContentAs(o: TableVersion): Boolean = Hashing.tableHash(this) == Hashing.tableHash(o)
}

final case class Image(
    repo: String,
    hash: String,
    parents: Seq[String],
    createdMs: Long,
    author: String,
    message: String,
    actor: Option[Actor] = None) {
  def shortHash: String = hash.take(12)
}

/**
 * An image as its metastore row holds it: with its commit order in its repository (`seq`) and the tables
 * it changed, as remotes copy it from one warehouse to another.
 */
final case class ImageRow(image: Image, seq: Long, changedTables: Seq[String])

/** A table entry of an image, with whether it changed against the first parent. */
final case class ImageTable(image: String, table: TableVersion, changed: Boolean)

object RefKind {
  val Branch = "branch"
  val Tag = "tag"
  val Lock = "lock"
  val Remote = "remote"
}

/** A named pointer. `fullName` is `heads/<b>`, `tags/<t>`, `locks/<ns>:<n>` or `remotes/<r>/<ref>`. */
final case class Ref(fullName: String, kind: String, image: String, createdMs: Long) {
  def shortName: String = fullName.substring(fullName.indexOf('/') + 1)
}

object Ref {
  def branch(name: String): String = s"heads/$name"
  def tag(name: String): String = s"tags/$name"
  def lock(ns: String, name: String): String = s"locks/$ns:$name"
  /** Prefix of the refs that track remote `remote`: `remotes/<remote>/<branch>` and `remotes/<remote>/tags/<tag>`. */
  def remotePrefix(remote: String): String = s"remotes/$remote/"
  /** The ref tracking branch `branch` of remote `remote`. */
  def remoteBranch(remote: String, branch: String): String = remotePrefix(remote) + branch
  /** The ref tracking tag `tag` of remote `remote` (branch names never start with `tags/`). */
  def remoteTag(remote: String, tag: String): String = remotePrefix(remote) + "tags/" + tag
}

/** A change to one table in a commit. */
sealed trait TableUpdate
object TableUpdate {
  final case class Put(table: TableVersion, newObjects: Seq[ObjectMeta]) extends TableUpdate
  case object Drop extends TableUpdate
}

/**
 * What a commit did: the image the branch is at afterwards. `empty`: nothing changed, so no image was made and the
 * branch stayed where it was (`image` is its head), as git's "nothing to commit".
 */
final case class CommitResult(image: Image, branch: String, changedTables: Seq[String], empty: Boolean = false)

/** One entry of `log`. */
final case class LogEntry(image: Image, tablesChanged: Seq[String])

/**
 * The format versions of a table version (`vc_tables.format_version`, NULL = 1; docs/FORMAT.md): 1, every object of
 * a fragment's chain holds keys within its bounds; 2, a chain may list a shared object (`vc_objects.shared`), holding
 * keys of other fragments too, which readers read within the fragment's bounds (the read rule).
 */
object TableFormat {
  val Initial = 1
  val SharedObjects = 2
  /** The newest format this build reads. */
  val Newest: Int = SharedObjects

  /** `version` of table `table`, refused when this build does not know it ([[TableFormatUnsupportedException]]). */
  def check(table: String, version: Int): Int =
    if (version < Initial || version > Newest) throw new TableFormatUnsupportedException(table, version) else version
}
