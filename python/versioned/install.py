"""Optional convenience methods on PySpark's reader and writer: ``df.write.versioned(...)`` and
``spark.read.versioned(...)``. Nothing is patched until :func:`install` is called."""

from __future__ import annotations

import datetime as _dt
from typing import List, Optional, Sequence, Tuple, Union

from pyspark.sql import DataFrame, DataFrameReader, DataFrameWriter

from versioned import _args
from versioned._connect import is_connect
from versioned._jvm_errors import translated_errors
from versioned._ops import declare_client
from versioned.errors import InvalidOption

__all__ = ["install", "uninstall", "is_installed"]

_MODES = ("append", "overwrite")
AsOf = Union[str, int, _dt.datetime, _dt.date]


def _as_of_string(as_of: AsOf) -> str:
    if isinstance(as_of, bool):
        raise InvalidOption(f"as_of={as_of!r} is not a timestamp.")
    if isinstance(as_of, int):
        return str(as_of)
    if isinstance(as_of, _dt.datetime):
        if as_of.tzinfo is None:
            as_of = as_of.replace(tzinfo=_dt.timezone.utc)
        return as_of.astimezone(_dt.timezone.utc).isoformat().replace("+00:00", "Z")
    if isinstance(as_of, _dt.date):
        return as_of.isoformat()
    return str(as_of)


def _writer_versioned(
    self: DataFrameWriter,
    table: str,
    *,
    branch: Optional[str] = None,
    message: Optional[str] = None,
    author: Optional[str] = None,
    mode: str = "append",
    primary_key: Optional[Union[str, Sequence[str]]] = None,
    upsert: bool = False,
    replace_where: Optional[str] = None,
) -> None:
    """Writes the DataFrame to ``table`` ("repository.table") as one commit on ``branch``.

    Args:
        table: ``"<repository>.<table>"``; the repository and table are created by the first write.
        branch: the branch to commit to (default: the repository's default branch; a tag raises
            :class:`~versioned.errors.ImmutableRef`).
        message: commit message (default: "append to <table>" / "overwrite <table>").
        author: commit author (default: ``spark.versioned.author``, else ``spark.versioned.user``, else the OS user).
        mode: ``"append"`` (new rows; existing keys raise ``KeyExists`` unless ``upsert``) or
            ``"overwrite"`` (the data becomes the table's content).
        primary_key: key column name(s) when the table is created (keep the table's key otherwise).
        upsert: with ``mode="append"``, update rows whose key already exists.
        replace_where: with ``mode="overwrite"``, a SQL condition: only the rows matching it are replaced by the
            data (deleted, then the data appended, in one commit); every row of the data must match it, else
            :class:`~versioned.errors.ReplaceWhereMismatch` and nothing is committed.

    Example::

        versioned.install()
        df.write.versioned("sales.orders", primary_key="id", message="load orders")
        day.write.versioned("sales.orders", mode="overwrite", replace_where="day = '2026-01-31'")
    """
    _args.text("table", table)
    for name, value in (("branch", branch), ("message", message), ("author", author)):
        _args.optional_text(name, value)
    keys_given = _args.key_columns("primary_key", primary_key)
    _args.flag("upsert", upsert)
    _args.optional_text("replace_where", replace_where)
    if mode not in _MODES:
        raise InvalidOption(f"mode={mode!r} is not supported; use 'append' or 'overwrite'.")
    spark = getattr(self, "_spark", None)
    if spark is not None:
        declare_client(spark, "connect" if is_connect(spark) else "python")
    w = self.format("versioned").option("upsert", "true" if upsert else "false")
    if branch is not None:
        w = w.option("branch", branch)
    if message is not None:
        w = w.option("message", message)
    if author is not None:
        w = w.option("author", author)
    if keys_given is not None:
        keys = [keys_given] if isinstance(keys_given, str) else list(keys_given)
        w = w.option("primaryKey", ",".join(keys))
    if replace_where is not None:
        w = w.option("replaceWhere", replace_where)
    with translated_errors():
        w.mode(mode).save(table)


def _reader_versioned(
    self: DataFrameReader,
    table: str,
    *,
    ref: Optional[str] = None,
    image: Optional[str] = None,
    as_of: Optional[AsOf] = None,
) -> DataFrame:
    """Reads ``table`` ("repository.table") at a version (default: head of the default branch).

    Args:
        table: ``"<repository>.<table>"``.
        ref: branch, tag, lock (``ns:name``) or hash prefix, optionally with ``~N``/``^N``; with
            ``as_of`` it names the branch to search.
        image: a full image hash or a prefix of at least 4 hex digits.
        as_of: the newest image at or before this time: ISO-8601 string, epoch milliseconds,
            or a ``datetime`` (naive values are UTC).

    Example::

        versioned.install()
        old = spark.read.versioned("sales.orders", ref="main~1")
        then = spark.read.versioned("sales.orders", as_of="2026-01-31T12:00:00Z")
    """
    _args.text("table", table)
    _args.optional_text("ref", ref)
    _args.optional_text("image", image)
    r = self.format("versioned")
    if ref is not None:
        r = r.option("ref", ref)
    if image is not None:
        r = r.option("image", image)
    if as_of is not None:
        r = r.option("asOf", _as_of_string(as_of))
    with translated_errors():
        df = r.load(table)
        if is_connect(df.sparkSession):
            df.schema  # a Connect DataFrame is analyzed lazily: resolve the version now, as a classic read does
        return df


def _classes() -> List[Tuple[type, type]]:
    """(writer, reader) classes to extend: the classic ones, and Spark Connect's when its client is installed."""
    pairs: List[Tuple[type, type]] = [(DataFrameWriter, DataFrameReader)]
    try:
        from pyspark.sql.connect.readwriter import DataFrameReader as ConnectReader
        from pyspark.sql.connect.readwriter import DataFrameWriter as ConnectWriter
    except ImportError:  # the Spark Connect client's dependencies are not installed
        return pairs
    pairs.append((ConnectWriter, ConnectReader))
    return pairs


def install() -> None:
    """Adds ``DataFrameWriter.versioned`` and ``DataFrameReader.versioned``, on classic and Spark Connect
    sessions, and installs the error hook: plain DataFrame and SQL calls on either kind of session raise
    :mod:`versioned.errors` types for versioned errors (each also the session's PySpark exception of its kind,
    e.g. ``AnalysisException``). Idempotent.

    Example::

        import versioned
        versioned.install()
        versioned.install()  # no-op
        spark.range(3).write.versioned("demo.numbers", primary_key="id")
        spark.read.versioned("demo.numbers").count()
    """
    from versioned._connect import install_error_translation
    from versioned._jvm_errors import install_error_translation as install_classic_translation

    for writer, reader in _classes():
        setattr(writer, "versioned", _writer_versioned)
        setattr(reader, "versioned", _reader_versioned)
    install_classic_translation()
    install_error_translation()


def uninstall() -> None:
    """Removes the methods added by :func:`install` (no-op when not installed).

    Example::

        versioned.uninstall()
        assert not hasattr(spark.read, "versioned")
    """
    for writer, reader in _classes():
        if getattr(writer, "versioned", None) is _writer_versioned:
            delattr(writer, "versioned")
        if getattr(reader, "versioned", None) is _reader_versioned:
            delattr(reader, "versioned")


def is_installed() -> bool:
    """Whether :func:`install` has added the reader and writer methods.

    Example::

        versioned.install()
        assert versioned.is_installed()
    """
    return all(getattr(w, "versioned", None) is _writer_versioned and getattr(r, "versioned", None) is _reader_versioned
               for w, r in _classes())
