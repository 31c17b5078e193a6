package versioned.spark.read

import java.util.UUID
import java.util.concurrent.ConcurrentHashMap
import org.apache.spark.sql.{DataFrame, SparkSession}
import versioned.core.Errors
import versioned.spark.session.TableIdent
import versioned.spark.session.{TableSnapshot, VersionedOptions}

/**
 * The engine's own read of one table version: pinned by image hash, with the hidden duplicate ordinal of
 * key-less tables, optionally of the logical representation only (a diff that follows the logical chains
 * of a compacted version) and restricted to some fragments. Every internal re-read (planning a write, a
 * merge, a diff, compaction) goes through here.
 *
 * What an internal read may do beyond a user's read (see hidden columns, choose the representation, skip
 * fragments) is not an option a user can pass: the read carries only an unguessable token
 * ([[VersionedOptions.Pinned]]) naming a request registered in this JVM; an unknown token is refused.
 * A token lives for its `load()` call only: the loaded table holds the request itself
 * (`VersionedTable.pinned`), so the registry holds only the reads being loaded right now, and nothing a
 * DataFrame still uses can be evicted.
 */
private[versioned] object PinnedRead {
  /**
   * What an internal read asks for beyond the image: `fragments` (indexes into the representation read)
   * only; with `logical`, the logical fragments even when the version has a compacted representation; an
   * explicit table version (`version`, read instead of resolving the image: a transaction's version that
   * is not committed yet, whose objects are stored); the hidden columns (`hidden`, false only for reads a
   * user sees).
   */
  final case class Request(fragments: Option[Set[Int]], logical: Boolean = false,
                           version: Option[versioned.spark.session.TableSnapshot] = None, hidden: Boolean = true,
                           keys: Option[Seq[Any]] = None) {
    def applyTo(s: TableSnapshot): TableSnapshot = {
      val rep = if (logical) s.copy(version = s.version.copy(compacted = None)) else s
      val restricted = fragments.fold(rep)(rep.restrictedTo)
      keys.fold(restricted)(restricted.lookingUp)
    }
  }

  private val requests = new ConcurrentHashMap[String, Request]()

  /** Loads the read of `request`: its token is registered for the `load()` call and removed after it. */
  private def load(spark: SparkSession, location: Map[String, String], request: Request, path: String,
                   image: Option[String]): DataFrame = {
    val token = UUID.randomUUID().toString
    requests.put(token, request)
    try {
      val reader = spark.read.format("versioned").options(location).option(VersionedOptions.Pinned, token)
      image.fold(reader)(reader.option(VersionedOptions.Image, _)).load(path)
    } finally requests.remove(token)
  }

  /**
   * A read of the table at `image`; with `keys` (canonical values of the first key column), only what may
   * hold those keys is read ([[KeyLookup]]: rows of other keys may remain, the caller filters them).
   */
  def table(spark: SparkSession, location: Map[String, String], ident: TableIdent, image: String,
            fragments: Option[Seq[Int]] = None, logical: Boolean = false, keys: Option[Seq[Any]] = None): DataFrame = {
    load(spark, location, Request(fragments.map(_.toSet), logical, keys = keys), ident.toString, Some(image))
  }

  /**
   * A read of `snapshot` as given, whether or not the metastore records it (its objects must be stored):
   * with the hidden columns of key-less tables when `hidden`, else as a user reads the table.
   */
  def version(spark: SparkSession, location: Map[String, String], snapshot: versioned.spark.session.TableSnapshot,
              hidden: Boolean): DataFrame = {
    load(spark, location, Request(None, version = Some(snapshot), hidden = hidden), s"${snapshot.repo}.${snapshot.table}", None)
  }

  /**
   * A read of `snapshot` as given (committed or not), with its hidden columns, of some `fragments` only
   * and, with `logical`, of its logical representation: what a diff reads of a transaction's version.
   */
  def snapshot(spark: SparkSession, location: Map[String, String], snapshot: versioned.spark.session.TableSnapshot,
               fragments: Option[Seq[Int]], logical: Boolean): DataFrame = {
    load(spark, location, Request(fragments.map(_.toSet), logical, version = Some(snapshot)), s"${snapshot.repo}.${snapshot.table}", None)
  }

  /** How many reads are being loaded right now (their tokens registered). */
  def loading: Int = requests.size()

  /** The request of a token, or INVALID_OPTION: a token only comes from [[table]] in this JVM. */
  def request(token: String): Request = Option(requests.get(token)).getOrElse(throw Errors.invalidOption(
    s"Option '${VersionedOptions.Pinned}' is internal to versioned and cannot be set by a read."))
}
