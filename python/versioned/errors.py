"""Exceptions raised by :mod:`versioned`.

Every exception is a :class:`VersionedError` carrying the engine's stable ``error_class`` string
(the same value the JVM side exposes through ``VersionedException.getErrorClass``). Catch a
specific class, a family (:class:`NotFoundError`, :class:`InvalidInputError`,
:class:`RefStateError`, :class:`DataValidationError`) or :class:`VersionedError` for all of them.

They stay in PySpark's hierarchy: every one is a :class:`pyspark.errors.PySparkException` (``getCondition()``,
``getErrorClass()`` and ``getSqlState()`` give the stable class and its SQLSTATE), and a family is the PySpark
exception a handler written for Spark expects: not-found, invalid-input and ref-state errors are
:class:`pyspark.errors.AnalysisException`, storage and metastore failures
:class:`pyspark.errors.SparkRuntimeException`, unsupported operations
:class:`pyspark.errors.UnsupportedOperationException`. An error raised by a call on a session is also an
instance of that session's own variant (``pyspark.errors.exceptions.captured.AnalysisException`` on a classic
session, ``pyspark.errors.exceptions.connect.AnalysisException`` on Spark Connect), so existing
``except AnalysisException`` handlers keep catching it.

Example::

    from versioned.errors import RefNotFound
    try:
        repo.resolve("no-such-branch")
    except RefNotFound as e:
        print(e.error_class)   # REF_NOT_FOUND
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Type

from pyspark.errors import AnalysisException as _AnalysisException
from pyspark.errors import SparkRuntimeException as _SparkRuntimeException
from pyspark.errors import UnsupportedOperationException as _UnsupportedOperationException

from versioned._error_base import (DataValidationError, InvalidInputError, NotFoundError, RefStateError,
                                   VersionedError, sql_state_of)
from versioned._pyspark_variants import pyspark_kind, with_pyspark_variant

__all__ = [
    "VersionedError",
    "NotFoundError",
    "InvalidInputError",
    "DataValidationError",
    "RefStateError",
    "RepositoryNotFound",
    "RepositoryExists",
    "TableNotFound",
    "TableExists",
    "RefNotFound",
    "RefExists",
    "ImageNotFound",
    "AmbiguousRef",
    "InvalidName",
    "InvalidRevision",
    "InvalidOption",
    "ImmutableRef",
    "RefConflict",
    "MergeConflict",
    "NoCommonAncestor",
    "TransactionClosed",
    "ProtectedRef",
    "SchemaMismatch",
    "NullPrimaryKey",
    "DuplicateKey",
    "KeyExists",
    "MissingKeyColumn",
    "MergeCardinalityViolation",
    "ReplaceWhereMismatch",
    "UnsupportedOperation",
    "MetastoreError",
    "StorageError",
    "ObjectCorrupt",
    "ObjectMissing",
    "WarehouseMismatch",
    "RemoteNotFound",
    "RemoteExists",
    "RemoteUnreachable",
    "RemoteHistoryRewritten",
    "NonFastForward",
    "ObjectStoreUnsupported",
    "StreamCheckpointMismatch",
    "CheckFailed",
    "CheckInvalid",
    "CheckNotFound",
    "VersionExpired",
    "TableFormatUnsupported",
    "error_for_class",
    "known_error_classes",
    "sql_state_of",
    "pyspark_kind",
    "with_pyspark_variant",
]

class RepositoryNotFound(NotFoundError):
    """The repository does not exist. Example: ``Repository(spark, "nope").branches()``."""

    error_class = "REPOSITORY_NOT_FOUND"


class RepositoryExists(VersionedError, _AnalysisException):
    """The repository already exists. Example: ``versioned.clone(spark, "shop", ...)`` when ``shop`` exists."""

    error_class = "REPOSITORY_EXISTS"


class TableNotFound(NotFoundError):
    """The table does not exist at the requested version. Example: ``spark.read.versioned("r.nope")``."""

    error_class = "TABLE_NOT_FOUND"


class TableExists(VersionedError, _AnalysisException):
    """The table already exists. Example: ``CREATE TABLE vc.shop.products (...)`` when ``products`` exists."""

    error_class = "TABLE_EXISTS"


class RefNotFound(NotFoundError):
    """No branch, tag, lock or image matches. Example: ``repo.resolve("no-such-branch")``."""

    error_class = "REF_NOT_FOUND"


class ImageNotFound(NotFoundError):
    """No image matches, e.g. ``main~99`` past the root or ``as_of`` before the first commit.
    Example: ``repo.resolve("main~99")``.
    """

    error_class = "IMAGE_NOT_FOUND"


class AmbiguousRef(InvalidInputError):
    """A hash prefix matches more than one image; give more characters.
    Example: ``repo.resolve("3f1c")`` when two images start with ``3f1c``.
    """

    error_class = "AMBIGUOUS_REF"


class InvalidName(InvalidInputError):
    """A repository, table, branch, tag or lock name is invalid. Example: ``repo.create_branch("a..b")``."""

    error_class = "INVALID_NAME"


class InvalidRevision(InvalidInputError):
    """A revision or timestamp cannot be parsed. Example: ``repo.resolve("")``."""

    error_class = "INVALID_REVISION"


class InvalidOption(InvalidInputError):
    """An option has an invalid value or options conflict. Example: ``repo.log(limit="ten")``."""

    error_class = "INVALID_OPTION"


class ImmutableRef(RefStateError):
    """Tags and locks never move; writing to a tag raises this.
    Example: ``df.write.versioned("shop.products", branch="v1")`` with ``v1`` a tag.
    """

    error_class = "IMMUTABLE_REF"


class RefConflict(RefStateError):
    """A branch moved concurrently; nothing was committed. Retry.
    Example: two writers committing to ``main`` at once, one of them.
    """

    error_class = "REF_CONFLICT"


class ProtectedRef(RefStateError):
    """The ref is protected, e.g. the repository's default branch cannot be deleted.
    Example: ``repo.delete_branch(repo.default_branch)``.
    """

    error_class = "PROTECTED_REF"


class RefExists(RefStateError):
    """A branch, tag or lock with that name already exists. Example: ``repo.create_branch("dev")`` twice."""

    error_class = "REF_EXISTS"


class SchemaMismatch(InvalidInputError):
    """The data's schema does not fit the table.
    Example: appending a string ``id`` to a table whose ``id`` is a long.
    """

    error_class = "SCHEMA_MISMATCH"


class NullPrimaryKey(DataValidationError):
    """The data has rows with a null primary key. Example: ``df.write.versioned("shop.t", primary_key="id")`` with
    ``df = spark.createDataFrame([(None, "a")], "id long, name string")``."""

    error_class = "NULL_PRIMARY_KEY"


class DuplicateKey(DataValidationError):
    """The data has two rows with the same primary key. Example: ``df.write.versioned("shop.t", primary_key="id")``
    with ``df = spark.createDataFrame([(1, "a"), (1, "b")], "id long, name string")``."""

    error_class = "DUPLICATE_KEY"


class KeyExists(DataValidationError):
    """An appended key already exists (use ``upsert=True`` to update it).
    Example: ``df.write.versioned("shop.products")`` with an ``id`` already there.
    """

    error_class = "KEY_EXISTS"


class MissingKeyColumn(DataValidationError):
    """A primary key column is not in the data.
    Example: ``spark.range(3).write.versioned("shop.t", primary_key="key")``.
    """

    error_class = "MISSING_KEY_COLUMN"


class ReplaceWhereMismatch(DataValidationError):
    """An overwrite that replaces the rows matching a condition (``replace_where``, SQL ``INSERT INTO ... REPLACE
    WHERE``) was given rows that do not match it; nothing was committed. Filter the data by the condition, or widen it.

    Example::

        df.write.versioned("shop.orders", mode="overwrite", replace_where="day = '2026-01-31'")
        # raises ReplaceWhereMismatch when df has a row of another day
    """

    error_class = "REPLACE_WHERE_MISMATCH"


class MergeCardinalityViolation(DataValidationError):
    """A MERGE matched one target row with several source rows.
    Example: ``MERGE INTO vc.shop.products USING updates ON ...`` with two updates of one id.
    """

    error_class = "MERGE_CARDINALITY_VIOLATION"


class UnsupportedOperation(VersionedError, _UnsupportedOperationException):
    """The operation is not supported. Example: ``spark.sql("INSERT INTO vc.shop.`$refs` ...")`` (a metadata
    table is read-only)."""

    error_class = "UNSUPPORTED_OPERATION"


class MetastoreError(VersionedError, _SparkRuntimeException):
    """The metastore (SQLite/PostgreSQL) failed. Example: a PostgreSQL metastore that goes away during a commit."""

    error_class = "METASTORE_ERROR"


class StorageError(VersionedError, _SparkRuntimeException):
    """Object storage failed. Example: an object store that refuses a write."""

    error_class = "STORAGE_ERROR"


class ObjectCorrupt(StorageError):
    """An object's bytes do not match the checksum recorded when it was written; nothing it holds was
    returned. Run :meth:`~versioned.Repository.verify` to list damaged objects and the versions that need them.

    Example::

        try:
            spark.read.versioned("shop.products").count()
        except ObjectCorrupt as e:
            print(e.message)
    """

    error_class = "OBJECT_CORRUPT"


class ObjectMissing(StorageError):
    """An object a version needs is not in the warehouse. Example: a file deleted by hand."""

    error_class = "OBJECT_MISSING"


class WarehouseMismatch(VersionedError, _SparkRuntimeException):
    """The metastore and the object store do not belong to the same warehouse (a deleted, empty or
    foreign metastore); nothing was changed. Example: ``metastore.db`` deleted by mistake."""

    error_class = "WAREHOUSE_MISMATCH"


class MergeConflict(RefConflict):
    """A merge, cherry-pick or revert met changes it cannot combine (or ``fast_forward="only"`` could not
    fast-forward); nothing was committed. Example: ``repo.merge("dev").check()`` with the same cell
    changed on both sides."""

    error_class = "MERGE_CONFLICT"


class NoCommonAncestor(InvalidOption):
    """Two revisions share no history and the merge was not told to allow it
    (``allow_unrelated=True``); nothing was committed. Example: merging an imported branch."""

    error_class = "NO_COMMON_ANCESTOR"


class TransactionClosed(InvalidInputError):
    """An operation on a transaction that has ended (committed, aborted, or its commit failed); begin a
    new one. Example: ``tx.write(df, "orders")`` after ``tx.commit()``."""

    error_class = "TRANSACTION_CLOSED"


class RemoteNotFound(NotFoundError):
    """The repository has no remote of that name. Example: ``repo.fetch("upstream")`` before
    ``repo.add_remote("upstream", ...)``."""

    error_class = "REMOTE_NOT_FOUND"


class RemoteExists(RefStateError):
    """A remote of that name is already configured; remove it first or pick another name.
    Example: ``repo.add_remote("origin", ...)`` twice.
    """

    error_class = "REMOTE_EXISTS"


class RemoteUnreachable(VersionedError, _SparkRuntimeException):
    """The remote's metastore or object store cannot be reached, or holds no warehouse; nothing was changed.
    Example: a ``metastore_url`` naming a SQLite file that does not exist."""

    error_class = "REMOTE_UNREACHABLE"


class RemoteHistoryRewritten(RefStateError):
    """The remote no longer has history this repository fetched from it (its repository was dropped and
    created again); nothing was fetched. Remove the remote and add it again, or clone it anew.

    Example: ``repo.fetch()`` after the remote repository was dropped and created again.
    """

    error_class = "REMOTE_HISTORY_REWRITTEN"


class NonFastForward(RefStateError):
    """A push was rejected: the remote branch has commits the pushed branch does not contain; nothing changed
    on the remote. Pull first, or push with ``force=True``.

    Example::

        try:
            repo.push()
        except NonFastForward:
            repo.pull().check()
            repo.push()
    """

    error_class = "NON_FAST_FORWARD"


class StreamCheckpointMismatch(RefStateError):
    """A streaming query's checkpoint does not match what the branch holds for that query: its next batch is not
    the one after the query's newest batch there (a checkpoint of another query, table or branch). Nothing was
    committed. Start the query with a new checkpoint location, or point it back at its own table and branch.

    Example::

        try:
            query.awaitTermination()
        except StreamingQueryException as e:
            ...  # the cause's condition is STREAM_CHECKPOINT_MISMATCH
    """

    error_class = "STREAM_CHECKPOINT_MISMATCH"


class ObjectStoreUnsupported(VersionedError, _UnsupportedOperationException):
    """A warehouse, remote or object URI names a scheme this Spark has no file system for, typically
    ``s3a://`` on pip's PySpark, which does not ship ``hadoop-aws`` nor the AWS SDK; nothing was changed.

    Example::

        try:
            versioned.clone(spark, "shop", warehouse="s3a://team/wh", metastore_url="jdbc:postgresql://db/meta")
        except ObjectStoreUnsupported:
            # restart with: configure_spark_with_versioned(builder, s3a=True)  (or bin/install-s3a-jars)
            raise
    """

    error_class = "OBJECT_STORE_UNSUPPORTED"


class CheckFailed(RefStateError):
    """Checks a protected branch requires failed (or could not run) on the image a merge would land; the message
    names each with its failing row count and sample keys. Nothing moved (docs/GOVERNANCE.md).

    Example::

        try:
            repo.merge("dev", into=repo.default_branch)
        except CheckFailed as e:
            print(e)   # "... 'positive_price' found 2 failing row(s) (e.g. 3, 4) ..."
    """

    error_class = "CHECK_FAILED"


class CheckInvalid(InvalidInputError):
    """A check definition that does not parse or names a missing table; it was not added.

    Example::

        repo.add_check("bad", "SELEC 1")   # raises CheckInvalid
    """

    error_class = "CHECK_INVALID"


class CheckNotFound(NotFoundError):
    """The repository has no check of that name.

    Example::

        repo.protect("main", checks=["no_such_check"])   # raises CheckNotFound
    """

    error_class = "CHECK_NOT_FOUND"


class VersionExpired(NotFoundError):
    """The version asked for was expired by a retention policy (the message names it): its commit is still in the
    log, its tables are gone. Read a newer version, or keep more history with the policy.

    Example::

        repo.set_retention("feature/*", keep_commits=1)
        repo.gc(older_than_seconds=0, force=True)
        repo.table("orders", ref="feature/x~1")   # raises VersionExpired
    """

    error_class = "VERSION_EXPIRED"


class TableFormatUnsupported(VersionedError, _UnsupportedOperationException):
    """A table version is stored in a format version this build does not read (the message names it): refused,
    never read by rules it does not know. Upgrade the versioned connector or package.

    Example::

        try:
            repo.table("orders").to_arrow()
        except TableFormatUnsupported:
            raise  # upgrade, then read again
    """

    error_class = "TABLE_FORMAT_UNSUPPORTED"


def _subclasses(cls: Type[VersionedError]) -> Dict[str, Type[VersionedError]]:
    out: Dict[str, Type[VersionedError]] = {}
    for sub in cls.__subclasses__():
        if sub.__dict__.get("error_class"):
            out[sub.__dict__["error_class"]] = sub
        out.update(_subclasses(sub))
    return out


_BY_CLASS: Dict[str, Type[VersionedError]] = _subclasses(VersionedError)


def error_for_class(error_class: str, message: str) -> VersionedError:
    """Builds the Python exception for an engine error class (unknown classes give a plain VersionedError).

    Example::

        >>> type(error_for_class("REF_NOT_FOUND", "[REF_NOT_FOUND] no such ref")).__name__
        'RefNotFound'
    """
    cls = _BY_CLASS.get(error_class)
    if cls is None:
        return VersionedError(message, error_class)
    return cls(message)


def known_error_classes() -> FrozenSet[str]:
    """The engine error classes that map to a dedicated Python exception.

    Example::

        >>> "AMBIGUOUS_REF" in known_error_classes()
        True
    """
    return frozenset(_BY_CLASS)
