"""Java exceptions as :mod:`versioned.errors` exceptions on a classic session: the first versioned error of a
Java cause chain (its ``getErrorClass()``) becomes the matching Python type, which is also the classic session's own
PySpark exception of its kind. Used by :mod:`versioned._jvm` around every call, and installed into PySpark's own
conversion for plain DataFrame and SQL calls.

Example::

    with translated_errors():
        spark.read.format("versioned").option("ref", "nope").load("shop.products")   # raises RefNotFound
"""

from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterator, Optional

from py4j.java_gateway import JavaObject, is_instance_of
from py4j.protocol import Py4JError, Py4JJavaError
from pyspark.errors.exceptions.captured import CapturedException, UnknownException, convert_exception

from versioned.errors import VersionedError, error_for_class, known_error_classes, pyspark_kind, with_pyspark_variant

_EXCEPTION_CLASS = "versioned.core.VersionedException"
_MAX_CAUSES = 32


def _versioned_cause(spark_gateway: Any, throwable: Any) -> Optional[VersionedError]:
    """The first versioned error in a Java cause chain, as a Python exception, or None."""
    t = throwable
    for _ in range(_MAX_CAUSES):
        if t is None:
            return None
        error_class = None
        try:
            error_class = t.getErrorClass()
        except Py4JError:
            error_class = None
        if error_class is not None:
            known = error_class in known_error_classes()
            if known or (spark_gateway is not None and is_instance_of(spark_gateway, t, _EXCEPTION_CLASS)):
                return error_for_class(str(error_class), str(t.getMessage()))
        try:
            t = t.getCause()
        except Py4JError:
            return None
    return None


def classic_variant(error: VersionedError, throwable: Any, original: Optional[BaseException] = None) -> VersionedError:
    """``error`` as an instance of the classic session's own PySpark exception of its kind too (e.g.
    ``pyspark.errors.exceptions.captured.AnalysisException``), keeping the Java ``throwable`` as its origin and
    the state of ``original``, the exception PySpark made of it (if any).

    Example::

        e = classic_variant(error_for_class("REF_NOT_FOUND", "no such ref"), java_throwable)
        assert isinstance(e, pyspark.errors.exceptions.captured.AnalysisException)
    """
    from pyspark.errors.exceptions import captured

    kind = pyspark_kind(type(error))
    variant = getattr(captured, kind) if kind else captured.CapturedException
    state: Dict[str, Any] = {}
    if original is None or getattr(original, "_origin", None) is None:
        state["_origin"] = throwable
    if original is None:
        state.update(_desc=error.message, _stackTrace="", _cause=None)
    return with_pyspark_variant(error, variant, original, **state)


def _java_throwable(exc: BaseException) -> Any:
    if isinstance(exc, Py4JJavaError):
        return exc.java_exception
    origin = getattr(exc, "_origin", None)
    return origin if isinstance(origin, JavaObject) else None


@contextlib.contextmanager
def translated_errors() -> Iterator[None]:
    """Runs a block, raising :mod:`versioned.errors` exceptions for versioned errors from the JVM.

    Other JVM errors are raised as PySpark raises them (e.g. ``AnalysisException``).

    Example::

        with translated_errors():
            spark.read.format("versioned").option("ref", "nope").load("shop.products")   # raises RefNotFound
    """
    try:
        yield
    except (Py4JJavaError, CapturedException) as exc:
        throwable = _java_throwable(exc)
        if throwable is None:
            raise
        from pyspark import SparkContext

        converted = _versioned_cause(SparkContext._gateway, throwable)
        if converted is not None:
            original = exc if isinstance(exc, CapturedException) else None
            raise classic_variant(converted, throwable, original) from None
        if isinstance(exc, Py4JJavaError):
            spark_exc = convert_exception(throwable)
            if not isinstance(spark_exc, UnknownException):
                raise spark_exc from None
        raise


_translation_installed = False


def install_error_translation() -> None:
    """Makes PySpark raise :mod:`versioned.errors` exceptions for versioned errors from plain DataFrame
    and ``spark.sql`` calls on classic sessions too (not only from this package's wrappers). Idempotent;
    :func:`versioned.install` and :func:`versioned.configure_spark_with_versioned` call it.

    PySpark turns JVM exceptions into Python ones in ``pyspark.errors.exceptions.captured``; errors it
    does not know come out as ``Py4JJavaError`` with the whole Java trace. This wraps that conversion so
    that an exception whose cause chain holds a versioned error becomes the matching versioned type, which
    is also the PySpark exception of its kind (``captured.AnalysisException``, ...).

    Example::

        install_error_translation()
        spark.read.format("versioned").option("ref", "nope").load("shop.products")   # raises RefNotFound
    """
    global _translation_installed
    if _translation_installed:
        return
    from pyspark.errors.exceptions import captured

    original = captured.convert_exception

    def convert(e: Py4JJavaError) -> CapturedException:
        from pyspark import SparkContext

        converted = original(e)
        try:
            mapped = _versioned_cause(SparkContext._gateway, e)
            variant = classic_variant(mapped, e, converted) if mapped is not None else None
        except Exception:  # never let the translation itself fail a call
            return converted
        # The versioned type is also the classic session's exception of its kind (a CapturedException).
        return variant if isinstance(variant, CapturedException) else converted

    captured.convert_exception = convert
    _translation_installed = True
