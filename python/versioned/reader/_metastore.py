"""The metastore, read-only: SQLite through :mod:`sqlite3` (opened read-only, never created) or PostgreSQL through
psycopg (an optional dependency, ``pip install 'versioned-spark[reader-postgres]'``), from the same JDBC URL the
connector takes (``spark.versioned.metastore.url``). docs/FORMAT.md, "Metastore tables", describes the rows.

Example::

    meta = Metastore.open("jdbc:sqlite:/data/wh/metastore.db")
    meta.rows("SELECT name FROM vc_repositories ORDER BY name")
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from typing import Any, List, Optional, Sequence, Tuple

from versioned.reader._errors import fail

#: The newest metastore schema version this reader knows (the connector's ``Metastore.CurrentVersion``). Version 4
#: adds the reflog (``vc_reflog``, ``vc_reflog_heads``), version 5 the retention tables ``vc_retention`` and
#: ``vc_expired``; this reader reads none of them. Version 7 adds ``vc_objects.shared`` and
#: ``vc_tables.format_version`` (:data:`TABLE_FORMAT`), version 8 several locations per object
#: (``vc_object_locations.ordinal``: the order to try them in).
SCHEMA_VERSION = 8

#: The newest table format version this reader reads (``vc_tables.format_version``, NULL = 1): version 2 lists
#: shared objects in several fragments' chains, which it reads within each fragment's bounds (docs/FORMAT.md).
TABLE_FORMAT = 2


def check_table_format(table: str, version: Any) -> int:
    """A table version's format version (``vc_tables.format_version``; None = 1), refused with
    ``TABLE_FORMAT_UNSUPPORTED`` when this reader does not know it.

    Example::

        >>> check_table_format("shop.orders", None)
        1
    """
    v = 1 if version is None else int(str(version))
    if v < 1 or v > TABLE_FORMAT:
        raise fail("TABLE_FORMAT_UNSUPPORTED", f"Table '{table}' is stored in format version {v}; this reader reads "
                   f"format versions up to {TABLE_FORMAT}. Upgrade the versioned package to read it.")
    return v


def redact(url: str) -> str:
    """A JDBC URL without its password, for messages (as the connector's ``Metastore.redact``).

    Example::

        >>> redact("jdbc:postgresql://db/meta?user=u&password=secret")
        'jdbc:postgresql://db/meta?user=u&password=***'
    """
    import re

    return re.sub(r"(?i)(password=)[^&;]*", r"\1***", url)


def sqlite_file(url: str) -> Optional[str]:
    """The file of an embedded SQLite metastore URL (None for another database or an in-memory one).

    Example::

        >>> sqlite_file("jdbc:sqlite:/data/wh/metastore.db")
        '/data/wh/metastore.db'
    """
    if not url.startswith("jdbc:sqlite:"):
        return None
    path = url[len("jdbc:sqlite:"):].split("?", 1)[0]
    if not path or path == ":memory:" or path.startswith("file::memory"):
        return None
    return path[len("file:"):] if path.startswith("file:") else path


class Metastore:
    """A read-only connection to a metastore; ``rows`` runs one portable query (``?`` placeholders).

    Example::

        meta = Metastore.open("jdbc:postgresql://db:5432/meta?user=reader&password=...")
        meta.value("SELECT value FROM vc_meta WHERE key = ?", "schema_version")
    """

    def __init__(self, connection: Any, url: str, postgres: bool) -> None:
        """Wraps an open DB-API connection (use :meth:`open`).

        Example::

            Metastore(sqlite3.connect("file:/wh/metastore.db?mode=ro", uri=True), "jdbc:sqlite:/wh/metastore.db", False)
        """
        self._conn = connection
        self.url = url
        self.postgres = postgres

    @staticmethod
    def open(url: str) -> "Metastore":
        """Connects to the metastore at JDBC ``url``; a missing SQLite file is never created.

        Example::

            Metastore.open("jdbc:sqlite:/data/wh/metastore.db")
        """
        where = redact(url)
        if url.startswith("jdbc:sqlite:"):
            path = sqlite_file(url)
            if path is None or not os.path.isfile(path):
                raise fail("METASTORE_ERROR", f"Cannot open metastore '{where}': the file does not exist. Check "
                           "spark.versioned.metastore.url (or the warehouse, whose metastore.db is the default).")
            uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
            try:
                conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
                conn.execute("PRAGMA query_only = 1")
            except sqlite3.Error as e:
                raise fail("METASTORE_ERROR", f"Cannot open metastore '{where}': {e}.", e) from e
            return Metastore(conn, url, False)
        if url.startswith("jdbc:postgresql:"):
            try:
                import psycopg
            except ImportError as e:
                raise fail("UNSUPPORTED_OPERATION", "Reading a PostgreSQL metastore without Spark needs psycopg: "
                           "install the extra versioned-spark[reader-postgres] (psycopg[binary]).", e) from e
            conninfo = _postgres_conninfo(url)
            try:
                pg: Any = psycopg.connect(conninfo, autocommit=True, connect_timeout=10)
                pg.read_only = True
            except psycopg.Error as e:
                raise fail("METASTORE_ERROR", f"Cannot open metastore '{where}': {str(e).strip()}. Check that the "
                           "database is up and spark.versioned.metastore.url.", e) from e
            return Metastore(pg, url, True)
        raise fail("METASTORE_ERROR", f"Cannot open metastore '{where}': the metastore is jdbc:sqlite:<file> (embedded) "
                   "or jdbc:postgresql://host/db; check spark.versioned.metastore.url.")

    def rows(self, sql: str, *params: Any) -> List[Tuple[Any, ...]]:
        """The rows of one query; a database failure is ``METASTORE_ERROR``.

        Example::

            meta.rows("SELECT name, kind, image_hash, created_ms FROM vc_refs WHERE repo = ?", "shop")
        """
        try:
            if self.postgres:
                with self._conn.cursor() as cur:
                    cur.execute(sql.replace("?", "%s"), params)
                    return [tuple(r) for r in cur.fetchall()]
            return [tuple(r) for r in self._conn.execute(sql, params).fetchall()]
        except Exception as e:  # noqa: BLE001 - sqlite3.Error or psycopg.Error
            raise fail("METASTORE_ERROR", f"Metastore '{redact(self.url)}' failed to answer: {str(e).strip()}.", e) from e

    def value(self, sql: str, *params: Any) -> Any:
        """The first column of the first row, or None.

        Example::

            meta.value("SELECT default_branch FROM vc_repositories WHERE name = ?", "shop")
        """
        rows = self.rows(sql, *params)
        return rows[0][0] if rows else None

    def has_table(self, name: str) -> bool:
        """Whether the metastore has table ``name`` (an empty or foreign database has no ``vc_meta``).

        Example::

            meta.has_table("vc_meta")
        """
        if self.postgres:
            return bool(self.rows("SELECT 1 FROM information_schema.tables WHERE table_name = ?", name))
        return bool(self.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name))

    def close(self) -> None:
        """Closes the connection.

        Example::

            meta.close()
        """
        self._conn.close()


def _postgres_conninfo(url: str) -> str:
    """``jdbc:postgresql://host:port/db?user=u&password=p`` as a libpq URI (JDBC's query parameters that libpq
    does not know are dropped).

    Example::

        >>> _postgres_conninfo("jdbc:postgresql://db:5432/meta?user=u&password=p&ssl=false")
        'postgresql://db:5432/meta?user=u&password=p'
    """
    rest = url[len("jdbc:"):]
    base, _, query = rest.partition("?")
    keep = {"user", "password", "sslmode", "options", "application_name", "connect_timeout"}
    params = [(k, v) for k, v in urllib.parse.parse_qsl(query) if k in keep]
    return base + ("?" + urllib.parse.urlencode(params) if params else "")


def check_schema(meta: Metastore, expected: Sequence[str] = ("vc_meta", "vc_images")) -> int:
    """The metastore's schema version, refused when newer than :data:`SCHEMA_VERSION` or when it is no metastore.

    Example::

        check_schema(Metastore.open("jdbc:sqlite:/data/wh/metastore.db"))   # 2
    """
    where = redact(meta.url)
    if not all(meta.has_table(t) for t in expected):
        raise fail("WAREHOUSE_MISMATCH", f"The metastore '{where}' holds no versioned warehouse (no vc_meta table): it is "
                   "empty, new or another database. Point spark.versioned.metastore.url at the warehouse's metastore.")
    raw = meta.value("SELECT value FROM vc_meta WHERE key = ?", "schema_version")
    version = int(raw) if raw is not None else 0
    if version > SCHEMA_VERSION:
        raise fail("METASTORE_ERROR", f"Metastore schema version {version} is newer than this build supports "
                   f"({SCHEMA_VERSION}). Upgrade the versioned package.")
    if version < SCHEMA_VERSION:
        raise fail("METASTORE_ERROR", f"Metastore schema version {version} is older than this reader reads "
                   f"({SCHEMA_VERSION}); the connector upgrades it on first use. Open the warehouse once with Spark.")
    return version
