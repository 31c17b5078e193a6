"""Multi-table transactions on a Spark Connect session: the transaction lives in the Connect server's driver
and is driven by SQL procedures (``begin_transaction``, ``transaction_write``, ``transaction_upsert``,
``transaction_delete_where``, ``transaction_read``, ``transaction_state``, ``commit_transaction``,
``abort_transaction``), addressed by the token ``begin_transaction`` returns. DataFrames travel as temporary
views of the session, dropped after each call (see docs/CONNECT.md)."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, Callable, List, Optional, TypeVar

from pyspark.sql import DataFrame

from versioned._connect import first
from versioned._ops import TransactionHandle
from versioned.errors import TransactionClosed

if TYPE_CHECKING:  # pragma: no cover
    from versioned._connect import SqlOps

T = TypeVar("T")


class SqlTransaction(TransactionHandle):
    """The server-side transaction behind a :class:`~versioned.Transaction` on a Spark Connect session.
    Implements :class:`versioned._ops.TransactionHandle` (the methods are documented there), as
    :class:`versioned._jvm_tx.JvmTransaction` does over the classic session's JVM handle (same results).

    Example::

        handle = SqlTransaction(ops, first(ops._call("begin_transaction", repository="shop")))
        handle.upsert(df, "orders", None, None)
        handle.commit()
    """

    def __init__(self, ops: "SqlOps", row: Any) -> None:
        """Wraps the state row ``begin_transaction`` returned; ``ops`` is the session's ``SqlOps``.

        Example::

            SqlTransaction(ops, first(ops._call("begin_transaction", repository="shop")))
        """
        self._ops = ops
        self.token = str(row["token"])
        self._row = row
        self._ended = False  # once ended, the last state is final: no need to ask the server again

    def _call(self, proc: str, **args: Any) -> Any:
        return first(self._ops._call(proc, token=self.token, **args))

    def _state(self) -> Any:
        if not self._ended:
            self._row = self._call("transaction_state")
            self._ended = not bool(self._row["open"])
        return self._row

    def _with_view(self, df: DataFrame, run: Callable[[str], T]) -> T:
        if not isinstance(df, DataFrame):
            raise TypeError(f"expected a DataFrame, got {type(df).__name__}")
        view = f"versioned_tx_input_{uuid.uuid4().hex}"
        df.createOrReplaceTempView(view)
        try:
            return run(view)
        finally:
            self._ops.spark.catalog.dropTempView(view)

    # ---- the TransactionHandle methods
    def branch(self) -> str:
        return str(self._row["branch"])

    def base(self) -> Optional[str]:
        return _optional_str(self._row["base"])

    def is_open(self) -> bool:
        return bool(self._state()["open"])

    def changed_tables(self) -> List[str]:
        return [str(t) for t in self._state()["changed_tables"]]

    def committed(self) -> Optional[str]:
        return _optional_str(self._state()["commit"])

    def write(self, df: DataFrame, table: str, mode: str, primary_key: Optional[str]) -> None:
        self._with_view(df, lambda view: self._call("transaction_write", table=table, view=view, mode=mode,
                                                    primary_key=primary_key))

    def upsert(self, df: DataFrame, table: str, primary_key: Optional[str], delete_column: Optional[str]) -> None:
        self._with_view(df, lambda view: self._call("transaction_upsert", table=table, view=view,
                                                    primary_key=primary_key, delete_column=delete_column))

    def delete_where(self, table: str, condition: str) -> int:
        return int(self._call("transaction_delete_where", table=table, condition=condition)["deleted"])

    def read(self, table: str) -> DataFrame:
        return self._ops.spark.table(str(self._call("transaction_read", table=table)["view"]))

    def _end(self, proc: str) -> Any:
        # A commit that raises (a conflict) ended the transaction too; the next state call asks the server.
        self._row = self._call(proc)
        self._ended = True
        return self._row

    def commit(self) -> Optional[str]:
        return _optional_str(self._end("commit_transaction")["commit"])

    def abort(self) -> None:
        self._end("abort_transaction")

    def close(self) -> None:
        """Aborts the transaction if it is still open; does nothing otherwise (as the JVM handle's close).

        Example::

            handle.close()
        """
        try:
            if self.is_open():
                self._end("abort_transaction")
        except TransactionClosed:
            pass


def _optional_str(value: Any) -> Optional[str]:
    """A column value that may be null, as ``str`` or None."""
    return None if value is None else str(value)
