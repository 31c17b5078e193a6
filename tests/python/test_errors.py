"""The exception hierarchy mirrors the engine's error classes; the JVM translation walks cause chains."""

from __future__ import annotations

import os
import re
from typing import Optional

import pytest

import versioned
from versioned import errors
from versioned._jvm_errors import _versioned_cause

ERRORS_SCALA = os.path.join(os.path.dirname(__file__), "..", "..", "connector-scala", "core", "src", "main",
                            "scala", "versioned", "core", "Errors.scala")


def scala_error_classes() -> set:
    with open(ERRORS_SCALA) as f:
        return set(re.findall(r'^\s*val \w+ = "([A-Z_]+)"', f.read(), re.M))


def test_every_engine_error_class_has_a_python_exception() -> None:
    assert scala_error_classes() == set(errors.known_error_classes())


@pytest.mark.parametrize("name, error_class, family", [
    ("RepositoryNotFound", "REPOSITORY_NOT_FOUND", errors.NotFoundError),
    ("TableNotFound", "TABLE_NOT_FOUND", errors.NotFoundError),
    ("RefNotFound", "REF_NOT_FOUND", errors.NotFoundError),
    ("ImageNotFound", "IMAGE_NOT_FOUND", errors.NotFoundError),
    ("VersionExpired", "VERSION_EXPIRED", errors.NotFoundError),
    ("AmbiguousRef", "AMBIGUOUS_REF", errors.InvalidInputError),
    ("InvalidName", "INVALID_NAME", errors.InvalidInputError),
    ("InvalidRevision", "INVALID_REVISION", errors.InvalidInputError),
    ("InvalidOption", "INVALID_OPTION", errors.InvalidInputError),
    ("SchemaMismatch", "SCHEMA_MISMATCH", errors.InvalidInputError),
    ("NullPrimaryKey", "NULL_PRIMARY_KEY", errors.DataValidationError),
    ("DuplicateKey", "DUPLICATE_KEY", errors.DataValidationError),
    ("KeyExists", "KEY_EXISTS", errors.DataValidationError),
    ("MissingKeyColumn", "MISSING_KEY_COLUMN", errors.DataValidationError),
    ("MergeCardinalityViolation", "MERGE_CARDINALITY_VIOLATION", errors.DataValidationError),
    ("ReplaceWhereMismatch", "REPLACE_WHERE_MISMATCH", errors.DataValidationError),
    ("ImmutableRef", "IMMUTABLE_REF", errors.RefStateError),
    ("RefConflict", "REF_CONFLICT", errors.RefStateError),
    ("RefExists", "REF_EXISTS", errors.RefStateError),
    ("ProtectedRef", "PROTECTED_REF", errors.RefStateError),
    ("StreamCheckpointMismatch", "STREAM_CHECKPOINT_MISMATCH", errors.RefStateError),
    ("RepositoryExists", "REPOSITORY_EXISTS", errors.VersionedError),
    ("TableExists", "TABLE_EXISTS", errors.VersionedError),
    ("UnsupportedOperation", "UNSUPPORTED_OPERATION", errors.VersionedError),
    ("MetastoreError", "METASTORE_ERROR", errors.VersionedError),
    ("StorageError", "STORAGE_ERROR", errors.VersionedError),
    ("TableFormatUnsupported", "TABLE_FORMAT_UNSUPPORTED", errors.VersionedError),
])
def test_hierarchy(name: str, error_class: str, family: type) -> None:
    cls = getattr(versioned, name)
    assert cls is getattr(errors, name)
    assert cls.error_class == error_class
    assert issubclass(cls, family) and issubclass(cls, versioned.VersionedError)
    e = errors.error_for_class(error_class, f"[{error_class}] what to do")
    assert type(e) is cls
    assert e.message == "what to do" and str(e) == f"[{error_class}] what to do"


def test_python_families() -> None:
    assert issubclass(versioned.NotFoundError, LookupError)
    assert issubclass(versioned.InvalidInputError, ValueError)
    assert not issubclass(versioned.RefStateError, ValueError)


def test_unknown_error_class_gives_base_error() -> None:
    e = errors.error_for_class("SOMETHING_NEW", "[SOMETHING_NEW] hm")
    assert type(e) is versioned.VersionedError
    assert e.error_class == "SOMETHING_NEW" and e.message == "hm"


class FakeThrowable:
    """Duck-typed stand-in for a py4j Java throwable."""

    def __init__(self, error_class: Optional[str], message: str, cause: "Optional[FakeThrowable]" = None) -> None:
        self._ec, self._msg, self._cause = error_class, message, cause

    def getErrorClass(self) -> Optional[str]:
        return self._ec

    def getMessage(self) -> str:
        return self._msg

    def getCause(self) -> "Optional[FakeThrowable]":
        return self._cause


def test_cause_chain_is_searched() -> None:
    inner = FakeThrowable("REF_NOT_FOUND", "[REF_NOT_FOUND] no such ref")
    outer = FakeThrowable("TASK_WRITE_FAILED", "task failed", FakeThrowable(None, "wrapper", inner))
    e = _versioned_cause(None, outer)
    assert isinstance(e, versioned.RefNotFound) and e.message == "no such ref"


def test_chain_without_versioned_error() -> None:
    assert _versioned_cause(None, FakeThrowable("TASK_WRITE_FAILED", "x", FakeThrowable(None, "y"))) is None
    assert _versioned_cause(None, None) is None


def test_cyclic_chain_terminates() -> None:
    t = FakeThrowable(None, "loop")
    t._cause = t
    assert _versioned_cause(None, t) is None
