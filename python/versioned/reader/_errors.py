"""The reader's errors: the same :mod:`versioned.errors` classes as the Spark path, created on demand.

:mod:`versioned.errors` builds its classes on PySpark's exception hierarchy, so importing it imports PySpark.
The reader imports it only when it raises, which keeps every successful read free of PySpark (and of a JVM)
while an error is still, say, a :class:`versioned.errors.RefNotFound` and a PySpark ``AnalysisException``.

Example::

    from versioned.reader._errors import fail
    raise fail("REF_NOT_FOUND", "No branch, tag, lock or image matches 'x' in repository 'shop'.")
"""

from __future__ import annotations

import re
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


# words of damaged bytes in a read failure's message (paths and URIs taken out first: every object's name ends in
# ".parquet", and a store's own errors name the object they were reading); the connector's ObjectFiles.looksCorrupt
_CORRUPTION_WORDS = ("checksum", "crc", "corrupt", "magic", "footer", "parquet", "thrift", "deserializ",
                     "end of stream", "end of file")
_PATH_LIKE = re.compile(r"""[^\s()\[\]{},;'"]*[/\\][^\s()\[\]{},;'"]*""")


def without_paths(message: str) -> str:
    """``message`` with every token that holds a path separator (a path or a URI) taken out.

    Example::

        >>> without_paths("Connection refused reading /wh/objects/ab/ab12.parquet")
        'Connection refused reading '
    """
    return _PATH_LIKE.sub("", message)


def looks_corrupt(e: BaseException) -> bool:
    """Whether a failure reading an object means damaged bytes rather than a store that did not answer: any
    decoding error that is not an ``OSError``, an early end of the file, or an ``OSError`` whose message (without
    its paths) speaks of checksums, magic numbers, footers or Parquet structures.

    Example::

        >>> looks_corrupt(OSError("Parquet magic bytes not found in footer. Either the file is corrupted or this is not a parquet file."))
        True
        >>> looks_corrupt(OSError("AWS Error NETWORK_CONNECTION during GetObject operation on bkt/objects/ab/ab12.parquet"))
        False
    """
    if isinstance(e, EOFError) or not isinstance(e, OSError):
        return True
    message = without_paths(str(e)).lower()
    return any(w in message for w in _CORRUPTION_WORDS)


def _first_line(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return lines[0] if lines else type(e).__name__


def read_failure(object_id: str, path: str, e: BaseException) -> Exception:
    """The typed error of a failure reading object ``object_id`` at ``path``: ``OBJECT_CORRUPT`` when
    :func:`looks_corrupt`, else ``STORAGE_ERROR`` (the store did not answer; nothing says the object is damaged).

    Example::

        raise read_failure("ab12...", "/wh/objects/ab/ab12....parquet", OSError("Connection refused")) from e
    """
    if looks_corrupt(e):
        return object_corrupt(object_id, f"{path} cannot be decoded ({_first_line(e)})")
    return storage_error(f"object {object_id} ({path})", e)


def storage_error(what: str, e: BaseException) -> Exception:
    """``STORAGE_ERROR`` for a read of ``what`` that the object store did not answer (nothing says it is damaged).

    Example::

        raise storage_error("/wh/_versioned/warehouse-id", OSError("Connection refused")) from e
    """
    return fail("STORAGE_ERROR", f"Could not read {what}: {_first_line(e)}. The object store did not answer as "
                "expected; nothing says the data is damaged. Retry when the store is reachable.")
