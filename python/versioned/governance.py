"""Gates a team can trust (docs/GOVERNANCE.md): protected branches and checks.

A protection rule covers a branch name or glob (``main``, ``release/*``): with ``require_merge`` no direct write
(DataFrame writes, SQL DML, upserts, ``delete_where``, transactions, imports, pushes) may move the branch, only a
merge; resets (``allow_force``) and deletion (``allow_delete``) are refused unless allowed; ``checks`` must pass on
the image a merge lands, before the branch moves. A refusal is :class:`~versioned.ProtectedRef`; a failed check
:class:`~versioned.CheckFailed`. Nothing is committed either way.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

from pyspark.sql import DataFrame, SparkSession

from versioned import _args
from versioned._ops import Ops

__all__ = ["GovernanceMixin"]


class GovernanceMixin:
    """The governance operations of :class:`~versioned.Repository` (kept here so each module stays small). They
    work on classic and on Spark Connect sessions (there, as ``CALL <catalog>.system.*`` procedures)."""

    spark: SparkSession
    name: str
    _options: Dict[str, str]
    _ops: Ops

    def protect(self, pattern: str, *, require_merge: bool = True, allow_force: bool = False,
                allow_delete: bool = False, checks: Sequence[str] = ()) -> DataFrame:
        """Protects the branches matching ``pattern`` (a name, or a glob: ``*`` within a path component, ``**``
        across), replacing the rule for that pattern if there is one. The branches need not exist yet.
        ``checks`` name checks (:meth:`add_check`) that must pass on what a merge lands. Returns the rule (one row).

        Example::

            repo.add_check("positive_price", "price >= 0", table="orders")
            repo.protect(repo.default_branch, checks=["positive_price"])
            repo.protect("release/*", require_merge=False, allow_delete=True)
        """
        return self._ops.protect(self.name, _args.text("pattern", pattern), _args.flag("require_merge", require_merge),
                                 _args.flag("allow_force", allow_force), _args.flag("allow_delete", allow_delete),
                                 _args.texts("checks", checks))

    def unprotect(self, pattern: str) -> None:
        """Removes the rule of ``pattern``; :class:`~versioned.RefNotFound` when there is none.

        Example::

            repo.unprotect("release/*")
        """
        self._ops.unprotect(self.name, _args.text("pattern", pattern))

    def protections(self) -> DataFrame:
        """The protection rules: pattern, require_merge, allow_force, allow_delete, required_checks.

        Example::

            repo.protections().show(truncate=False)
        """
        return self._ops.protections(self.name)

    def add_check(self, name: str, expression: str, *, table: Optional[str] = None,
                  severity: Optional[str] = None) -> DataFrame:
        """Adds (or replaces) check ``name``: without ``table``, ``expression`` is a SQL query over the repository's
        tables that returns the failing rows (it must return none); with ``table``, a predicate every row of it
        must satisfy. ``severity``: ``error`` (default; blocks a gated merge) or ``warn`` (recorded only). It is
        validated on the default branch: a query that does not parse or names a missing table raises
        :class:`~versioned.CheckInvalid` and nothing is added. Returns the check (one row).

        Example::

            repo.add_check("positive_price", "price >= 0", table="orders")
            repo.add_check("orders_have_customers",
                           "SELECT o.id FROM orders o LEFT ANTI JOIN customers c ON o.customer = c.id")
        """
        return self._ops.add_check(self.name, _args.text("name", name), _args.text("expression", expression),
                                   _args.optional_text("table", table), _args.optional_text("severity", severity))

    def remove_check(self, name: str) -> None:
        """Removes check ``name``; one a protection rule requires is refused (:class:`~versioned.ProtectedRef`).

        Example::

            repo.remove_check("positive_price")
        """
        self._ops.remove_check(self.name, _args.text("name", name))

    def checks(self) -> DataFrame:
        """The checks: name, kind (query or predicate), table, expression, severity.

        Example::

            repo.checks().show(truncate=False)
        """
        return self._ops.checks(self.name)

    def run_checks(self, ref: Optional[str] = None, *, checks: Sequence[str] = ()) -> DataFrame:
        """Runs ``checks`` (default: all) on the image ``ref`` resolves to (default: the default branch) and records
        each run (the metadata table ``$checks``). One row per check: image, check, severity, status (``pass``,
        ``fail`` or ``error``), failing_rows, sample_keys, error, duration_ms. A failing check does not raise.

        Example::

            failed = repo.run_checks("dev").filter("status != 'pass'").collect()
        """
        return self._ops.run_checks(self.name, _args.optional_text("ref", ref), _args.texts("checks", checks))

    def publish(self, branch: str, into: Optional[str] = None, *, delete_branch: bool = False, dry_run: bool = False,
                message: Optional[str] = None, author: Optional[str] = None) -> Dict[str, Any]:
        """Write-audit-publish: merges ``branch`` into ``into`` (default: the default branch) through the gates,
        every table the branch changed in one image (one merge commit), then deletes ``branch`` if
        ``delete_branch``. Required checks that fail raise :class:`~versioned.CheckFailed` and nothing lands. With
        ``dry_run`` the merged image is made, the checks run on it (the required ones, else every check) and it is
        forgotten: nothing lands; its ``status`` is ``check_failed`` when a required check of severity error fails
        (the publish would be refused), else the merge's. Returns a dict: ``status``, ``commit`` (None for a dry run), ``into``,
        ``branch_deleted``, ``tables`` (table, action, upserts, deletes) and ``checks`` (check, severity, status,
        failing_rows, sample_keys, error).

        Example::

            preview = repo.publish("ingest", dry_run=True)
            if preview["status"] != "check_failed":
                repo.publish("ingest", delete_branch=True)
        """
        return self._ops.publish(self.name, _args.text("branch", branch), _args.optional_text("into", into),
                                 _args.flag("delete_branch", delete_branch), _args.flag("dry_run", dry_run),
                                 _args.optional_text("message", message), _args.optional_text("author", author))

    def bisect(self, check: str, good: str, bad: Optional[str] = None) -> Dict[str, Any]:
        """The first commit on the first-parent line from ``good`` (where ``check`` passes) to ``bad`` (default: the
        default branch; where it fails) at which ``check`` starts failing, by binary search: O(log n) check runs for
        n commits, each recorded in ``$checks`` (purpose ``bisect``). ``check`` is a check's name or a SQL query
        returning the failing rows. Returns a dict: ``first_bad``, ``message``, ``last_good``, ``candidates``,
        ``runs`` (image, status, failing_rows).

        Example::

            culprit = repo.bisect("positive_price", good="v1")
            print(culprit["first_bad"], culprit["message"])
        """
        return self._ops.bisect(self.name, _args.text("check", check), _args.text("good", good),
                                _args.optional_text("bad", bad))
