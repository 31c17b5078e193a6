package versioned.core

/** Stable error classes. The string value is part of the public contract (Python maps on it). */
object ErrorClass {
  val RepositoryNotFound = "REPOSITORY_NOT_FOUND"
  val RepositoryExists = "REPOSITORY_EXISTS"
  val TableNotFound = "TABLE_NOT_FOUND"
  val TableExists = "TABLE_EXISTS"
  val RefNotFound = "REF_NOT_FOUND"
  val RefExists = "REF_EXISTS"
  val ImageNotFound = "IMAGE_NOT_FOUND"
  val AmbiguousRef = "AMBIGUOUS_REF"
  val InvalidName = "INVALID_NAME"
  val InvalidRevision = "INVALID_REVISION"
  val InvalidOption = "INVALID_OPTION"
  val ImmutableRef = "IMMUTABLE_REF"
  val RefConflict = "REF_CONFLICT"
  val ProtectedRef = "PROTECTED_REF"
  val SchemaMismatch = "SCHEMA_MISMATCH"
  val NullPrimaryKey = "NULL_PRIMARY_KEY"
  val DuplicateKey = "DUPLICATE_KEY"
  val KeyExists = "KEY_EXISTS"
  val MissingKeyColumn = "MISSING_KEY_COLUMN"
  val MergeCardinality = "MERGE_CARDINALITY_VIOLATION"
  val ReplaceWhereMismatch = "REPLACE_WHERE_MISMATCH"
  val Unsupported = "UNSUPPORTED_OPERATION"
  val MetastoreError = "METASTORE_ERROR"
  val StorageError = "STORAGE_ERROR"
  val ObjectCorrupt = "OBJECT_CORRUPT"
  val ObjectMissing = "OBJECT_MISSING"
  val WarehouseMismatch = "WAREHOUSE_MISMATCH"
  val MergeConflict = "MERGE_CONFLICT"
  val NoCommonAncestor = "NO_COMMON_ANCESTOR"
  val TransactionClosed = "TRANSACTION_CLOSED"
  val RemoteNotFound = "REMOTE_NOT_FOUND"
  val RemoteExists = "REMOTE_EXISTS"
  val RemoteUnreachable = "REMOTE_UNREACHABLE"
  val RemoteHistoryRewritten = "REMOTE_HISTORY_REWRITTEN"
  val NonFastForward = "NON_FAST_FORWARD"
  val ObjectStoreUnsupported = "OBJECT_STORE_UNSUPPORTED"
  val StreamCheckpointMismatch = "STREAM_CHECKPOINT_MISMATCH"
  val CheckFailed = "CHECK_FAILED"
  val CheckInvalid = "CHECK_INVALID"
  val CheckNotFound = "CHECK_NOT_FOUND"
  val VersionExpired = "VERSION_EXPIRED"
  val TableFormatUnsupported = "TABLE_FORMAT_UNSUPPORTED"

  /** SQLSTATE of each class (Spark error conditions carry one): 42xxx user errors, 0A000 unsupported, 58xxx system. */
  private val sqlStates: Map[String, String] = Map(
    RepositoryNotFound -> "42P01", TableNotFound -> "42P01", RefNotFound -> "42704", ImageNotFound -> "42704",
    RepositoryExists -> "42P07", TableExists -> "42P07", RefExists -> "42710",
    AmbiguousRef -> "42702", InvalidName -> "42602", InvalidRevision -> "22023", InvalidOption -> "22023",
    ImmutableRef -> "55000", ProtectedRef -> "55000", RefConflict -> "40001",
    SchemaMismatch -> "42804", NullPrimaryKey -> "23502", DuplicateKey -> "23505", KeyExists -> "23505",
    MissingKeyColumn -> "42703", MergeCardinality -> "21000", ReplaceWhereMismatch -> "23514", Unsupported -> "0A000",
    MetastoreError -> "58030", StorageError -> "58030", ObjectCorrupt -> "XX001", ObjectMissing -> "58030",
    WarehouseMismatch -> "55000", MergeConflict -> "40001", NoCommonAncestor -> "42000",
    TransactionClosed -> "25000",
    RemoteNotFound -> "42704", RemoteExists -> "42710", RemoteUnreachable -> "08001", RemoteHistoryRewritten -> "55000",
    NonFastForward -> "55000", ObjectStoreUnsupported -> "0A000", StreamCheckpointMismatch -> "55000",
    CheckFailed -> "23000", CheckInvalid -> "42000", CheckNotFound -> "42704",
    VersionExpired -> "42704", TableFormatUnsupported -> "0A000")

