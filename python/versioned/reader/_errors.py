"""The reader's errors: the same :mod:`versioned.errors` classes as the Spark path, created on demand.

:mod:`versioned.errors` builds its classes on PySpark's exception hierarchy, so importing it imports PySpark.
The reader imports it only when it raises, which keeps every successful read free of PySpark (and of a JVM)
while an error is still, say, a :class:`versioned.errors.RefNotFound` and a PySpark ``AnalysisException``.

Example::

    from versioned.reader._errors import fail
    raise fail("REF_NOT_FOUND", "No branch, tag, lock or image matches 'x' in repository 'shop'.")
"""

from __future__ import annotations

from typing import Optional


def fail(error_class: str, message: str, cause: Optional[BaseException] = None) -> Exception:
    """The :mod:`versioned.errors` exception of ``error_class`` with ``message`` (to ``raise``).

    Example::

        raise fail("OBJECT_MISSING", "Object ab12... is missing: /wh/objects/ab/ab12....parquet does not exist.")
    """
    from versioned.errors import error_for_class

    err = error_for_class(error_class, message)
    if cause is not None:
        err.__cause__ = cause
    return err


def object_corrupt(object_id: str, detail: str) -> Exception:
    """``OBJECT_CORRUPT`` for one object, worded as the engine words it.

    Example::

        raise object_corrupt("ab12...", "the footer of /wh/objects/ab/ab12....parquet does not match its checksum")
    """
    return fail("OBJECT_CORRUPT", f"Object {object_id} is corrupt: {detail}. Every table version that uses it is "
                "affected (identical content is stored once). Verify the repository (procedure verify, or the API's "
                "verify) to list the damaged objects and the versions that need them, then restore the file from a "
                "backup or a remote copy.")


def object_missing(object_id: str, detail: str) -> Exception:
    """``OBJECT_MISSING`` for one object.

    Example::

        raise object_missing("ab12...", "/wh/objects/ab/ab12....parquet does not exist")
    """
    return fail("OBJECT_MISSING", f"Object {object_id} is missing: {detail}. Verify the repository (procedure verify, "
                "or the API's verify) to list the missing objects and the versions that need them, then restore them "
                "from a backup or a remote copy.")
