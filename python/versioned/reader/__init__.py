"""Read versioned tables without Spark: no JVM and no PySpark, only pyarrow and the standard library (psycopg for a
PostgreSQL metastore, pyarrow's S3 file system for ``s3a://`` warehouses). Read-only: every write goes through the
connector's one commit path. See docs/PYTHON_READER.md.

Example::

    from versioned.reader import open_warehouse

    repo = open_warehouse("/data/wh").repository("shop")
    print([b.name for b in repo.branches()], repo.resolve("main~1").short_hash)
    orders = repo.table("orders", "v1").to_arrow(columns=["id", "total"], filters=[("id", "<", 100)])

Errors are the :mod:`versioned.errors` classes the Spark path raises (imported when one is raised).
"""

from typing import TYPE_CHECKING, Any

from versioned.reader._history import Commit, RefInfo, parse_timestamp
from versioned.reader._objects import ObjectRecord
from versioned.reader._warehouse import DEFAULT_WAREHOUSE, Repository, Warehouse, default_metastore_url, open_warehouse

if TYPE_CHECKING:
    from versioned.reader._prune import Filter
    from versioned.reader._table import TableVersion

__all__ = ["open_warehouse", "Warehouse", "Repository", "TableVersion", "Commit", "RefInfo", "ObjectRecord", "Filter",
           "DEFAULT_WAREHOUSE", "default_metastore_url", "parse_timestamp"]


def __getattr__(name: str) -> Any:
    """``TableVersion`` and ``Filter``, imported on first use (with pyarrow: refs and history do not need it).

    Example::

        from versioned.reader import TableVersion
    """
    if name in ("TableVersion", "Filter"):
        from versioned.reader import _table

        return getattr(_table, name)
    raise AttributeError(f"module 'versioned.reader' has no attribute {name!r}")
