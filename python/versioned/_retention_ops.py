"""The retention part of the transports' contract (docs/SAFETY.md, "Retention policies"). :class:`versioned._ops.Ops`
extends :class:`RetentionOps`; :class:`versioned._jvm.JvmOps` calls the JVM facade ``versioned.spark.api.RetentionApi``,
:class:`versioned._connect.SqlOps` the SQL procedures ``set_retention``, ``remove_retention`` and ``retention``.
"""

from __future__ import annotations

from typing import Optional, Protocol

from pyspark.sql import DataFrame

__all__ = ["RetentionOps"]


class RetentionOps(Protocol):
    """Retention policies of a repository ``repo``.

    Example::

        from versioned.repository import _ops
        _ops(spark, {}).retention("shop").show()
    """

    def set_retention(self, repo: str, pattern: str, keep_days: Optional[int], keep_commits: Optional[int],
                      expire_branches_after_days: Optional[int]) -> DataFrame:
        """Adds or replaces the policy of branch name or glob ``pattern``; one row (the policy).

        Example::

            ops.set_retention("shop", "feature/*", 30, None, 90)
        """
        ...

    def remove_retention(self, repo: str, pattern: str) -> None:
        """Removes the policy of ``pattern`` (REF_NOT_FOUND when there is none).

        Example::

            ops.remove_retention("shop", "feature/*")
        """
        ...

    def retention(self, repo: str) -> DataFrame:
        """The policies (pattern, keep_days, keep_commits, expire_branches_after_days).

        Example::

            ops.retention("shop").show()
        """
        ...
