"""Checks of the arguments of the public API, made in Python before anything reaches the JVM or the server: a
wrong-typed argument is :class:`~versioned.errors.InvalidOption` (``INVALID_OPTION``, as the engine reports a bad
option), which is also a :class:`TypeError`, and nothing is committed."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Union

from pyspark.sql import DataFrame

from versioned.errors import InvalidOption, with_pyspark_variant

__all__ = ["bad_argument", "frame", "text", "optional_text", "flag", "optional_flag", "optional_int", "optional_count", "key_columns"]


def bad_argument(message: str) -> InvalidOption:
    """An ``INVALID_OPTION`` error for a wrong-typed argument, which is a :class:`TypeError` too.

    Example::

        >>> isinstance(bad_argument("message must be a string, not int"), TypeError)
        True
    """
    return with_pyspark_variant(InvalidOption(message), TypeError)


def _kind(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def frame(name: str, value: Any) -> DataFrame:
    """``value`` if it is a DataFrame (classic or Spark Connect), else an error naming the argument.

    Example::

        frame("df", spark.range(1))
    """
    if not isinstance(value, DataFrame):
        raise bad_argument(f"{name} must be a DataFrame, not {_kind(value)}.")
    return value


def text(name: str, value: Any) -> str:
    """``value`` if it is a string, else an error naming the argument.

    Example::

        >>> text("table", "orders")
        'orders'
    """
    if not isinstance(value, str):
        raise bad_argument(f"{name} must be a string, not {_kind(value)}.")
    return value


def optional_text(name: str, value: Any) -> Optional[str]:
    """``value`` if it is a string or None, else an error naming the argument.

    Example::

        >>> optional_text("message", None) is None
        True
    """
    return None if value is None else text(name, value)


def flag(name: str, value: Any) -> bool:
    """``value`` if it is a bool, else an error naming the argument (``"yes"`` or ``1`` are not flags).

    Example::

        >>> flag("dry_run", True)
        True
    """
    if not isinstance(value, bool):
        raise bad_argument(f"{name} must be True or False, not {_kind(value)}.")
    return value


def optional_flag(name: str, value: Any) -> Optional[bool]:
    """``value`` if it is a bool or None, else an error naming the argument.

    Example::

        >>> optional_flag("before_images", None) is None
        True
    """
    return None if value is None else flag(name, value)


def optional_int(name: str, value: Any) -> Optional[int]:
    """``value`` if it is an int (not a bool) or None, else an error naming the argument.

    Example::

        >>> optional_int("limit", 5)
        5
    """
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise bad_argument(f"{name} must be an integer, not {_kind(value)}.")


def _at_least(name: str, value: Any, low: int, why: str) -> Optional[int]:
    """``value`` if it is an int of at least ``low`` (not a bool) or None, else an error naming the argument."""
    number = optional_int(name, value)
    if number is not None and number < low:
        raise bad_argument(f"{name} {why}, not {number}.")
    return number


def optional_count(name: str, value: Any) -> Optional[int]:
    """``value`` if it is an int of at least 0 (not a bool) or None, else an error naming the argument.

    Example::

        >>> optional_count("limit", 10)
        10
    """
    return _at_least(name, value, 0, "must be 0 or more")


def optional_ordinal(name: str, value: Any) -> Optional[int]:
    """``value`` if it is an int of at least 1 (not a bool) or None, else an error naming the argument: a 1-based
    position, such as a merge commit's parent.

    Example::

        >>> optional_ordinal("parent", 2)
        2
    """
    return _at_least(name, value, 1, "is 1-based: 1 or more (leave it out for a commit with one parent)")


def key_columns(name: str, value: Any) -> Optional[Union[str, Sequence[str]]]:
    """A primary key given as a column name, comma-separated names or a list of names (None: the table's
    key), else an error naming the argument.

    Example::

        >>> key_columns("primary_key", ["id", "day"])
        ['id', 'day']
    """
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise bad_argument(f"{name} must be a column name or a list of column names, not {_kind(value)}.")


def texts(name: str, value: Any) -> List[str]:
    """``value`` as a list of strings: a sequence of strings (not one string), else an error naming the argument.

    Example::

        >>> texts("checks", ["a", "b"])
        ['a', 'b']
    """
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise bad_argument(f"{name} must be a list of strings, not {_kind(value)}.")
    return list(value)
