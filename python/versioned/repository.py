"""Repositories: branches, tags, locks, history and row-level writes, backed by the JVM engine."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from pyspark.sql import DataFrame, SparkSession

from versioned import _args, _connect, _jvm
from versioned._ops import Ops
from versioned.errors import InvalidOption
from versioned.merging import MergeResult, Resolutions
from versioned.governance import GovernanceMixin
from versioned.retention import RetentionMixin
from versioned.remotes import RemotesMixin
from versioned.transaction import Transaction

__all__ = ["Repository", "repositories", "collect_garbage"]


def _location(warehouse: Optional[str], metastore_url: Optional[str]) -> Dict[str, str]:
    opts: Dict[str, str] = {}
    if warehouse is not None:
        opts["warehouse"] = warehouse
    if metastore_url is not None:
        opts["metastoreUrl"] = metastore_url
    return opts


def _ops(spark: SparkSession, options: Optional[Dict[str, str]]) -> Ops:
    """The operations for this kind of session (:class:`versioned._ops.Ops`): py4j calls on a classic session
    (:class:`versioned._jvm.JvmOps`), SQL on Spark Connect (:class:`versioned._connect.SqlOps`).

    Example::

        _ops(spark, {"warehouse": "/data/warehouse"}).repositories()
    """
    return _connect.SqlOps(spark, options) if _connect.is_connect(spark) else _jvm.JvmOps(spark, options)


def repositories(spark: SparkSession, *, warehouse: Optional[str] = None,
                 metastore_url: Optional[str] = None) -> List[str]:
    """Names of the repositories in the warehouse, sorted.

    Args:
        spark: a session built with :func:`~versioned.configure_spark_with_versioned`.
        warehouse: overrides ``spark.versioned.warehouse`` for this call.
        metastore_url: overrides ``spark.versioned.metastore.url`` for this call.

    Example::

        >>> versioned.repositories(spark)
        ['sales']
    """
    return _ops(spark, _location(warehouse, metastore_url)).repositories()


class Repository(RemotesMixin, GovernanceMixin, RetentionMixin):
    """A repository of versioned tables. Cheap to create; every call goes to the metastore.

    Remotes (another warehouse to clone from, fetch, pull and push) are in :class:`~versioned.remotes.RemotesMixin`:
    :meth:`add_remote`, :meth:`fetch`, :meth:`pull`, :meth:`push`, :meth:`import_table` (docs/REMOTES.md).
    Protected branches and checks are in :class:`~versioned.governance.GovernanceMixin`: :meth:`protect`,
    :meth:`add_check`, :meth:`run_checks` (docs/GOVERNANCE.md). Retention policies are in
    :class:`~versioned.retention.RetentionMixin`: :meth:`set_retention`, :meth:`retention` (docs/SAFETY.md).

    Revisions (``ref``, ``from_ref``, ``spec``) are resolved by the engine: a branch, a tag, a lock
    (``"namespace:name"``), a full image hash or a unique prefix of at least 4 hex digits, each
    optionally followed by ``~N`` (N-th first-parent ancestor) or ``^N`` (N-th parent). A revision or branch
    left out (None) is the repository's default branch (:attr:`default_branch`, ``main`` unless the repository
    was created with another or :meth:`set_default_branch` changed it).

    Example::

        repo = Repository(spark, "sales")
        repo.create_branch("dev", from_ref="main")
        repo.log("dev", limit=5).show()
    """

    def __init__(self, spark: SparkSession, name: str, *, warehouse: Optional[str] = None,
                 metastore_url: Optional[str] = None) -> None:
        """Binds a repository name to a session (nothing is checked or created yet).

        Example::

            repo = Repository(spark, "sales", warehouse="/data/warehouse")
        """
        self.spark = spark
        self.name = _args.text("name", name)
        self._options = _location(warehouse, metastore_url)
        self._ops: Ops = _ops(spark, self._options)

    def __repr__(self) -> str:
        return f"Repository({self.name!r})"

    def _table(self, table: str) -> str:
        return f"{self.name}.{_args.text('table', table)}"

    # ---- revisions
    def resolve(self, spec: Optional[str] = None) -> str:
        """The full image hash ``spec`` resolves to (None: the head of the default branch).

        Example::

            >>> repo.resolve("main~1")
            '3f1c...'
        """
        return str(self._ops.resolve(self.name, _args.optional_text("spec", spec)))

    # ---- the default branch
    @property
    def default_branch(self) -> str:
        """The repository's default branch: what every call, write and read that names no branch uses.

        Example::

            >>> repo.default_branch
            'main'
        """
        return str(self._ops.default_branch(self.name))

    def set_default_branch(self, name: str) -> str:
        """Makes the existing branch ``name`` the repository's default (it is then protected from deletion);
        returns its head hash. Raises :class:`~versioned.errors.RefNotFound` if there is no such branch.

        Example::

            repo.create_branch("trunk")
            repo.set_default_branch("trunk")
            repo.delete_branch("main")
        """
        return str(self._ops.set_default_branch(self.name, _args.text("name", name)))

    # ---- branches
    def branches(self) -> DataFrame:
        """Branches as a DataFrame (name, kind, image, created), sorted by name.

        Example::

            >>> [r.name for r in repo.branches().collect()]
            ['dev', 'main']
        """
        return self._ops.refs(self.name, "branch")

    def create_branch(self, name: str, from_ref: Optional[str] = None) -> str:
        """Creates branch ``name`` at ``from_ref`` (default: the head of the default branch); returns the image
        hash it points to.

        Raises :class:`~versioned.errors.RefExists` if a branch, tag or lock of that name exists.

        Example::

            repo.create_branch("dev", from_ref="main")
        """
        return str(self._ops.create_branch(self.name, _args.text("name", name),
                                           _args.optional_text("from_ref", from_ref)))

    def delete_branch(self, name: str) -> None:
        """Deletes a branch (its images stay reachable from other refs). The default branch is protected.

        Example::

            repo.delete_branch("dev")
        """
        self._ops.delete_branch(self.name, _args.text("name", name))

    def rename_branch(self, name: str, new_name: str) -> None:
        """Renames a branch (renaming the default branch makes the new name the default).

        Example::

            repo.rename_branch("dev", "develop")
        """
        self._ops.rename_branch(self.name, _args.text("name", name), _args.text("new_name", new_name))

    def reset(self, branch: str, ref: str) -> str:
        """Moves ``branch`` to the image ``ref`` resolves to; returns the new head hash.

        Example::

            repo.reset("main", "main~1")   # undo the last commit on main
        """
        return str(self._ops.reset(self.name, _args.text("branch", branch), _args.text("ref", ref)))

    # ---- tags
    def tags(self) -> DataFrame:
        """Tags as a DataFrame (name, kind, image, created), sorted by name.

        Example::

            repo.tags().show()
        """
        return self._ops.refs(self.name, "tag")

    def create_tag(self, name: str, ref: Optional[str] = None) -> str:
        """Tags the image ``ref`` resolves to (default: the head of the default branch); returns its hash. Tags
        never move.

        Example::

            repo.create_tag("v1", "main")
        """
        return str(self._ops.create_tag(self.name, _args.text("name", name), _args.optional_text("ref", ref)))

    def delete_tag(self, name: str) -> None:
        """Deletes a tag.

        Example::

            repo.delete_tag("v1")
        """
        self._ops.delete_tag(self.name, _args.text("name", name))

    # ---- locks
    def locks(self, namespace: Optional[str] = None) -> DataFrame:
        """Locks as a DataFrame (name ``namespace:name``, kind, image, created), optionally of one namespace.

        Example::

            repo.locks("etl").show()
        """
        return self._ops.refs(self.name, "lock", _args.optional_text("namespace", namespace))

    def create_lock(self, namespace: str, name: str, ref: Optional[str] = None) -> str:
        """Pins the image ``ref`` resolves to (default: the head of the default branch) under
        ``namespace:name``; returns its hash. Locks never move.

        Example::

            repo.create_lock("etl", "run-42", "main")
            spark.read.versioned("sales.orders", ref="etl:run-42")
        """
        return str(self._ops.create_lock(self.name, _args.text("namespace", namespace), _args.text("name", name),
                                         _args.optional_text("ref", ref)))

    def release_lock(self, namespace: str, name: str) -> None:
        """Releases (deletes) a lock.

        Example::

            repo.release_lock("etl", "run-42")
        """
        self._ops.release_lock(self.name, _args.text("namespace", namespace), _args.text("name", name))

    # ---- history
    def log(self, ref: Optional[str] = None, limit: Optional[int] = None) -> DataFrame:
        """History reachable from ``ref`` (default: the default branch), newest first, as a DataFrame with columns
        hash, parents (array), author, message, created (timestamp), tables_changed (array), and who made each
        commit: committer, app_id, client (null for commits made before commits carried them; docs/AUDIT.md).
        The DataFrame is pinned to the image ``ref`` points at when ``log`` is called (later commits do not
        change it); rows are read when a query needs them, and ``count()`` reads only the commit graph.

        Example::

            repo.log("main", limit=10).select("hash", "message").show()
        """
        return self._ops.log(self.name, _args.optional_text("ref", ref), _args.optional_count("limit", limit))

    def show(self, ref: Optional[str] = None) -> Dict[str, Any]:
        """One image (default: the head of the default branch) as a dict: image, parents, author, message,
        created (ISO-8601), created_ms,
        tables (name, schema, columns, primary_key, fragments with objects: id, kind, rows, bytes),
        changed_tables and dropped_tables.

        Example::

            >>> repo.show("main")["changed_tables"]
            ['orders']
        """
        info: Dict[str, Any] = json.loads(self._ops.show(self.name, _args.optional_text("ref", ref)))
        return info

    # ---- row-level writes
    def delete_where(self, table: str, condition: str, *, branch: Optional[str] = None,
                     message: Optional[str] = None, author: Optional[str] = None) -> int:
        """Deletes rows of ``table`` matching the SQL ``condition`` on ``branch`` (default branch if None)
        as one commit; returns the number of rows deleted (0: nothing matched, nothing committed). A
        condition that restricts the primary key to a set of values (``id IN (...)``, ``id = 1 OR id = 2``)
        reads only what may hold those keys; up to 10,000 of them are looked up and committed by the
        driver, with no Spark job.

        Example::

            repo.delete_where("orders", "status = 'cancelled'", message="purge cancelled")
            repo.delete_where("orders", "order_id IN (17, 42)", message="erasure requests")
        """
        return int(self._ops.delete_where(self._table(table), _args.text("condition", condition),
                                          *_commit_args(branch, message, author)))

    def upsert(self, df: DataFrame, table: str, *, branch: Optional[str] = None, message: Optional[str] = None,
               author: Optional[str] = None, primary_key: Optional[Union[str, Sequence[str]]] = None,
               delete_column: Optional[str] = None, before_images: Optional[bool] = None) -> str:
        """Inserts rows of ``df`` into ``table``, updating rows whose primary key exists, as one commit on
        ``branch`` (default branch if None); returns the new head hash (the current one when no row changes:
        nothing to commit, as for a write). ``primary_key`` is needed when
        the table is created by this call. With ``delete_column`` (a boolean column of ``df``, not
        stored), rows where it is true delete their key instead: a change feed applied by key in one
        commit, without reading the table. With ``before_images=True`` the commit also records each key's
        row before it (looked up now), so diffs across it read only what it wrote (None: the session's
        ``spark.versioned.write.beforeImages``, false by default; see docs/DIFF.md).

        Example::

            repo.upsert(changes_df, "orders", message="nightly sync")
            repo.upsert(cdc_df, "orders", delete_column="is_deleted", before_images=True, message="apply CDC batch")
        """
        return str(self._ops.upsert(_args.frame("df", df), self._table(table), *_commit_args(branch, message, author),
                                    _jvm.key_option(_args.key_columns("primary_key", primary_key)),
                                    _args.optional_text("delete_column", delete_column),
                                    _args.optional_flag("before_images", before_images)))

    def write_batch(self, df: DataFrame, table: str, query_id: str, batch_id: int, *, mode: str = "append",
                    upsert: bool = False, primary_key: Optional[Union[str, Sequence[str]]] = None,
                    delete_column: Optional[str] = None, branch: Optional[str] = None,
                    message: Optional[str] = None, author: Optional[str] = None) -> str:
        """Writes ``df`` to ``table`` as batch ``batch_id`` of the streaming query ``query_id``, exactly once: for a
        ``foreachBatch`` function, whose batches Spark runs again after a failure. When ``branch`` (default branch
        if None) has that batch of the query for the table already, nothing is committed and that commit is
        returned; else the write commits (one commit, which records the query's and the batch's ids) and its
        commit is returned. ``mode`` (``"append"`` or ``"overwrite"``), ``upsert``, ``primary_key`` and
        ``delete_column`` are those of a write (docs/STREAMING.md).

        Example::

            def sink(batch_df, batch_id):
                repo.write_batch(batch_df, "events", query.id, batch_id, upsert=True)

            query = stream_df.writeStream.foreachBatch(sink).option("checkpointLocation", "/ckpt/events").start()
        """
        if mode not in ("append", "overwrite"):
            raise _args.bad_argument(f"mode={mode!r} is not supported; use 'append' or 'overwrite'.")
        batch = _args.optional_int("batch_id", batch_id)
        if batch is None or batch < 0:
            raise _args.bad_argument(f"batch_id must be a whole number of 0 or more, not {batch_id!r}.")
        return str(self._ops.write_batch(_args.frame("df", df), self._table(table), _args.text("query_id", query_id),
                                         batch, mode, *_commit_args(branch, message, author),
                                         _jvm.key_option(_args.key_columns("primary_key", primary_key)),
                                         _args.flag("upsert", upsert),
                                         _args.optional_text("delete_column", delete_column)))

    # ---- multi-table transactions (docs/TRANSACTIONS.md)
    def transaction(self, branch: Optional[str] = None, message: Optional[str] = None,
                    author: Optional[str] = None) -> Transaction:
        """Opens a transaction on ``branch`` (default branch if None; a repository that does not exist yet
        is created by the commit): writes, upserts and deletes on any tables of this repository, committed
        as one image when the ``with`` block ends, or not at all if it raises. ``message`` defaults to a
        summary of the operations. See :class:`~versioned.Transaction`.

        Example::

            with repo.transaction(branch="main", message="nightly load") as tx:
                tx.write(orders_df, "orders", mode="overwrite")
                tx.upsert(customers_df, "customers")
                tx.delete_where("events", "day < '2026-01-01'")
        """
        handle = self._ops.begin_transaction(self.name, *_commit_args(branch, message, author))
        return Transaction(self, handle)

    # ---- merge, cherry-pick, revert (docs/MERGE.md)
    def merge(self, source: str, into: Optional[str] = None, *, strategy: str = "fail",
              fast_forward: str = "auto", dry_run: bool = False, message: Optional[str] = None,
              author: Optional[str] = None, resolutions: Resolutions = None,
              allow_unrelated: bool = False, squash: bool = False) -> MergeResult:
        """Three-way merge of revision ``source`` into branch ``into`` (default branch if None).

        Tables changed on one side only take that side's version; tables changed on both are merged by
        primary key, cell by cell (key-less tables as multisets). ``strategy``: ``"fail"`` (conflicts
        are returned and nothing is committed), ``"ours"`` or ``"theirs"`` (every conflict settled from
        one side). ``fast_forward``: ``"auto"``, ``"never"`` (always a merge commit) or ``"only"``
        (raise :class:`~versioned.errors.MergeConflict` unless it is a fast-forward). ``resolutions``
        maps a table to rows (its columns, plus an optional boolean ``_delete``) settling its
        conflicting keys. A merge commit's parents are ``into``'s head, then ``source``. With ``squash=True`` the
        merge is one commit whose only parent is ``into``'s head, holding ``source``'s net change, its message
        listing the squashed commits (never a fast-forward; conflicts as for a merge; a branch whose protection rule
        requires merges refuses it with :class:`~versioned.ProtectedRef`).

        Example::

            result = repo.merge("pricing", into="main")
            if not result.ok:
                result.conflicts.show(truncate=False)
                fixed = spark.createDataFrame([(7, "blue", 12.5)], "id int, color string, price double")
                repo.merge("pricing", into="main", resolutions={"products": fixed}).check()
            repo.merge("feature/x", squash=True, message="feature x").check()
        """
        return MergeResult._of(self._ops.merge(
            self.name, _args.text("source", source), _args.optional_text("into", into),
            _args.text("strategy", strategy), _args.text("fast_forward", fast_forward), _args.flag("dry_run", dry_run),
            *_commit_args(None, message, author)[1:],
            _resolutions(resolutions), _args.flag("allow_unrelated", allow_unrelated), _args.flag("squash", squash)))

    def cherry_pick(self, commit: str, onto: Optional[str] = None, *, parent: Optional[int] = None,
                    strategy: str = "fail", dry_run: bool = False, message: Optional[str] = None,
                    author: Optional[str] = None, resolutions: Resolutions = None) -> MergeResult:
        """Applies the change ``commit`` made (against its parent; for a merge commit name the
        ``parent``, 1-based) onto branch ``onto`` as one new commit, with the merge's conflict rules.

        Example::

            repo.cherry_pick("dev~2", onto="main").check()
        """
        return MergeResult._of(self._ops.pick(self.name, _args.text("commit", commit),
                                              _args.optional_text("onto", onto),
                                              _args.optional_ordinal("parent", parent) or 0, False,
                                              _args.text("strategy", strategy), _args.flag("dry_run", dry_run),
                                              *_commit_args(None, message, author)[1:], _resolutions(resolutions)))

    def revert(self, commit: str, on: Optional[str] = None, *, parent: Optional[int] = None,
               strategy: str = "fail", dry_run: bool = False, message: Optional[str] = None,
               author: Optional[str] = None, resolutions: Resolutions = None) -> MergeResult:
        """Commits the inverse of the change ``commit`` made on branch ``on`` (later changes to the same
        cells are conflicts). Reverting a merge commit needs ``parent`` (1 = the branch it merged into).

        Example::

            repo.revert("main~1", on="main").check()
        """
        return MergeResult._of(self._ops.pick(self.name, _args.text("commit", commit), _args.optional_text("on", on),
                                              _args.optional_ordinal("parent", parent) or 0, True,
                                              _args.text("strategy", strategy), _args.flag("dry_run", dry_run),
                                              *_commit_args(None, message, author)[1:], _resolutions(resolutions)))

    # ---- diffs and maintenance
    def diff(self, table: str, from_ref: str, to_ref: str) -> DataFrame:
        """Row-level diff of ``table`` between two revisions: a DataFrame with ``_change``
        ('insert', 'delete', 'update'), the key columns and ``<column>_before`` / ``<column>_after``.
        Only fragments whose objects differ are read, so the cost follows the size of the change.

        Example::

            repo.diff("orders", "v1", "main").filter("_change = 'update'").show()
        """
        return self._ops.diff(self._table(table), _args.text("from_ref", from_ref), _args.text("to_ref", to_ref))

    def blame(self, table: str, ref: Optional[str] = None) -> DataFrame:
        """Row blame of ``table`` at ``ref`` (default: the default branch): one row per row of the table there, its
        identity columns (the primary key; every column of a key-less table, one row per copy of a duplicated
        row) and the commit of ``ref``'s first-parent line that last changed it: ``_commit_hash``,
        ``_commit_version`` (the commit's sequence number), ``_commit_timestamp``, ``_commit_author``,
        ``_commit_message``. Only the commits' DIFFs are read, newest first, until every row is found (see
        docs/BLAME.md). A table that does not exist at ``ref`` raises :class:`~versioned.errors.TableNotFound`.

        Example::

            repo.blame("orders").filter("id = 42").select("_commit_hash", "_commit_author").show()
        """
        return self._ops.blame(self._table(table), _args.optional_text("ref", ref))

    def diff_summary(self, from_ref: str, to_ref: str, table: Optional[str] = None) -> DataFrame:
        """What changed between two revisions, one row per table that differs (or only ``table``):
        ``table``, ``inserted``, ``updated``, ``deleted`` (rows), ``columns_changed`` (columns whose values
        changed in updated rows, plus columns added or dropped), ``cells_changed`` (per column, the updated
        rows whose value in it changed), ``schema_changed`` (columns, types or key). Tables whose content
        is the same in both revisions are not read; the others cost what changed (see docs/DIFF.md). The
        counts are null for a table whose column changed to an incomparable type.

        Example::

            repo.diff_summary("v1", "main").show()
            repo.diff_summary("v1", "main", table="orders").select("updated", "cells_changed").show()
        """
        return self._ops.diff_summary(self.name, _args.text("from_ref", from_ref), _args.text("to_ref", to_ref),
                                      _args.optional_text("table", table))

    def materialize(self) -> DataFrame:
        """Ref-driven snapshots (MMS5): compacts every image a branch, tag or lock points at so each ref
        reads as a plain scan, and evicts compacted forms no ref needs any more. Returns what was
        compacted (image, table, fragments, objects).

        Example::

            repo.create_lock("reports", "q3", "main")
            repo.materialize().show()
        """
        return self._ops.materialize(self.name)

    def compact(self, table: Optional[str] = None, *, branch: Optional[str] = None) -> DataFrame:
        """Compaction of a branch head now (default: the default branch; ``table``: one table, default
        all). Commits compact in a background thread of the driver; this waits for that thread, then runs
        the compaction policy on the head and returns what it wrote (table, image, objects), so reads and
        ``t$objects`` see the compacted form when it returns.

        Example::

            repo.compact("orders").show()
        """
        return self._ops.compact(self.name, _args.optional_text("branch", branch), _args.optional_text("table", table))

    def gc(self, older_than_seconds: Optional[float] = None, *, force: bool = False,
           dry_run: bool = False) -> DataFrame:
        """Expires what this repository's retention policies (:meth:`set_retention`) no longer keep, then deletes
        its objects that no version of any repository needs and that no commit used for ``older_than_seconds``
        (default: a day; nothing younger than that is expired either). Without policies history stays readable;
        concurrent commits are never affected (they are serialized with the collection). A retention below an
        hour needs ``force=True``. With ``dry_run=True`` nothing is deleted. Returns one row (kind, name, path,
        reason) per expired image or branch and per object deleted, or that would be. Use
        :func:`collect_garbage` for the whole warehouse.

        Example::

            repo.release_lock("reports", "q3")
            repo.materialize()
            repo.gc(dry_run=True).show()
            repo.gc(older_than_seconds=0, force=True)
        """
        return self._ops.gc(self.name, _retention_ms(older_than_seconds), _args.flag("force", force),
                            _args.flag("dry_run", dry_run))

    def reflog(self, ref: Optional[str] = None, limit: Optional[int] = None) -> DataFrame:
        """The reflog: every movement of every ref of this repository, newest first (docs/AUDIT.md). One row per
        entry: ``seq``, ``id`` (``reflog@{seq}``, what ``create_branch(name, from_ref=...)`` restores from),
        ``ref``, ``old_image``, ``new_image``, ``operation``, ``who``, ``app_id``, ``client``, ``detail``, ``at``,
        ``prev_hash`` and ``entry_hash`` (hash-chained; :meth:`verify` checks the chain). ``ref`` keeps one ref's
        entries (a branch, tag or lock name, or a full name such as ``remotes/origin/main``); ``limit`` the newest.

        Example::

            repo.reflog("dev", limit=5).show(truncate=False)
            gone = repo.reflog("dev").first()
            repo.create_branch("dev", from_ref=gone["id"])
        """
        n = _args.optional_count("limit", limit)
        if n is not None and n < 1:
            raise InvalidOption(f"reflog: limit must be 1 or more (it is {n}); leave it out for every entry.")
        return self._ops.reflog(self.name, _args.optional_text("ref", ref), n or 0)

    def verify(self, refs: Optional[Sequence[str]] = None) -> DataFrame:
        """Reads every object the versions reachable from ``refs`` (default: every branch, tag and lock)
        need, against the checksum recorded when it was written. One row per object: ``object``,
        ``kind``, ``status`` ('ok', 'missing' or 'corrupt'), ``detail`` and ``needed_by`` (table@image); and the
        reflog's hash chain: one ``reflog`` row ``ok``, or a row per entry ``changed``, ``removed`` or ``reordered``.

        Example::

            repo.verify().filter("status != 'ok'").show(truncate=False)
        """
        return self._ops.verify(self.name, [str(r) for r in (refs or [])])


def _commit_args(branch: Any, message: Any, author: Any) -> Tuple[Optional[str], Optional[str], Optional[str]]:
    """``(branch, message, author)`` of a call that commits, each a string or None (checked before any work)."""
    return (_args.optional_text("branch", branch), _args.optional_text("message", message),
            _args.optional_text("author", author))


def _resolutions(resolutions: Resolutions) -> Resolutions:
    """Merge resolutions: table name -> DataFrame of resolved rows, checked."""
    if resolutions is None:
        return None
    if not hasattr(resolutions, "items"):
        raise _args.bad_argument(f"resolutions must map table names to DataFrames, not {type(resolutions).__name__}.")
    return {_args.text("resolutions table", t): _args.frame(f"resolutions[{t!r}]", df) for t, df in resolutions.items()}


def _retention_ms(older_than_seconds: Optional[float]) -> int:
    if older_than_seconds is None:
        return -1
    if isinstance(older_than_seconds, bool) or not isinstance(older_than_seconds, (int, float)):
        raise _args.bad_argument(f"older_than_seconds must be a number of seconds, not {type(older_than_seconds).__name__}.")
    if older_than_seconds < 0:
        raise InvalidOption(f"older_than_seconds must be >= 0, not {older_than_seconds}")
    return int(older_than_seconds * 1000)


def collect_garbage(spark: SparkSession, *, older_than_seconds: Optional[float] = None, force: bool = False,
                    dry_run: bool = False, warehouse: Optional[str] = None,
                    metastore_url: Optional[str] = None) -> DataFrame:
    """Garbage collection of the whole warehouse: objects no repository needs, files no metastore row
    names (left by failed writers) and staging files of writes that ended, all older than
    ``older_than_seconds`` (default: a day; below an hour only with ``force=True``). Refuses to run when
    the metastore and the object store do not belong together (:class:`~versioned.WarehouseMismatch`).

    Example::

        versioned.collect_garbage(spark, dry_run=True).groupBy("kind").count().show()
    """
    location = _location(_args.optional_text("warehouse", warehouse), _args.optional_text("metastore_url", metastore_url))
    return _ops(spark, location).gc(None, _retention_ms(older_than_seconds), _args.flag("force", force),
                                    _args.flag("dry_run", dry_run))
