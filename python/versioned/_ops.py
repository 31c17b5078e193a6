"""The one contract of the two transports: :class:`Ops` (the operations behind :class:`~versioned.Repository`)
and :class:`TransactionHandle` (an open multi-table transaction).

Two classes implement each, with the same parameter names, types and results:

- on a classic session, :class:`versioned._jvm.JvmOps` and :class:`versioned._jvm_tx.JvmTransaction`: py4j calls
  of the static facade ``versioned.spark.api.VersionedApi`` (and ``RefsApi``) and of the JVM
  ``TransactionHandle``;
- on a Spark Connect session, :class:`versioned._connect.SqlOps` and
  :class:`versioned._connect_tx.SqlTransaction`: ``CALL <catalog>.system.*`` procedures and metadata tables.

:func:`versioned.repository._ops` picks one by the kind of session; everything above it (``Repository``,
``RemotesMixin``, ``Transaction``, ``clone``) holds an :class:`Ops` and never knows which. mypy checks that
both classes satisfy the protocols (``bin/test``), and ``tests/python/test_typing.py`` that their signatures
are the protocols' exactly.

Arguments are already checked by the public API (``versioned._args``): strings are strings, None means "the
default" (the repository's default branch for a ref or branch, the engine's default message and author).
Errors are :mod:`versioned.errors` exceptions.
"""

from __future__ import annotations

from typing import Any, List, Literal, Mapping, Optional, Protocol, Sequence

from pyspark.sql import DataFrame

from versioned._governance_ops import GovernanceOps
from versioned._remote_ops import RemoteOps
from versioned._retention_ops import RetentionOps
from versioned._outcomes import DownloadOutcome, FetchOutcome, MergeOutcome, PushOutcome, RefUpdateRow

__all__ = ["Ops", "TransactionHandle", "CLIENT_CONF", "declare_client", "MergeOutcome", "RefUpdateRow", "FetchOutcome", "PushOutcome", "DownloadOutcome", "RefKind"]

#: The kinds of ref :meth:`Ops.refs` lists.
RefKind = Literal["branch", "tag", "lock"]

#: The session setting that tells the JVM which client a call comes through (recorded in the reflog).
CLIENT_CONF = "spark.versioned.client"


def declare_client(spark: Any, client: str) -> None:
    """Tells the JVM that calls on ``spark`` come through ``client`` (``python``, ``connect``, ``cli``), unless the
    session declared its client already (the CLI's ``cli`` stays when it uses the Python API). The reflog records
    it with every ref movement (docs/AUDIT.md).

    Example::

        declare_client(spark, "python")
    """
    if not spark.conf.get(CLIENT_CONF, None):
        spark.conf.set(CLIENT_CONF, client)


class TransactionHandle(Protocol):
    """An open multi-table transaction (:meth:`Ops.begin_transaction`), as :class:`~versioned.Transaction`
    drives it. It lives in the driver that runs the engine: the classic session's JVM, or the Connect server.

    Example::

        handle = ops.begin_transaction("shop", None, "nightly load", None)
        handle.upsert(df, "orders", None, None)
        handle.commit()
    """

    def branch(self) -> str:
        """The branch the transaction commits to.

        Example::

            handle.branch()   # 'main'
        """
        ...

    def base(self) -> Optional[str]:
        """The head the transaction started from; None when its commit creates the branch.

        Example::

            assert handle.base() == ops.resolve("shop", None)
        """
        ...

    def is_open(self) -> bool:
        """Whether the transaction still takes operations (not committed, aborted or failed).

        Example::

            handle.abort()
            assert not handle.is_open()
        """
        ...

    def changed_tables(self) -> List[str]:
        """The tables whose content the transaction changed so far, sorted.

        Example::

            handle.upsert(df, "orders", None, None)
            assert handle.changed_tables() == ["orders"]
        """
        ...

    def committed(self) -> Optional[str]:
        """The image the commit recorded; None before the commit, after an abort, or when nothing changed.

        Example::

            handle.commit()
            print(handle.committed())
        """
        ...

    def write(self, df: DataFrame, table: str, mode: str, primary_key: Optional[str]) -> None:
        """Writes ``df`` to ``table`` with ``mode`` ``"append"`` or ``"overwrite"``; ``primary_key`` (key columns,
        comma-separated) is needed when the transaction creates the table, None keeps the table's.

        Example::

            handle.write(orders_df, "orders", "overwrite", None)
        """
        ...

    def upsert(self, df: DataFrame, table: str, primary_key: Optional[str], delete_column: Optional[str]) -> None:
        """Inserts the rows of ``df`` into ``table``, updating rows whose key exists; rows whose boolean
        ``delete_column`` is true delete their key instead (None: no such column).

        Example::

            handle.upsert(cdc_df, "orders", None, "is_deleted")
        """
        ...

    def delete_where(self, table: str, condition: str) -> int:
        """Deletes the rows of ``table`` (as the transaction sees it) matching the SQL ``condition``; returns
        how many.

        Example::

            handle.delete_where("events", "day < '2026-01-01'")
        """
        ...

    def read(self, table: str) -> DataFrame:
        """``table`` as the transaction sees it (its version at :meth:`base` plus the transaction's changes),
        pinned to that version.

        Example::

            handle.read("orders").count()
        """
        ...

    def commit(self) -> Optional[str]:
        """Records every changed table as one image and ends the transaction; returns the image hash, or None
        when nothing changed. Raises :class:`~versioned.errors.RefConflict` (committing nothing) on a conflict.

        Example::

            image = handle.commit()
        """
        ...

    def abort(self) -> None:
        """Ends the transaction without committing anything.

        Example::

            handle.abort()
        """
        ...

    def close(self) -> None:
        """Aborts the transaction if it is still open; does nothing to one that has ended.

        Example::

            handle.close()
        """
        ...


