"""versioned: git-like version control for tables on Spark.

Build a session with the connector jar, optionally add ``df.write.versioned`` /
``spark.read.versioned``, and manage refs and history through :class:`Repository`::

    from pyspark.sql import SparkSession
    import versioned

    spark = versioned.configure_spark_with_versioned(
        SparkSession.builder.master("local[2]"), warehouse="/tmp/warehouse"
    ).getOrCreate()
    versioned.install()

    df = spark.createDataFrame([(1, "a"), (2, "b")], "id long, name string")
    df.write.versioned("sales.orders", primary_key="id", message="first load")

    repo = versioned.Repository(spark, "sales")
    repo.create_tag("v1", "main")
    repo.delete_where("orders", "id = 2", message="drop order 2")
    spark.read.versioned("sales.orders", ref="v1").count()   # 2
    repo.log("main").select("hash", "message").show()

Errors are :class:`versioned.errors.VersionedError` subclasses with the engine's stable
``error_class`` (e.g. :class:`RefNotFound`, :class:`ImmutableRef`); they are PySpark exceptions too
(``RefNotFound`` is an ``AnalysisException``). Importing the package patches nothing: :func:`install` (and
:func:`configure_spark_with_versioned`) install the hook that makes plain DataFrame and SQL calls raise them.

The plain format works too, without :func:`install`::

    df.write.format("versioned").option("primaryKey", "id").mode("append").save("sales.orders")
    spark.read.format("versioned").option("ref", "main~1").load("sales.orders")
"""

import sys
import types
from typing import TYPE_CHECKING, Any, Dict

# The names below are imported when first used (PEP 562), so that ``versioned.reader`` (no Spark) and the command
# line's read-only commands import neither PySpark nor a JVM bridge: ``import versioned`` alone is cheap.
if TYPE_CHECKING:
    from versioned.errors import (
        AmbiguousRef,
        DataValidationError,
        DuplicateKey,
        ImageNotFound,
        ImmutableRef,
        InvalidInputError,
        InvalidName,
        InvalidOption,
        InvalidRevision,
        KeyExists,
        MergeCardinalityViolation,
        ReplaceWhereMismatch,
        MergeConflict,
        MetastoreError,
        MissingKeyColumn,
        NoCommonAncestor,
        NotFoundError,
        ObjectCorrupt,
        ObjectMissing,
        ObjectStoreUnsupported,
        CheckFailed,
        CheckInvalid,
        CheckNotFound,
        VersionExpired,
        TableFormatUnsupported,
        NonFastForward,
        StreamCheckpointMismatch,
        NullPrimaryKey,
        ProtectedRef,
        RefConflict,
        RefExists,
        RefNotFound,
        RefStateError,
        RemoteExists,
        RemoteHistoryRewritten,
        RemoteNotFound,
        RemoteUnreachable,
        RepositoryExists,
        RepositoryNotFound,
        SchemaMismatch,
        StorageError,
        TableExists,
        TableNotFound,
        TransactionClosed,
        UnsupportedOperation,
        VersionedError,
        WarehouseMismatch,
    )
    from versioned.install import install, is_installed, uninstall
    from versioned.merging import MergeResult
    from versioned.remotes import DownloadResult, FetchResult, PushResult, RefUpdate, clone
    from versioned.repository import Repository, collect_garbage, repositories
    from versioned.transaction import Transaction
    from versioned.session import configure_spark_with_versioned, jar_path, set_log_level
    from versioned.s3a import install_s3a_jars

__version__ = "0.1.0"

__all__ = [
    "configure_spark_with_versioned",
    "set_log_level",
    "jar_path",
    "install_s3a_jars",
    "install",
    "uninstall",
    "is_installed",
    "Repository",
    "Transaction",
    "MergeResult",
    "clone",
    "FetchResult",
    "PushResult",
    "DownloadResult",
    "RefUpdate",
    "repositories",
    "collect_garbage",
    "VersionedError",
    "NotFoundError",
    "InvalidInputError",
    "DataValidationError",
    "RefStateError",
    "RepositoryNotFound",
    "RepositoryExists",
    "TableNotFound",
    "TableExists",
    "RefNotFound",
    "RefExists",
    "ImageNotFound",
    "AmbiguousRef",
    "InvalidName",
    "InvalidRevision",
    "InvalidOption",
    "ImmutableRef",
    "RefConflict",
    "MergeConflict",
    "NoCommonAncestor",
    "TransactionClosed",
    "ProtectedRef",
    "SchemaMismatch",
    "NullPrimaryKey",
    "DuplicateKey",
    "KeyExists",
    "MissingKeyColumn",
    "MergeCardinalityViolation",
    "ReplaceWhereMismatch",
    "UnsupportedOperation",
    "MetastoreError",
    "StorageError",
    "ObjectCorrupt",
    "ObjectMissing",
    "ObjectStoreUnsupported",
    "CheckFailed",
    "CheckInvalid",
    "CheckNotFound",
    "VersionExpired",
    "TableFormatUnsupported",
    "WarehouseMismatch",
    "RemoteNotFound",
    "RemoteExists",
    "RemoteUnreachable",
    "RemoteHistoryRewritten",
    "NonFastForward",
    "StreamCheckpointMismatch",
]


_HOMES: Dict[str, str] = {
    "install": "versioned.install", "is_installed": "versioned.install", "uninstall": "versioned.install",
    "MergeResult": "versioned.merging", "FetchResult": "versioned.remotes", "PushResult": "versioned.remotes",
    "DownloadResult": "versioned.remotes",
    "RefUpdate": "versioned.remotes", "clone": "versioned.remotes", "Repository": "versioned.repository",
    "collect_garbage": "versioned.repository", "repositories": "versioned.repository",
    "Transaction": "versioned.transaction", "configure_spark_with_versioned": "versioned.session",
    "jar_path": "versioned.session", "set_log_level": "versioned.session", "install_s3a_jars": "versioned.s3a",
}


class _Package(types.ModuleType):
    """The package module: the function ``install`` keeps its name when its submodule ``versioned.install`` is
    imported (the import system binds a submodule to its package's attribute of the same name)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "install" and isinstance(value, types.ModuleType):
            value = getattr(value, "install")
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    """Imports a public name of the package on first use (``versioned.Repository``, ``versioned.RefNotFound``).

    Example::

        import versioned
        versioned.Repository   # imports versioned.repository (and PySpark) now
    """
    import importlib

    if name in _HOMES:
        module = importlib.import_module(_HOMES[name])
    elif name in __all__:
        module = importlib.import_module("versioned.errors")
    else:
        raise AttributeError(f"module 'versioned' has no attribute {name!r}")
    for other, home in _HOMES.items():  # every name of that module, so a submodule never hides a function
        if home == module.__name__:
            globals()[other] = getattr(module, other)
    value = getattr(module, name)
    globals()[name] = value
    return value
