"""Multi-table transactions: several writes, upserts and deletes committed as one image, or not at all
(see docs/TRANSACTIONS.md)."""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, List, Literal, Optional, Sequence, Type, Union

from pyspark.sql import DataFrame

from versioned import _args, _jvm
from versioned._ops import TransactionHandle

if TYPE_CHECKING:  # pragma: no cover
    from versioned.repository import Repository

__all__ = ["Transaction"]


class Transaction:
    """A transaction on one branch of a repository, opened by :meth:`Repository.transaction`.

    Every operation is planned on the transaction's view: the branch head it started from (``base``)
    plus its own earlier operations, so a second operation on a table builds on the first. Objects are
    written as each operation runs, but nothing is visible to anyone else until :meth:`commit` records
    every changed table as **one image** (one commit, one parent). Used as a context manager it commits
    when the block ends normally and aborts (commits nothing) when the block raises, re-raising the
    exception. A failed operation changes nothing in the transaction.

    If the branch moved meanwhile, the commit lands on the new head when the commits in between changed
    none of the tables the transaction changed, or none of the keys it changed in them (its net changes
    of those keyed tables are then planned again on the new head); otherwise it raises
    :class:`~versioned.errors.RefConflict` and commits nothing. Operations after the transaction ended
    raise :class:`~versioned.errors.TransactionClosed`.

    Example::

        with repo.transaction(branch="main", message="nightly load") as tx:
            tx.write(orders_df, "orders", mode="overwrite")
            tx.upsert(customers_df, "customers")
            tx.delete_where("events", "day < '2026-01-01'")
        print(tx.commit_hash)   # the one image holding all three changes
    """

    def __init__(self, repo: "Repository", handle: TransactionHandle) -> None:
        """Wraps a transaction handle (:class:`versioned._ops.TransactionHandle`: the JVM's on a classic
        session, the server-side transaction's on Spark Connect); use :meth:`Repository.transaction` to open one.

        Example::

            tx = repo.transaction(message="fix prices")
        """
        self._repo = repo
        self._handle = handle

    def __repr__(self) -> str:
        state = "open" if self.is_open else "ended"
        return f"Transaction({self._repo.name!r}, branch={self.branch!r}, {state})"

    def _table(self, table: str) -> str:
        return _args.text("table", table)

    def _frame(self, df: DataFrame) -> DataFrame:
        return _args.frame("df", df)

    # ---- state
    @property
    def branch(self) -> str:
        """The branch the transaction commits to.

        Example::

            >>> repo.transaction().branch
            'main'
        """
        return self._handle.branch()

    @property
    def base(self) -> Optional[str]:
        """The head the transaction started from (None when its commit creates the branch).

        Example::

            tx = repo.transaction()
            assert tx.base == repo.resolve("main")
        """
        return self._handle.base()

    @property
    def is_open(self) -> bool:
        """Whether the transaction can still take operations (not committed or aborted).

        Example::

            tx.abort()
            assert not tx.is_open
        """
        return self._handle.is_open()

    @property
    def changed_tables(self) -> List[str]:
        """Tables whose content the transaction changed so far, sorted.

        Example::

            tx.upsert(df, "orders")
            assert tx.changed_tables == ["orders"]
        """
        return self._handle.changed_tables()

    @property
    def commit_hash(self) -> Optional[str]:
        """The image the commit recorded; None before the commit, after an abort, or when nothing changed.

        Example::

            with repo.transaction() as tx:
                tx.upsert(df, "orders")
            print(tx.commit_hash)
        """
        return self._handle.committed()

    # ---- operations
    def write(self, df: DataFrame, table: str, mode: str = "append", *,
              primary_key: Optional[Union[str, Sequence[str]]] = None) -> None:
        """Writes ``df`` to ``table`` as ``df.write.versioned`` would: ``mode="append"`` adds rows (an
        existing key is :class:`~versioned.errors.KeyExists`), ``mode="overwrite"`` makes ``df`` the
        table's content. ``primary_key`` is needed when the transaction creates the table.

        Example::

            tx.write(orders_df, "orders", mode="overwrite")
            tx.write(new_df, "regions", primary_key="code")
        """
        self._handle.write(self._frame(df), self._table(table), _args.text("mode", mode),
                           _jvm.key_option(_args.key_columns("primary_key", primary_key)))

    def upsert(self, df: DataFrame, table: str, *, primary_key: Optional[Union[str, Sequence[str]]] = None,
               delete_column: Optional[str] = None) -> None:
        """Inserts the rows of ``df`` into ``table``, updating rows whose primary key exists (the table is
        not read). Rows whose boolean ``delete_column`` is true delete their key instead.

        Example::

            tx.upsert(customers_df, "customers")
            tx.upsert(cdc_df, "orders", delete_column="is_deleted")
        """
        self._handle.upsert(self._frame(df), self._table(table),
                            _jvm.key_option(_args.key_columns("primary_key", primary_key)),
                            _args.optional_text("delete_column", delete_column))

    def delete_where(self, table: str, condition: str) -> int:
        """Deletes the rows of ``table`` (as the transaction sees it) matching the SQL ``condition``;
        returns how many.

        Example::

            tx.delete_where("events", "day < '2026-01-01'")
        """
        return self._handle.delete_where(self._table(table), _args.text("condition", condition))

    def read(self, table: str) -> DataFrame:
        """``table`` as the transaction sees it: its version at ``base`` with the transaction's own changes.
        The DataFrame stays pinned to that version (later operations do not change it).

        Example::

            tx.upsert(df, "orders")
            tx.read("orders").filter("id = 7").show()
        """
        return self._handle.read(self._table(table))

    # ---- ending
    def commit(self) -> Optional[str]:
        """Records every table the transaction changed as one image and ends the transaction; returns the
        image hash, or None when nothing changed (nothing is recorded). Raises
        :class:`~versioned.errors.RefConflict` (committing nothing) when another commit changed keys the
        transaction changed (or a key-less table it changed) since ``base``.

        Example::

            tx = repo.transaction(message="fix prices")
            tx.upsert(prices_df, "prices")
            image = tx.commit()
        """
        return self._handle.commit()

    def abort(self) -> None:
        """Ends the transaction without committing anything (its objects are removed by a later ``gc``).

        Example::

            tx = repo.transaction()
            tx.delete_where("orders", "true")
            tx.abort()   # nothing happened
        """
        self._handle.abort()

    def __enter__(self) -> "Transaction":
        """Returns the transaction itself.

        Example::

            with repo.transaction() as tx:
                tx.upsert(df, "orders")
        """
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> Literal[False]:
        """Commits (if still open) when the block ended normally; aborts when it raised, and lets the
        exception propagate.

        Example::

            with repo.transaction() as tx:
                tx.upsert(df, "orders")
                raise RuntimeError("stop")   # nothing is committed; the error propagates
        """
        if exc_type is not None:
            try:
                self._handle.close()  # aborts an open transaction; does nothing to an ended one
            except Exception:  # noqa: BLE001 - the block's exception matters; an unclosed lease expires
                pass
            return False
        if self.is_open:
            self.commit()
        return False
