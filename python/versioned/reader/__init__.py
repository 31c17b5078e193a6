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

from versioned.reader._history import Commit, RefInfo, parse_timestamp
from versioned.reader._table import Filter, ObjectRecord, TableVersion
from versioned.reader._warehouse import DEFAULT_WAREHOUSE, Repository, Warehouse, default_metastore_url, open_warehouse

__all__ = ["open_warehouse", "Warehouse", "Repository", "TableVersion", "Commit", "RefInfo", "ObjectRecord", "Filter",
           "DEFAULT_WAREHOUSE", "default_metastore_url", "parse_timestamp"]
