"""The command line's Spark-free path: read-only commands (``log``, ``show``, listing branches, tags, locks and
remotes, ``cat``, ``export``, ``diff``, ``verify``) open the warehouse with :mod:`versioned.reader`, so no JVM
starts and PySpark is not imported. The warehouse and metastore are the invocation's (``--warehouse``, ``--metastore-url`` or their
environment variables), else those of the active SparkSession when one is running (a notebook, a test), else the
defaults.

Example::

    with reading() as wh:
        print(wh.repository("shop").branches())
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Dict, Iterator, List, Optional, Tuple

from versioned._cli_base import DEFAULT_WAREHOUSE, METASTORE_CONF, WAREHOUSE_CONF, state
from versioned._cli_text import suggestion
from versioned.reader import Commit, RefInfo, Warehouse, open_warehouse


def locations() -> Tuple[str, Optional[str]]:
    """The warehouse and metastore URL of this invocation.

    Example::

        locations()   # ('./versioned-warehouse', None)
    """
    warehouse, metastore = state.warehouse, state.metastore_url
    if (warehouse is None or metastore is None) and "pyspark.sql" in sys.modules:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
        if spark is not None:
            warehouse = warehouse or spark.conf.get(WAREHOUSE_CONF, None)
            if metastore is None and not state.warehouse:
                metastore = spark.conf.get(METASTORE_CONF, None)
    return warehouse or DEFAULT_WAREHOUSE, metastore or None


@contextlib.contextmanager
def reading() -> Iterator[Warehouse]:
    """The invocation's warehouse, opened read-only without Spark; an unknown ref or table gets its "did you mean".

    Example::

        with reading() as wh:
            wh.repository("shop").log(limit=5)
    """
    wh = open_warehouse(*locations())
    try:
        yield wh
    except Exception as exc:
        _suggest(wh, exc)
        raise
    finally:
        wh.close()


def _suggest(wh: Warehouse, exc: BaseException) -> None:
    import re

    error_class = getattr(exc, "error_class", None)
    if error_class not in ("REF_NOT_FOUND", "TABLE_NOT_FOUND"):
        return
    message = str(getattr(exc, "message", exc))
    names = re.findall(r"'([^']*)'", message)
    repo_name = re.search(r"in repository '([^']+)'", message) or re.search(r"Table '([^'.]+)\.", message)
    if not names or repo_name is None:
        return
    try:
        repo = wh.repository(repo_name.group(1))
        if error_class == "REF_NOT_FOUND":
            missing = names[0].split("~")[0].split("^")[0]
            candidates = [r.name for r in repo.branches() + repo.tags() + repo.locks()]
        else:
            missing = names[0].split(".", 1)[-1]
            candidates = repo.tables()
    except Exception:  # noqa: BLE001 - a suggestion is best effort
        return
    hint = suggestion(missing, candidates)
    if hint:
        setattr(exc, "cli_hint", hint)


def reader_diff(repo: str, table: str, a: str, b: str) -> Any:
    """The row diff of ``repo.table`` from ``a`` to ``b`` read without Spark: a :class:`pyarrow.Table` in the
    connector's columns (aligned across a change of schema or key), sorted by key.

    Example::

        reader_diff("shop", "products", "v1", "main")
    """
    with reading() as wh:
        return wh.repository(repo).diff(table, a, b)


def log_row(c: Commit) -> Dict[str, Any]:
    """A commit as the rows ``log`` prints (the columns of the API's log).

    Example::

        log_row(repo.resolve("main"))["hash"]
    """
    return {"hash": c.hash, "parents": list(c.parents), "author": c.author, "message": c.message,
            "created": c.created, "tables_changed": list(c.tables_changed), "committer": c.committer,
            "app_id": c.app_id, "client": c.client}


def ref_rows(refs: List[RefInfo]) -> List[Dict[str, Any]]:
    """Refs as the rows the ref listings print.

    Example::

        ref_rows(repo.branches())
    """
    return [{"name": r.name, "image": r.image, "created": r.created} for r in refs]

