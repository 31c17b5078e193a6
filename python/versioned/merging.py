"""Merge, cherry-pick and revert results (the rules are in docs/MERGE.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Optional

from pyspark.sql import DataFrame

from versioned.errors import MergeConflict

if TYPE_CHECKING:  # pragma: no cover
    from versioned._ops import MergeOutcome

__all__ = ["MergeResult"]

Resolutions = Optional[Mapping[str, DataFrame]]

#: Columns of :attr:`MergeResult.tables` and :attr:`MergeResult.conflicts` (as the engine returns them).
TABLE_SCHEMA = "table string, action string, upserts bigint, deletes bigint"
CONFLICT_SCHEMA = "table string, key string, column string, base string, ours string, theirs string, kind string"


@dataclass(frozen=True)
class MergeResult:
    """What a merge, cherry-pick or revert did, or (``dry_run=True``) would do.

    Attributes:
        status: ``"merged"`` (a commit was made, or would be), ``"fast_forward"`` (the branch moved to the
            source), ``"up_to_date"`` (nothing to do) or ``"conflicts"`` (nothing was committed).
        commit: the commit made (or the fast-forward target), None when nothing was committed.
        fast_forward: whether the merge was (or would be) a fast-forward.
        base: the merge base image, None for unrelated histories (and cherry-picks of a root commit).
        conflict_count: number of conflicting cells or tables.
        tables: one row per table touched: table, action (``merge``, ``take``, ``drop``,
            ``conflict:<kind>``), upserts, deletes.
        conflicts: one row per conflict: table, key (JSON of the key columns), column, base, ours,
            theirs, kind (``update``, ``insert``, ``delete``, ``drop``, ``schema``).

    Example::

        result = repo.merge("pricing", into="main")
        if result.status == "conflicts":
            result.conflicts.show(truncate=False)
    """

    status: str
    commit: Optional[str]
    fast_forward: bool
    base: Optional[str]
    conflict_count: int
    tables: DataFrame
    conflicts: DataFrame

    @staticmethod
    def _of(fields: "MergeOutcome") -> "MergeResult":
        return MergeResult(**fields)

    @property
    def ok(self) -> bool:
        """True unless the merge stopped on conflicts.

        Example::

            assert repo.merge("dev").ok
        """
        return self.status != "conflicts"

    def check(self) -> "MergeResult":
        """Returns the result, or raises :class:`~versioned.errors.MergeConflict` if it stopped on conflicts.

        Example::

            repo.merge("dev", into="main").check()
        """
        if not self.ok:
            raise MergeConflict(f"[MERGE_CONFLICT] {self.conflict_count} conflict(s); nothing was committed. "
                                "Inspect result.conflicts, then merge again with strategy 'ours' or 'theirs', "
                                "or with resolutions.")
        return self
