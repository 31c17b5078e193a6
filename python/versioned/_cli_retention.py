"""The ``retention`` command (docs/SAFETY.md, "Retention policies"): ``retention REPOSITORY`` lists the policies,
``retention REPOSITORY PATTERN --keep-days N --keep-commits N --expire-branches-after-days N`` adds or replaces the
policy of a branch name or glob, ``retention REPOSITORY PATTERN --remove`` removes it. ``gc`` carries them out.
"""

from __future__ import annotations

from typing import Any, Optional

import click
from rich.markup import escape

from versioned._cli_base import Format, app, console, emit, format_option, rows_of, state

__all__ = ["retention"]

POLICY_COLUMNS = ["pattern", "keep_days", "keep_commits", "expire_branches_after_days"]


def _repo(spark: Any, name: str) -> Any:
    import versioned

    return versioned.Repository(spark, name)


@app.command()
@click.argument("repository")
@click.argument("pattern", required=False)
@click.option("--keep-days", type=int, metavar="N", help="Keep the commits of the last N days of each branch.")
@click.option("--keep-commits", type=int, metavar="N", help="Keep the last N commits of each branch (first parents).")
@click.option("--expire-branches-after-days", type=int, metavar="N", help="Delete branches not updated for N days.")
@click.option("--remove", is_flag=True, help="Remove the policy of PATTERN.")
@format_option
def retention(repository: str, pattern: Optional[str], keep_days: Optional[int], keep_commits: Optional[int],
              expire_branches_after_days: Optional[int], remove: bool, fmt: Format) -> None:
    """Sets the retention policy of the branches of REPOSITORY matching PATTERN (a name, or a glob: feature/*);
    with --remove removes it; without PATTERN, lists the policies. gc carries them out.

    Example: versioned retention shop 'feature/*' --keep-commits 10 --expire-branches-after-days 90
    """
    if pattern is None and (remove or keep_days is not None or keep_commits is not None
                            or expire_branches_after_days is not None):
        raise click.UsageError("Name the PATTERN of the policy to set or remove.")
    with state.session() as spark:
        repo = _repo(spark, repository)
        if pattern is not None and remove:
            repo.remove_retention(pattern)
            console().print(f"[green]Removed retention policy {escape(pattern)}[/green]")
        elif pattern is not None:
            repo.set_retention(pattern, keep_days=keep_days, keep_commits=keep_commits,
                               expire_branches_after_days=expire_branches_after_days)
        rows = rows_of(repo.retention())
    emit(rows, POLICY_COLUMNS, fmt, title="retention policies", styles={"pattern": "bold"}, empty="(no policies)")