  def sqlState(errorClass: String): String = sqlStates.getOrElse(errorClass, "XX000")
}

/**
 * Root of every error the engine raises. `errorClass` is stable; the message says what to do. It is a
 * Spark error condition ([[org.apache.spark.SparkThrowable]], the only Spark type the engine uses), so
 * `spark.sql` and DataFrame users see the class and SQLSTATE as for Spark's own errors.
 */
class VersionedException(val errorClass: String, message: String, cause: Throwable = null)
  extends RuntimeException(s"[$errorClass] $message", cause) with org.apache.spark.SparkThrowable {
  override def getErrorClass: String = errorClass
  override def getCondition: String = errorClass
  override def getSqlState: String = ErrorClass.sqlState(errorClass)
  override def isInternalError: Boolean = false
  override def getMessageParameters: java.util.Map[String, String] =
    java.util.Collections.singletonMap("message", getMessage.stripPrefix(s"[$errorClass] "))
}

class NotFoundException(errorClass: String, message: String) extends VersionedException(errorClass, message)
class RepositoryNotFoundException(repo: String)
  extends NotFoundException(ErrorClass.RepositoryNotFound,
    s"Repository '$repo' does not exist. Create it with a first write, or check the name.")
class TableNotFoundException(repo: String, table: String, at: String)
  extends NotFoundException(ErrorClass.TableNotFound,
    s"Table '$table' does not exist in repository '$repo' at $at. Check the name or the version you asked for.")
class RefNotFoundException(msg: String) extends NotFoundException(ErrorClass.RefNotFound, msg)
class ImageNotFoundException(msg: String) extends NotFoundException(ErrorClass.ImageNotFound, msg)

class InvalidInputException(errorClass: String, message: String) extends VersionedException(errorClass, message)
class InvalidNameException(message: String) extends InvalidInputException(ErrorClass.InvalidName, message)
class AmbiguousRefException(message: String) extends InvalidInputException(ErrorClass.AmbiguousRef, message)
class SchemaMismatchException(message: String) extends InvalidInputException(ErrorClass.SchemaMismatch, message)
class DataValidationException(errorClass: String, message: String) extends InvalidInputException(errorClass, message)

class RefStateException(errorClass: String, message: String) extends VersionedException(errorClass, message)
class RefExistsException(message: String) extends RefStateException(ErrorClass.RefExists, message)
class ImmutableRefException(message: String) extends RefStateException(ErrorClass.ImmutableRef, message)
class ProtectedRefException(message: String) extends RefStateException(ErrorClass.ProtectedRef, message)
/** A protection rule (`pattern`) of `repo` refuses a move of `branch` (docs/GOVERNANCE.md): nothing was changed. */
class BranchProtectedException(val repo: String, val branch: String, val pattern: String, message: String)
  extends ProtectedRefException(message)
/** A compare-and-swap on a branch head lost a race: nothing was committed. Retry on the new head. */
class RefConflictException(message: String) extends RefStateException(ErrorClass.RefConflict, message)
/**
 * The branch moved, between planning a commit and recording it, to `head`, and the commits in between
 * changed a table this commit changes too. Nothing was committed; a writer that can re-plan on `head`
 * (its change does not overlap theirs) may retry there.
 */
class BranchMovedException(val head: Option[String], val tables: Seq[String], message: String)
  extends RefConflictException(message)

/** A merge, cherry-pick or revert met changes it cannot combine and was asked to fail on them: nothing was committed. */
class MergeConflictException(message: String) extends RefStateException(ErrorClass.MergeConflict, message)
/** An operation on a transaction that has ended (committed, aborted, or its commit failed): begin a new one. */
class TransactionClosedException(message: String) extends InvalidInputException(ErrorClass.TransactionClosed, message)
/** Two revisions share no history, and the merge was not told to allow that. */
class NoCommonAncestorException(message: String) extends InvalidInputException(ErrorClass.NoCommonAncestor, message)

