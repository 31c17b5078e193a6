"""Retention policies by ref (docs/SAFETY.md, "Retention policies").

A policy covers a branch name or glob (``feature/*``): garbage collection keeps the commits of the branch's
first-parent line made within ``keep_days`` and/or its newest ``keep_commits`` commits (a commit either keeps is
kept; the head always is), and with ``expire_branches_after_days`` deletes the branch when it was not updated for
that long (never the default branch, nor one a protection rule keeps from deletion). Branches no policy covers keep
their whole history; tags and locks keep their image. Nothing younger than gc's retention period is expired. Reading
an expired version raises :class:`~versioned.VersionExpired` naming the policy.
"""

from __future__ import annotations

from typing import Dict, Optional

from pyspark.sql import DataFrame, SparkSession

from versioned import _args
from versioned._ops import Ops

__all__ = ["RetentionMixin"]


class RetentionMixin:
    """The retention operations of :class:`~versioned.Repository`. They work on classic and on Spark Connect
    sessions (there, as ``CALL <catalog>.system.*`` procedures)."""

    spark: SparkSession
    name: str
    _options: Dict[str, str]
    _ops: Ops

    def set_retention(self, pattern: str, *, keep_days: Optional[int] = None, keep_commits: Optional[int] = None,
                      expire_branches_after_days: Optional[int] = None) -> DataFrame:
        """Sets the retention policy of the branches matching ``pattern`` (a name, or a glob: ``*`` within a path
        component, ``**`` across), replacing the policy for that pattern if there is one. Each value counts from 1
        (at most 36500 days); at least one is required, else :class:`~versioned.InvalidOption` and nothing is
        stored. :meth:`gc` carries the policies out. Returns the policy (one row).

        Example::

            repo.set_retention("feature/*", keep_commits=10, expire_branches_after_days=90)
            repo.set_retention(repo.default_branch, keep_days=30)
        """
        return self._ops.set_retention(self.name, _args.text("pattern", pattern),
                                       _args.optional_int("keep_days", keep_days),
                                       _args.optional_int("keep_commits", keep_commits),
                                       _args.optional_int("expire_branches_after_days", expire_branches_after_days))

    def remove_retention(self, pattern: str) -> None:
        """Removes the retention policy of ``pattern``; :class:`~versioned.RefNotFound` when there is none.

        Example::

            repo.remove_retention("feature/*")
        """
        self._ops.remove_retention(self.name, _args.text("pattern", pattern))

    def retention(self) -> DataFrame:
        """The retention policies: pattern, keep_days, keep_commits, expire_branches_after_days.

        Example::

            repo.retention().show(truncate=False)
        """
        return self._ops.retention(self.name)
