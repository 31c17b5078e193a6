"""The governance part of the transports' contract (docs/GOVERNANCE.md): protected branches and checks.
:class:`versioned._ops.Ops` extends :class:`GovernanceOps`; :class:`versioned._jvm.JvmOps` calls the JVM facade
``versioned.spark.api.GovernanceApi``, :class:`versioned._connect.SqlOps` the SQL procedures ``protect_branch``,
``unprotect_branch``, ``protections``, ``add_check``, ``remove_check``, ``checks`` and ``run_checks``.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Protocol, Sequence

from pyspark.sql import DataFrame

__all__ = ["GovernanceOps"]


class GovernanceOps(Protocol):
    """Protection rules and checks of a repository ``repo``.

    Example::

        from versioned.repository import _ops
        _ops(spark, {}).protections("shop").show()
    """

    def protect(self, repo: str, pattern: str, require_merge: bool, allow_force: bool, allow_delete: bool,
                checks: Sequence[str]) -> DataFrame:
        """Adds or replaces the rule of branch name or glob ``pattern``; one row (the rule).

        Example::

            ops.protect("shop", "main", True, False, False, ["positive_price"])
        """
        ...

    def unprotect(self, repo: str, pattern: str) -> None:
        """Removes the rule of ``pattern`` (REF_NOT_FOUND when there is none).

        Example::

            ops.unprotect("shop", "release/*")
        """
        ...

    def protections(self, repo: str) -> DataFrame:
        """The rules (pattern, require_merge, allow_force, allow_delete, required_checks).

        Example::

            ops.protections("shop").show()
        """
        ...

    def add_check(self, repo: str, name: str, expression: str, table: Optional[str], severity: Optional[str]) -> DataFrame:
        """Adds or replaces check ``name`` (a query returning failing rows, or with ``table`` a row predicate);
        one row (the check). A bad definition is CHECK_INVALID.

        Example::

            ops.add_check("shop", "positive_price", "price >= 0", "orders", None)
        """
        ...

    def remove_check(self, repo: str, name: str) -> None:
        """Removes check ``name`` (one a rule requires is refused).

        Example::

            ops.remove_check("shop", "positive_price")
        """
        ...

    def checks(self, repo: str) -> DataFrame:
        """The checks (name, kind, table, expression, severity).

        Example::

            ops.checks("shop").show()
        """
        ...

    def run_checks(self, repo: str, ref: Optional[str], names: Sequence[str]) -> DataFrame:
        """Runs checks ``names`` (empty: all) on ``ref`` (None: the default branch), recording each run; one row
        per check (image, check, severity, status, failing_rows, sample_keys, error, duration_ms).

        Example::

            ops.run_checks("shop", "dev", []).show()
        """
        ...

    def publish(self, repo: str, branch: str, into: Optional[str], delete_branch: bool, dry_run: bool,
                message: Optional[str], author: Optional[str]) -> Dict[str, Any]:
        """Merges ``branch`` into ``into`` (None: the default branch) through the gates; the result row as a dict
        (status, commit, into, branch_deleted, tables, checks).

        Example::

            ops.publish("shop", "ingest", None, True, False, None, None)["commit"]
        """
        ...

    def bisect(self, repo: str, check: str, good: str, bad: Optional[str]) -> Dict[str, Any]:
        """The first commit on the first-parent line from ``good`` to ``bad`` (None: the default branch) where
        ``check`` (a check's name or a SQL query) fails; the result row as a dict (first_bad, message, last_good,
        candidates, runs).

        Example::

            ops.bisect("shop", "positive_price", "v1", None)["first_bad"]
        """
        ...
