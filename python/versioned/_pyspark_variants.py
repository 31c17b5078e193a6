"""How a versioned error is also the PySpark exception a handler expects: :func:`pyspark_kind` names the PySpark class
of an error class's family, :func:`with_pyspark_variant` makes an error an instance of a session's own variant of
it (classic or Spark Connect). Both are re-exported by :mod:`versioned.errors`.

Example::

    from versioned.errors import pyspark_kind, RefNotFound
    pyspark_kind(RefNotFound)   # 'AnalysisException'
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Type, TypeVar, cast

from pyspark.errors import AnalysisException as _AnalysisException
from pyspark.errors import SparkRuntimeException as _SparkRuntimeException
from pyspark.errors import UnsupportedOperationException as _UnsupportedOperationException

from versioned._error_base import _SQL_STATES, VersionedError

_KINDS: Tuple[type, ...] = (_AnalysisException, _SparkRuntimeException, _UnsupportedOperationException)


def pyspark_kind(cls: Type[VersionedError]) -> Optional[str]:
    """The name of the PySpark exception a versioned error class is (``AnalysisException``,
    ``SparkRuntimeException``, ``UnsupportedOperationException``), or None for one that is only a
    ``PySparkException``.

    Example::

        >>> pyspark_kind(RefNotFound)
        'AnalysisException'
    """
    return next((k.__name__ for k in _KINDS if issubclass(cls, k)), None)


_VARIANTS: Dict[Tuple[type, type], type] = {}
_E = TypeVar("_E", bound=VersionedError)


def with_pyspark_variant(error: _E, variant: type, original: Optional[BaseException] = None, **state: Any) -> _E:
    """``error`` as an instance of a class that is both its own class and ``variant`` (a session's own PySpark
    exception class, e.g. ``pyspark.errors.exceptions.connect.AnalysisException``), so handlers written for
    either catch it. The PySpark state of ``original`` (the exception PySpark made of the same failure, if any)
    and ``state`` are kept, so the variant's own methods (stack trace, query context) work; the versioned
    methods (condition, SQLSTATE, message) win.

    Example::

        from pyspark.errors.exceptions import connect
        e = with_pyspark_variant(error_for_class("REF_NOT_FOUND", "no such ref"), connect.AnalysisException)
        assert isinstance(e, RefNotFound) and isinstance(e, connect.AnalysisException)
    """
    base = type(error)
    if isinstance(error, variant):
        return error
    made = _VARIANTS.get((base, variant))
    if made is None:
        made = type(base.__name__, (base, variant), {"__module__": base.__module__, "__qualname__": base.__qualname__})
        _VARIANTS[(base, variant)] = made
    # A class made at run time as a subclass of ``base`` (and of ``variant``): its instances are ``base``'s.
    cls = cast(Type[_E], made)
    out = cls.__new__(cls)
    own = dict(error.__dict__)
    if original is not None:
        out.__dict__.update(original.__dict__)
        if getattr(original, "_contexts", None):
            own.pop("_contexts", None)  # the query context Spark gave the failure
        sql_state = getattr(original, "_sql_state", None)
        if base.error_class is None and error.error_class not in _SQL_STATES and sql_state:
            own["_versioned_sql_state"] = sql_state
    out.__dict__.update(state)
    out.__dict__.update(own)
    out.args = error.args
    out.__traceback__ = error.__traceback__
    return out