class Ops(GovernanceOps, RetentionOps, RemoteOps, Protocol):
    """The operations of :class:`~versioned.Repository`, :class:`~versioned.remotes.RemotesMixin`,
    :func:`~versioned.clone` and :func:`~versioned.collect_garbage`, on one session and one warehouse location
    (the session's ``spark.versioned.*`` settings, or the ``warehouse`` / ``metastoreUrl`` the transport was
    made with); the governance operations are in :class:`versioned._governance_ops.GovernanceOps`, the retention ones in :class:`versioned._retention_ops.RetentionOps`,
    the remote ones in :class:`versioned._remote_ops.RemoteOps`. ``repo`` is a repository name; ``table`` in :meth:`delete_where`, :meth:`upsert` and
    :meth:`diff` is ``"<repository>.<table>"``, elsewhere a table name inside ``repo``.

    Example::

        from versioned.repository import _ops
        ops = _ops(spark, {})        # JvmOps on a classic session, SqlOps on Spark Connect
        ops.create_branch("shop", "dev", None)
    """

    # ---- repositories and revisions
    def repositories(self) -> List[str]:
        """The names of the repositories in the warehouse, sorted.

        Example::

            ops.repositories()   # ['shop']
        """
        ...

    def resolve(self, repo: str, spec: Optional[str]) -> str:
        """The full image hash the revision ``spec`` resolves to (None: the head of the default branch).
        Raises :class:`~versioned.errors.RefNotFound` when nothing matches.

        Example::

            ops.resolve("shop", "main~1")
        """
        ...

    def default_branch(self, repo: str) -> str:
        """The name of the repository's default branch (also when that branch has no commit yet). Raises
        :class:`~versioned.errors.RepositoryNotFound` for a repository that does not exist.

        Example::

            ops.default_branch("shop")   # 'main'
        """
        ...

    def set_default_branch(self, repo: str, name: str) -> str:
        """Makes the existing branch ``name`` the default; returns its head hash.

        Example::

            ops.set_default_branch("shop", "trunk")
        """
        ...

    # ---- refs
    def refs(self, repo: str, kind: RefKind, namespace: Optional[str] = None) -> DataFrame:
        """The refs of one ``kind`` as a DataFrame (name, kind, image, created) sorted by name; for locks,
        only those of ``namespace`` when it is given (names ``namespace:name``).

        Example::

            ops.refs("shop", "lock", "etl").show()
        """
        ...

    def create_branch(self, repo: str, name: str, from_ref: Optional[str]) -> str:
        """Creates branch ``name`` at the image ``from_ref`` resolves to (None: the default branch's head);
        returns that image's hash.

        Example::

            ops.create_branch("shop", "dev", "main")
        """
        ...

    def delete_branch(self, repo: str, name: str) -> None:
        """Deletes branch ``name`` (the default branch is protected).

        Example::

            ops.delete_branch("shop", "dev")
        """
        ...

    def rename_branch(self, repo: str, name: str, new_name: str) -> None:
        """Renames branch ``name`` to ``new_name``.

        Example::

            ops.rename_branch("shop", "dev", "develop")
        """
        ...

    def reset(self, repo: str, branch: str, ref: str) -> str:
        """Moves ``branch`` to the image ``ref`` resolves to; returns the new head hash.

        Example::

            ops.reset("shop", "main", "main~1")
        """
        ...

    def create_tag(self, repo: str, name: str, ref: Optional[str]) -> str:
        """Tags the image ``ref`` resolves to (None: the default branch's head); returns its hash.

        Example::

            ops.create_tag("shop", "v1", None)
        """
        ...

    def delete_tag(self, repo: str, name: str) -> None:
        """Deletes tag ``name``.

        Example::

            ops.delete_tag("shop", "v1")
        """
        ...

    def create_lock(self, repo: str, namespace: str, name: str, ref: Optional[str]) -> str:
        """Pins the image ``ref`` resolves to (None: the default branch's head) as ``namespace:name``; returns
        its hash.

        Example::

            ops.create_lock("shop", "etl", "run-42", "main")
        """
        ...

    def release_lock(self, repo: str, namespace: str, name: str) -> None:
        """Deletes lock ``namespace:name``.

        Example::

            ops.release_lock("shop", "etl", "run-42")
        """
        ...

    # ---- history
    def log(self, repo: str, ref: Optional[str], limit: Optional[int]) -> DataFrame:
        """The history reachable from ``ref`` (None: the default branch), newest first, at most ``limit`` rows
        (None: all), pinned to the image ``ref`` names now: hash, parents, author, message, created,
        tables_changed.

        Example::

            ops.log("shop", "main", 10).show()
        """
        ...

    def show(self, repo: str, ref: Optional[str]) -> str:
        """One image (None: the default branch's head) as a JSON object: image, parents, author, message,
        created, created_ms, tables, changed_tables, dropped_tables.

        Example::

            json.loads(ops.show("shop", "v1"))["tables"]
        """
        ...

    # ---- row-level writes
    def delete_where(self, table: str, condition: str, branch: Optional[str], message: Optional[str],
                     author: Optional[str]) -> int:
        """Deletes the rows of ``table`` (``"<repository>.<table>"``) matching the SQL ``condition`` on
        ``branch`` (None: the default branch) as one commit; returns how many rows it deleted (0: no commit).

        Example::

            ops.delete_where("shop.orders", "id = 2", None, "drop order 2", None)
        """
        ...

    def upsert(self, df: DataFrame, table: str, branch: Optional[str], message: Optional[str],
               author: Optional[str], keys: Optional[str], delete_column: Optional[str],
               before_images: Optional[bool] = None) -> str:
        """Inserts the rows of ``df`` into ``table`` (``"<repository>.<table>"``), updating rows whose key
        exists, as one commit on ``branch`` (None: the default branch). ``keys``: the key columns,
        comma-separated (None: the table's); ``delete_column``: a boolean column whose true rows delete their
        key; ``before_images``: record before-images (None: the session's setting). Returns the commit, or the
        branch head when the write changed nothing.

        Example::

            ops.upsert(df, "shop.orders", None, "nightly sync", None, "id", None)
        """
        ...

    # ---- transactions
    def write_batch(self, df: DataFrame, table: str, query_id: str, batch_id: int, mode: str, branch: Optional[str],
                    message: Optional[str], author: Optional[str], keys: Optional[str], upsert: bool,
                    delete_column: Optional[str]) -> str:
        """Writes ``df`` to ``table`` (``"<repository>.<table>"``) as batch ``batch_id`` of the streaming query
        ``query_id``, idempotently: when ``branch`` (None: the default branch) has that batch of the query for the
        table already, nothing is committed and that commit is returned; else the write's commit.

        Example::

            ops.write_batch(df, "shop.events", "q-1", 7, "append", None, None, None, None, False, None)
        """
        ...

    def begin_transaction(self, repo: str, branch: Optional[str], message: Optional[str],
                          author: Optional[str]) -> TransactionHandle:
        """Opens a multi-table transaction on ``branch`` (None: the default branch) of ``repo``.

        Example::

            handle = ops.begin_transaction("shop", None, "nightly load", None)
        """
        ...

    # ---- merge, cherry-pick, revert
    def merge(self, repo: str, source: str, into: Optional[str], strategy: str, fast_forward: str, dry_run: bool,
              message: Optional[str], author: Optional[str], resolutions: Optional[Mapping[str, DataFrame]],
              allow_unrelated: bool, squash: bool) -> MergeOutcome:
        """Three-way merge of revision ``source`` into branch ``into`` (None: the default branch); with ``squash``
        one commit with one parent holding the source's net change.
        ``strategy``: ``fail``, ``ours`` or ``theirs``; ``fast_forward``: ``auto``, ``never`` or ``only``;
        ``resolutions``: table name to the rows settling its conflicts.

        Example::

            ops.merge("shop", "dev", None, "fail", "auto", False, None, None, None, False, False)["status"]
        """
        ...

    def pick(self, repo: str, commit: str, onto: Optional[str], parent: int, revert: bool, strategy: str,
             dry_run: bool, message: Optional[str], author: Optional[str],
             resolutions: Optional[Mapping[str, DataFrame]]) -> MergeOutcome:
        """Cherry-picks ``commit`` onto branch ``onto`` (None: the default branch), or with ``revert`` commits
        its inverse there; ``parent`` names the parent of a merge commit (1-based; 0: none given).

        Example::

            ops.pick("shop", "dev~1", "main", 0, False, "fail", False, None, None, None)
        """
        ...

    # ---- diffs and maintenance
    def diff(self, table: str, from_ref: str, to_ref: str) -> DataFrame:
        """The row-level diff of ``table`` (``"<repository>.<table>"``) between two revisions: ``_change``,
        the key columns, ``<column>_before`` and ``<column>_after``.

        Example::

            ops.diff("shop.orders", "v1", "main").show()
        """
        ...

    def blame(self, table: str, ref: Optional[str]) -> DataFrame:
        """Row blame of ``table`` (``"<repository>.<table>"``) at ``ref`` (None: the default branch): per row, its
        identity columns and the commit that last changed it (``_commit_hash``, ``_commit_version``,
        ``_commit_timestamp``, ``_commit_author``, ``_commit_message``).

        Example::

            ops.blame("shop.orders", None).show()
        """
        ...

    def diff_summary(self, repo: str, from_ref: str, to_ref: str, table: Optional[str]) -> DataFrame:
        """One row per table that differs between two revisions (or only ``table``): inserted, updated,
        deleted, columns_changed, cells_changed, schema_changed.

        Example::

            ops.diff_summary("shop", "v1", "main", None).show()
        """
        ...

    def materialize(self, repo: str) -> DataFrame:
        """Compacts every image a ref points at; returns what it compacted (image, table, fragments, objects).

        Example::

            ops.materialize("shop").show()
        """
        ...

    def compact(self, repo: str, branch: Optional[str], table: Optional[str]) -> DataFrame:
        """Compacts the head of ``branch`` (None: the default branch), only ``table`` when given; returns what
        it wrote (table, image, objects).

        Example::

            ops.compact("shop", None, "orders").show()
        """
        ...

    def gc(self, repo: Optional[str], retention_ms: int, force: bool, dry_run: bool) -> DataFrame:
        """Garbage collection of ``repo`` (None: the whole warehouse) of what is older than ``retention_ms``
        milliseconds (negative: the default, a day); below an hour only with ``force``. Returns one row (kind,
        name, path) per object deleted, or that would be with ``dry_run``.

        Example::

            ops.gc("shop", -1, False, True).show()
        """
        ...

    def verify(self, repo: str, refs: Sequence[str]) -> DataFrame:
        """Checks every object the versions reachable from ``refs`` (empty: every ref) need; one row per
        object: object, kind, status, detail, needed_by.

        Example::

            ops.verify("shop", []).filter("status != 'ok'").show()
        """
        ...

    def reflog(self, repo: str, ref: Optional[str], limit: int) -> DataFrame:
        """The reflog of ``repo``: every ref movement, newest first (of ``ref`` only when given), at most ``limit``
        entries (0: all); the columns of the ``$reflog`` table (docs/AUDIT.md).

        Example::

            ops.reflog("shop", "main", 10).show()
        """
        ...
