"""Commands for protected branches and checks (docs/GOVERNANCE.md): ``protect``, ``unprotect`` and
``check add|list|remove|run|runs``.

``publish REPOSITORY BRANCH`` merges a branch through the gates (``--dry-run``: what would land and the checks'
results on it). ``protect REPOSITORY PATTERN`` adds or replaces a rule (merges only, no reset, no deletion unless the flags say
otherwise; ``--check`` names checks a merge must pass); without PATTERN it lists the rules. ``check run`` runs
checks on a revision, prints one row per check and exits with 1 (``[CHECK_FAILED]``) when a check of severity
error fails, so a script or CI job can gate on it.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import click
from rich.markup import escape

from versioned._cli_base import Format, app, console, emit, format_option, rows_of, short, state

__all__ = ["protect", "unprotect", "publish", "bisect", "check", "check_add", "check_list", "check_remove", "check_run", "check_runs"]

RULE_COLUMNS = ["pattern", "require_merge", "allow_force", "allow_delete", "required_checks"]
CHECK_COLUMNS = ["name", "kind", "table", "expression", "severity"]
RUN_COLUMNS = ["image", "check", "severity", "status", "failing_rows", "sample_keys", "error", "duration_ms"]
_STATUS_STYLES = {"check": "bold", "status": "cyan", "image": "yellow"}


def _repo(spark: Any, name: str) -> Any:
    import versioned

    return versioned.Repository(spark, name)


@app.command()
@click.argument("repository")
@click.argument("pattern", required=False)
@click.option("--allow-direct-writes", is_flag=True, help="Allow writes that are not merges (default: merges only).")
@click.option("--allow-force", is_flag=True, help="Allow resets and forced pushes.")
@click.option("--allow-delete", is_flag=True, help="Allow deleting or renaming the branch.")
@click.option("--check", "checks", multiple=True, metavar="NAME", help="A check a merge must pass (repeatable).")
@format_option
def protect(repository: str, pattern: Optional[str], allow_direct_writes: bool, allow_force: bool, allow_delete: bool,
            checks: Tuple[str, ...], fmt: Format) -> None:
    """Protects the branches of REPOSITORY matching PATTERN (a name, or a glob: release/*); without PATTERN,
    lists the rules.

    Example: versioned protect shop main --check positive_price
    """
    with state.session() as spark:
        repo = _repo(spark, repository)
        if pattern is not None:
            repo.protect(pattern, require_merge=not allow_direct_writes, allow_force=allow_force,
                         allow_delete=allow_delete, checks=list(checks))
        rows = rows_of(repo.protections())
    emit(rows, RULE_COLUMNS, fmt, title="protection rules", styles={"pattern": "bold"}, empty="(no rules)")


@app.command()
@click.argument("repository")
@click.argument("pattern")
def unprotect(repository: str, pattern: str) -> None:
    """Removes the protection rule PATTERN of REPOSITORY.

    Example: versioned unprotect shop 'release/*'
    """
    with state.session() as spark:
        _repo(spark, repository).unprotect(pattern)
    console().print(f"[green]Removed rule {escape(pattern)}[/green]")


@app.command()
@click.argument("repository")
@click.argument("branch")
@click.option("--into", metavar="BRANCH", help="Branch to publish into [default: the default branch].")
@click.option("--delete-branch", is_flag=True, help="Delete BRANCH once published.")
@click.option("--dry-run", is_flag=True, help="Show what would land and the checks' results on it; change nothing.")
@click.option("--message", "-m", metavar="TEXT", help="Commit message.")
@format_option
def publish(repository: str, branch: str, into: Optional[str], delete_branch: bool, dry_run: bool,
            message: Optional[str], fmt: Format) -> None:
    """Publishes BRANCH of REPOSITORY: merges every table it changed into the target in one commit, through the
    target's required checks.

    Example: versioned publish shop ingest --dry-run
    """
    with state.session() as spark:
        result = _repo(spark, repository).publish(branch, into, delete_branch=delete_branch, dry_run=dry_run,
                                                  message=message)
    refused = result["status"] == "check_failed"  # a dry run the target's required checks would refuse
    if fmt is not Format.table:
        emit([result], ["status", "commit", "into", "branch_deleted", "tables", "checks"], fmt)
    else:
        if refused:
            console().print(f"[red]Would not publish {escape(branch)}[/red] into {escape(result['into'])}: check_failed")
        else:
            verb = "Would publish" if dry_run else "Published"
            console().print(f"[green]{verb} {escape(branch)}[/green] into {escape(result['into'])}: "
                            f"{result['status']} {short(result['commit'])}".rstrip())
        emit(result["tables"], ["table", "action", "upserts", "deletes"], fmt, title="tables", empty="(no changes)")
        emit(result["checks"], ["check", "severity", "status", "failing_rows", "sample_keys", "error"], fmt,
             title="checks", styles=_STATUS_STYLES, empty="(no checks)")
    if refused:
        failed = [c["check"] for c in result["checks"] if c["status"] != "pass" and c["severity"] == "error"]
        click.echo(f"[CHECK_FAILED] the publish would be refused: {', '.join(failed)} failed.", err=True)
        raise click.exceptions.Exit(1)


@app.command()
@click.argument("repository")
@click.argument("check_or_query", metavar="CHECK")
@click.argument("good")
@click.argument("bad", required=False)
@format_option
def bisect(repository: str, check_or_query: str, good: str, bad: Optional[str], fmt: Format) -> None:
    """Finds the first commit between GOOD and BAD (default: the default branch) on the first-parent line where
    CHECK (a check's name, or a SQL query returning failing rows) fails, in O(log n) recorded runs.

    Example: versioned bisect shop positive_price v1
    """
    with state.session() as spark:
        found = _repo(spark, repository).bisect(check_or_query, good, bad)
    if fmt is not Format.table:
        emit([found], ["first_bad", "message", "last_good", "candidates", "runs"], fmt)
        return
    console().print(f"[bold]First failing commit[/bold]: [yellow]{short(found['first_bad'])}[/yellow] "
                    f"{escape(found['message'] or '')} (last good {short(found['last_good'])}; "
                    f"{len(found['runs'])} run(s) over {found['candidates']} commit(s))")


@app.group()
def check() -> None:
    """Checks of a repository: a SQL query that must return no rows, or a predicate every row of a table satisfies.

    \b
    Example:  versioned check add shop positive_price 'price >= 0' --table orders
              versioned check run shop dev
    """


@check.command("add")
@click.argument("repository")
@click.argument("name")
@click.argument("expression")
@click.option("--table", metavar="TABLE", help="Make EXPRESSION a predicate on TABLE (default: a SQL query).")
@click.option("--severity", type=click.Choice(["error", "warn"]), default="error", show_default=True,
              help="error blocks a gated merge; warn is recorded only.")
def check_add(repository: str, name: str, expression: str, table: Optional[str], severity: str) -> None:
    """Adds (or replaces) check NAME, validated on the default branch.

    Example: versioned check add shop no_orphans 'SELECT id FROM orders WHERE customer IS NULL'
    """
    with state.session() as spark:
        _repo(spark, repository).add_check(name, expression, table=table, severity=severity)
    console().print(f"[green]Added check {escape(name)}[/green]")


@check.command("list")
@click.argument("repository")
@format_option
def check_list(repository: str, fmt: Format) -> None:
    """The checks of REPOSITORY.

    Example: versioned check list shop --format json
    """
    with state.session() as spark:
        rows = rows_of(_repo(spark, repository).checks())
    emit(rows, CHECK_COLUMNS, fmt, title="checks", styles={"name": "bold"}, empty="(no checks)")


@check.command("remove")
@click.argument("repository")
@click.argument("name")
def check_remove(repository: str, name: str) -> None:
    """Removes check NAME (one a protection rule requires is refused).

    Example: versioned check remove shop positive_price
    """
    with state.session() as spark:
        _repo(spark, repository).remove_check(name)
    console().print(f"[green]Removed check {escape(name)}[/green]")


@check.command("run")
@click.argument("repository")
@click.argument("ref", required=False)
@click.option("--check", "checks", multiple=True, metavar="NAME", help="Run only this check (repeatable).")
@format_option
def check_run(repository: str, ref: Optional[str], checks: Tuple[str, ...], fmt: Format) -> None:
    """Runs the checks on REF (default: the default branch) and records each run; exits with 1 when a check of
    severity error fails.

    Example: versioned check run shop dev
    """
    with state.session() as spark:
        rows = rows_of(_repo(spark, repository).run_checks(ref, checks=list(checks)))
    for r in rows:
        r["image"] = short(r["image"]) if fmt is Format.table else r["image"]
    emit(rows, RUN_COLUMNS, fmt, title="check runs", styles=_STATUS_STYLES, empty="(no checks)")
    failed = [r["check"] for r in rows if r["status"] != "pass" and r["severity"] == "error"]
    if failed:
        click.echo(f"[CHECK_FAILED] {len(failed)} check(s) failed: {', '.join(failed)}.", err=True)
        raise click.exceptions.Exit(1)


@check.command("runs")
@click.argument("repository")
@click.option("--limit", "-n", type=int, default=20, show_default=True, help="Newest runs to show.")
@format_option
def check_runs(repository: str, limit: int, fmt: Format) -> None:
    """The recorded check runs of REPOSITORY, newest first (the metadata table $checks).

    Example: versioned check runs shop -n 5
    """
    from versioned._connect import catalog

    with state.session() as spark:
        df = spark.table(f"{catalog(spark, None)}.`{repository}`.`$checks`")
        rows = rows_of(df, limit)
    emit(rows, RUN_COLUMNS + ["who", "purpose", "ran"], fmt, title="check runs", styles=_STATUS_STYLES,
         empty="(no runs)")
