"""A transaction on a classic session (:class:`JvmTransaction`): the JVM's transaction handle called through py4j,
as :mod:`versioned._connect_tx` is the same over SQL for Spark Connect.

Example::

    handle = JvmOps(spark, None).begin_transaction("shop", None, "nightly load", None)
"""

from __future__ import annotations

from typing import Any, List, Optional

from pyspark.sql import DataFrame, SparkSession

from versioned._jvm import call_on, optional_str
from versioned._ops import TransactionHandle


class JvmTransaction(TransactionHandle):
    """A transaction on a classic session: the JVM ``versioned.spark.api.TransactionHandle`` that
    ``VersionedApi.beginTransaction`` returned, called through py4j with the error translation of :func:`call`.
    Implements :class:`versioned._ops.TransactionHandle` (the methods are documented there).

    Example::

        handle = JvmOps(spark, None).begin_transaction("shop", None, "nightly load", None)
        handle.upsert(df, "orders", None, None)
        handle.commit()
    """

    def __init__(self, spark: SparkSession, handle: Any) -> None:
        """Wraps the JVM handle ``handle`` of a transaction opened on ``spark``.

        Example::

            JvmTransaction(spark, call(spark, None, "beginTransaction", "shop", None, None, None))
        """
        self.spark = spark
        self.handle = handle

    def _call(self, method: str, *args: Any) -> Any:
        return call_on(self.spark, self.handle, method, *args)

    def branch(self) -> str:
        return str(self._call("branch"))

    def base(self) -> Optional[str]:
        return optional_str(self._call("base"))

    def is_open(self) -> bool:
        return bool(self._call("isOpen"))

    def changed_tables(self) -> List[str]:
        return [str(t) for t in self._call("changedTables")]

    def committed(self) -> Optional[str]:
        return optional_str(self._call("committed"))

    def write(self, df: DataFrame, table: str, mode: str, primary_key: Optional[str]) -> None:
        self._call("write", df, table, mode, primary_key)

    def upsert(self, df: DataFrame, table: str, primary_key: Optional[str], delete_column: Optional[str]) -> None:
        self._call("upsert", df, table, primary_key, delete_column)

    def delete_where(self, table: str, condition: str) -> int:
        return int(self._call("deleteWhere", table, condition))

    def read(self, table: str) -> DataFrame:
        result = self._call("read", table)
        if not isinstance(result, DataFrame):
            raise TypeError(f"read returned {type(result).__name__}, not a DataFrame")
        return result

    def commit(self) -> Optional[str]:
        return optional_str(self._call("commit"))

    def abort(self) -> None:
        self._call("abort")

    def close(self) -> None:
        self._call("close")
