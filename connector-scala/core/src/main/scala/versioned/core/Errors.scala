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
  val Unsupported = "UNSUPPORTED_OPERATION"
  val MetastoreError = "METASTORE_ERROR"
  val StorageError = "STORAGE_ERROR"
}

/** Root of every error the engine raises. `errorClass` is stable; the message says what to do. */
class VersionedException(val errorClass: String, message: String, cause: Throwable = null)
  extends RuntimeException(s"[$errorClass] $message", cause) {
  def getErrorClass: String = errorClass
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
/** A compare-and-swap on a branch head lost a race: nothing was committed. Retry on the new head. */
class RefConflictException(message: String) extends RefStateException(ErrorClass.RefConflict, message)

object Errors {
  def invalidOption(msg: String) = new InvalidInputException(ErrorClass.InvalidOption, msg)
  def unsupported(msg: String) = new VersionedException(ErrorClass.Unsupported, msg)
  def metastore(msg: String, cause: Throwable) = new VersionedException(ErrorClass.MetastoreError, msg, cause)
  def storage(msg: String, cause: Throwable) = new VersionedException(ErrorClass.StorageError, msg, cause)
}
