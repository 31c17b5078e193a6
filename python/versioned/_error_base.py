"""The base of :mod:`versioned.errors`: :class:`VersionedError` (a PySpark exception whose condition is the engine's
stable error class), the four families, and the SQLSTATE of each error class. Import them from
:mod:`versioned.errors`, which declares every concrete class.

Example::

    from versioned.errors import NotFoundError, VersionedError
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from pyspark.errors import AnalysisException as _AnalysisException
from pyspark.errors import PySparkException

#: SQLSTATE of each engine error class (``ErrorClass.sqlState`` in the engine): 42xxx user errors, 0A000
#: unsupported, 58xxx system; an unknown class is XX000.
_SQL_STATES: Dict[str, str] = {
    "REPOSITORY_NOT_FOUND": "42P01", "TABLE_NOT_FOUND": "42P01", "REF_NOT_FOUND": "42704",
    "IMAGE_NOT_FOUND": "42704", "REPOSITORY_EXISTS": "42P07", "TABLE_EXISTS": "42P07", "REF_EXISTS": "42710",
    "AMBIGUOUS_REF": "42702", "INVALID_NAME": "42602", "INVALID_REVISION": "22023", "INVALID_OPTION": "22023",
    "IMMUTABLE_REF": "55000", "PROTECTED_REF": "55000", "REF_CONFLICT": "40001", "SCHEMA_MISMATCH": "42804",
    "NULL_PRIMARY_KEY": "23502", "DUPLICATE_KEY": "23505", "KEY_EXISTS": "23505", "MISSING_KEY_COLUMN": "42703",
    "MERGE_CARDINALITY_VIOLATION": "21000", "REPLACE_WHERE_MISMATCH": "23514", "UNSUPPORTED_OPERATION": "0A000",
    "METASTORE_ERROR": "58030",
    "STORAGE_ERROR": "58030", "OBJECT_CORRUPT": "XX001", "OBJECT_MISSING": "58030", "WAREHOUSE_MISMATCH": "55000",
    "MERGE_CONFLICT": "40001", "NO_COMMON_ANCESTOR": "42000", "TRANSACTION_CLOSED": "25000",
    "REMOTE_NOT_FOUND": "42704", "REMOTE_EXISTS": "42710", "REMOTE_UNREACHABLE": "08001",
    "REMOTE_HISTORY_REWRITTEN": "55000", "NON_FAST_FORWARD": "55000", "OBJECT_STORE_UNSUPPORTED": "0A000",
    "STREAM_CHECKPOINT_MISMATCH": "55000",
    "CHECK_FAILED": "23000", "CHECK_INVALID": "42000", "CHECK_NOT_FOUND": "42704",
    "VERSION_EXPIRED": "42704", "TABLE_FORMAT_UNSUPPORTED": "0A000",
}
_UNKNOWN_SQL_STATE = "XX000"


def sql_state_of(error_class: Optional[str]) -> str:
    """The SQLSTATE of an engine error class (``XX000`` for a class the engine does not list).

    Example::

        >>> sql_state_of("REF_NOT_FOUND")
        '42704'
    """
    return _SQL_STATES.get(error_class or "", _UNKNOWN_SQL_STATE)


class VersionedError(PySparkException):
    """Base of every versioned error: a :class:`pyspark.errors.PySparkException` whose condition is the engine's
    stable error class.

    Attributes:
        error_class: the engine's stable error class, e.g. ``"REF_NOT_FOUND"`` (also ``getCondition()``).
        message: the engine's message, which says what to do next.

    Example::

        try:
            repo.create_branch("main")
        except VersionedError as e:
            print(e.error_class, e.message, e.getSqlState())
    """

    __module__ = "versioned.errors"

    error_class: Optional[str] = None

    def __init__(self, message: str, error_class: Optional[str] = None) -> None:
        """An error with the engine's ``message`` (a leading ``[ERROR_CLASS] `` is dropped) and ``error_class``
        (default: the class's own; unknown engine classes give a plain :class:`VersionedError` with theirs).

        Example::

            e = RefNotFound("[REF_NOT_FOUND] Ref 'nope' not found.")
            assert e.message == "Ref 'nope' not found." and e.error_class == "REF_NOT_FOUND"
        """
        prefix = f"[{error_class or self.error_class}] "
        self.message: str = message[len(prefix):] if message.startswith(prefix) else message
        if error_class is not None:
            self.error_class = error_class
        # PySparkException's state, set directly: its constructor would look the class up in Spark's own list.
        self._message = self.message
        self._errorClass = self.error_class
        self._messageParameters = {"message": self.message}
        self._contexts: List[Any] = []
        self._versioned_sql_state = sql_state_of(self.error_class) if self.error_class else None
        Exception.__init__(self, f"[{self.error_class}] {self.message}" if self.error_class else self.message)

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else self.message

    def getCondition(self) -> Optional[str]:  # noqa: N802 - PySpark's name
        """The engine's error class, as Spark's error condition.

        Example::

            >>> error_for_class("REF_NOT_FOUND", "no such ref").getCondition()
            'REF_NOT_FOUND'
        """
        return self.error_class

    def getErrorClass(self) -> Optional[str]:  # noqa: N802 - PySpark's name
        """The engine's error class (PySpark's older name of :meth:`getCondition`).

        Example::

            >>> error_for_class("REF_NOT_FOUND", "no such ref").getErrorClass()
            'REF_NOT_FOUND'
        """
        return self.error_class

    def getSqlState(self) -> Optional[str]:  # noqa: N802 - PySpark's name
        """The SQLSTATE of the error class, as the engine reports it.

        Example::

            >>> error_for_class("REF_NOT_FOUND", "no such ref").getSqlState()
            '42704'
        """
        return self._versioned_sql_state

    def getMessageParameters(self) -> Optional[Dict[str, str]]:  # noqa: N802 - PySpark's name
        """``{"message": <the message>}``, as the engine's exception reports it.

        Example::

            >>> error_for_class("REF_NOT_FOUND", "no such ref").getMessageParameters()
            {'message': 'no such ref'}
        """
        return {"message": self.message}

    def getMessage(self) -> str:  # noqa: N802 - PySpark's name
        """``[ERROR_CLASS] message``.

        Example::

            >>> error_for_class("REF_NOT_FOUND", "no such ref").getMessage()
            '[REF_NOT_FOUND] no such ref'
        """
        return str(self)

    def getBreakingChangeInfo(self) -> Optional[Dict[str, Any]]:  # noqa: N802 - PySpark's name
        """None: no versioned error is a breaking change of Spark's.

        Example::

            assert error.getBreakingChangeInfo() is None
        """
        return None


class NotFoundError(VersionedError, _AnalysisException, LookupError):
    """A repository, table, ref or image does not exist (an ``AnalysisException``).
    Example: ``except NotFoundError: ...`` around ``repo.resolve(ref)`` catches a missing repository or ref.
    """

    __module__ = "versioned.errors"


class InvalidInputError(VersionedError, _AnalysisException, ValueError):
    """An argument, option, name, revision or the data itself is not acceptable (an ``AnalysisException``).
    Example: ``except InvalidInputError: ...`` catches ``repo.create_branch("a..b")`` and bad options alike.
    """

    __module__ = "versioned.errors"


class DataValidationError(InvalidInputError):
    """The data of a write breaks a table rule (keys); nothing was committed.
    Example: ``df.write.versioned("shop.t", primary_key="id")`` with a null ``id``.
    """

    __module__ = "versioned.errors"


class RefStateError(VersionedError, _AnalysisException):
    """A ref cannot be changed in the requested way (exists, immutable, protected, moved; an ``AnalysisException``).
    Example: ``except RefStateError: ...`` around ``repo.delete_branch(repo.default_branch)``.
    """

    __module__ = "versioned.errors"