/** The repository has no remote of that name. */
class RemoteNotFoundException(message: String) extends NotFoundException(ErrorClass.RemoteNotFound, message)
/** A remote of that name is already configured. */
class RemoteExistsException(message: String) extends RefStateException(ErrorClass.RemoteExists, message)
/** The remote's metastore or object store cannot be reached (or holds no warehouse): nothing was changed. */
class RemoteUnreachableException(message: String, cause: Throwable = null)
  extends VersionedException(ErrorClass.RemoteUnreachable, message, cause)
/** The remote no longer has history this repository holds from it (it was dropped and recreated): refused. */
class RemoteHistoryRewrittenException(message: String)
  extends RefStateException(ErrorClass.RemoteHistoryRewritten, message)
/** A warehouse, remote or object URI names a scheme this Spark has no file system for (s3a:// without its jars). */
class ObjectStoreUnsupportedException(message: String, cause: Throwable = null)
  extends VersionedException(ErrorClass.ObjectStoreUnsupported, message, cause)
/** A push would move a remote branch to an image that does not descend from its head: nothing was changed. */
class NonFastForwardException(message: String) extends RefStateException(ErrorClass.NonFastForward, message)

/**
 * A streaming query's checkpoint does not match what the branch holds for it: its batch is not the one after the
 * query's newest batch there (a checkpoint of another query, table or branch). Nothing was committed.
 */
class StreamCheckpointMismatchException(message: String)
  extends RefStateException(ErrorClass.StreamCheckpointMismatch, message)
/** Checks with severity error failed (or could not run) on an image a gated operation would land: nothing moved. */
class CheckFailedException(val failures: Seq[String], message: String) extends RefStateException(ErrorClass.CheckFailed, message)
/** A check definition that does not parse or names a table the repository does not have: it was not added. */
class CheckInvalidException(message: String) extends InvalidInputException(ErrorClass.CheckInvalid, message)
/** The repository has no check of that name. */
class CheckNotFoundException(message: String) extends NotFoundException(ErrorClass.CheckNotFound, message)

/**
 * The version asked for was expired by a retention policy (docs/SAFETY.md, "Retention policies"): its commit is still
 * in the log, its tables are gone. `policy` names the policy that expired it.
 */
class VersionExpiredException(val image: String, val policy: String, message: String)
  extends NotFoundException(ErrorClass.VersionExpired, message)

object Errors {
  def invalidOption(msg: String) = new InvalidInputException(ErrorClass.InvalidOption, msg)
  def unsupported(msg: String) = new VersionedException(ErrorClass.Unsupported, msg)
  def metastore(msg: String, cause: Throwable) = new VersionedException(ErrorClass.MetastoreError, msg, cause)
  def storage(msg: String, cause: Throwable) = new VersionedException(ErrorClass.StorageError, msg, cause)
  def warehouseMismatch(msg: String) = new VersionedException(ErrorClass.WarehouseMismatch, msg)
}

/** An object's bytes do not match what was recorded when it was written: nothing it holds is returned. */
class ObjectCorruptException(val objectId: String, detail: String, cause: Throwable = null)
  extends VersionedException(ErrorClass.ObjectCorrupt, s"Object $objectId is corrupt: $detail. Every table version " +
    "that uses it is affected (identical content is stored once). Verify the repository (procedure verify, or the API's verify) to list the damaged objects and the " +
    "versions that need them, then restore the file from a backup or a remote copy.", cause)

/** An object a version needs is not in the warehouse. */
class ObjectMissingException(val objectId: String, detail: String, cause: Throwable = null)
  extends VersionedException(ErrorClass.ObjectMissing, s"Object $objectId is missing: $detail. Verify the repository " +
    "(procedure verify, or the API's verify) to list the missing objects and the versions that need them, then restore them from a backup or a remote copy.", cause)

/**
 * A table version records a format version ([[TableFormat]], `vc_tables.format_version`) newer than this build reads:
 * refused, never read with rules it does not know (a shared DIFF read whole would give rows twice).
 */
class TableFormatUnsupportedException(val table: String, val version: Int)
  extends VersionedException(ErrorClass.TableFormatUnsupported, s"Table '$table' is stored in format version $version; " +
    s"this build reads format versions up to ${TableFormat.Newest}. Upgrade the versioned connector to read it.")
