"""Commands that carry changes between lines of history: ``merge``, ``cherry-pick`` and ``revert`` (the rules
are in docs/MERGE.md).

A command that stops on conflicts commits nothing, prints the conflicts (a table, or in the JSON document)
and exits with 1, ``[MERGE_CONFLICT] N conflict(s); nothing was committed ...`` on stderr: for scripts a
conflict is a failure, in a dry run too (there it says the real command would stop). ``--ours TABLE`` /
``--theirs TABLE`` settle one table's conflicts with one side's rows (``_cli_conflicts``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

import click
from rich.markup import escape

from versioned._cli_base import (Format, app, author_option, console, emit, emit_one, format_option, message_option,
                                 rows_of, short, state, status)
from versioned._cli_conflicts import fill_take_counts, resolutions

__all__ = ["merge", "cherry_pick", "revert", "merge_record", "SUMMARY"]

#: The fields ``--format csv`` prints (one row); ``--format json`` adds ``tables`` and ``conflicts``.
SUMMARY = ["status", "commit", "fast_forward", "base", "conflict_count", "dry_run"]
TABLE_COLUMNS = ["table", "action", "upserts", "deletes"]
CONFLICT_COLUMNS = ["table", "key", "column", "base", "ours", "theirs", "kind"]
#: How a missing base/ours/theirs value reads in a conflict table, by conflict kind (otherwise NULL).
_ABSENT = {"delete": "(deleted)", "drop": "(dropped)"}


@dataclass(frozen=True)
class _Phrase:
    """How the status line names one operation: ``Merged dev into main`` / ``Would merge dev into main``."""

    done: str     # "Merged"
    verb: str     # "merge"
    what: str     # "dev into main"

    def line(self, dry_run: bool) -> str:
        """The status line's start.

        Example::

            >>> _Phrase("Merged", "merge", "dev into main").line(dry_run=True)
            'Would merge dev into main'
        """
        return f"Would {self.verb} {self.what}" if dry_run else f"{self.done} {self.what}"


def _branch(name: Optional[str]) -> str:
    return name or "the default branch"


def _key(text: Optional[str]) -> Any:
    """A conflict's key (JSON of the key columns) as an object; None for a whole-table conflict."""
    return json.loads(text) if text else None


def merge_record(result: Any, dry_run: bool) -> Dict[str, Any]:
    """What a :class:`~versioned.merging.MergeResult` says, as one JSON-ready document: the :data:`SUMMARY`
    fields, ``tables`` (table, action, upserts, deletes) and ``conflicts`` (table, key as an object,
    column, base, ours, theirs, kind).

    Example::

        merge_record(repo.merge("dev", dry_run=True), dry_run=True)["status"]   # 'fast_forward'
    """
    return {
        "status": result.status, "commit": result.commit, "fast_forward": result.fast_forward,
        "base": result.base, "conflict_count": result.conflict_count, "dry_run": dry_run,
        "tables": rows_of(result.tables),
        "conflicts": [dict(c, key=_key(c["key"])) for c in rows_of(result.conflicts)],
    }


def _conflict_row(c: Dict[str, Any]) -> Dict[str, Any]:
    """A conflict for people: the key as ``col=value``, a missing value as (deleted), (dropped) or NULL."""
    key = ", ".join(f"{k}={'NULL' if v is None else v}" for k, v in (c["key"] or {}).items())
    absent = _ABSENT.get(c["kind"], "NULL")
    sides = {s: absent if c[s] is None else c[s] for s in ("base", "ours", "theirs")}
    if c["kind"] == "insert" and c["base"] is None:
        sides["base"] = "(none)"
    return dict(c, key=key, **sides)


def _report(record: Dict[str, Any], phrase: _Phrase, fmt: Format) -> None:
    """Prints the outcome; on conflicts raises :class:`MergeConflict` (exit 1) after printing them."""
    if fmt is Format.json:
        emit_one(record, fmt)
    elif fmt is Format.csv:
        emit_one({k: record[k] for k in SUMMARY}, fmt)
    else:
        out = console()
        if record["status"] == "up_to_date":
            out.print("Already up to date")
        elif record["status"] != "conflicts":
            commit = f": [yellow]{short(record['commit'])}[/yellow]" if record["commit"] else ""
            out.print(f"[green]{escape(phrase.line(record['dry_run']))}[/green]{commit}"
                      + (" (fast-forward)" if record["fast_forward"] else ""))
        if record["tables"]:
            emit(record["tables"], TABLE_COLUMNS, fmt, title="tables")
        if record["conflicts"]:
            settled = record["status"] != "conflicts"  # by --strategy ours or theirs
            emit([_conflict_row(c) for c in record["conflicts"]], CONFLICT_COLUMNS, fmt,
                 title="settled conflicts" if settled else "conflicts",
                 styles={"table": "bold", "base": "dim", "ours": "yellow", "theirs": "cyan", "kind": "red"})
    if record["status"] == "conflicts":
        from versioned.errors import MergeConflict

        raise MergeConflict(
            f"{record['conflict_count']} conflict(s); nothing was committed"
            f"{' (dry run)' if record['dry_run'] else ''}. Run again with --strategy ours or --strategy theirs, "
            f"or settle tables one by one with --ours TABLE / --theirs TABLE (docs/MERGE.md).")


@dataclass(frozen=True)
class _Sides:
    """What ``--ours`` / ``--theirs`` settle: the tables of each side, the branch (None: the default) and the
    revision the change comes from."""

    ours: List[str]
    theirs: List[str]
    branch: Optional[str]
    source: str


def _run(repository: str, phrase: _Phrase, dry_run: bool, strategy: str, sides: _Sides, fmt: Format,
         call: Callable[[Any, bool, Any], Any]) -> None:
    """Runs ``call(repo, dry_run, resolutions)`` (a merge, cherry-pick or revert) and reports its result. With
    tables to settle from one side, a dry run finds their conflicts first and the call settles them with that
    side's rows."""
    import versioned

    if (sides.ours or sides.theirs) and strategy.lower() != "fail":
        raise click.UsageError("--ours/--theirs TABLE settle chosen tables; --strategy ours|theirs settles every "
                               "table: give one or the other.")
    both = set(sides.ours) & set(sides.theirs)
    if both:
        raise click.UsageError(f"{', '.join(sorted(both))}: given to both --ours and --theirs.")
    with state.session(light=False) as spark:
        repo = versioned.Repository(spark, repository)
        from versioned.errors import NotFoundError

        if sides.branch is None:  # name the branch the call acts on: the repository's default branch
            try:
                phrase = _Phrase(phrase.done, phrase.verb, phrase.what.replace(_branch(None), repo.default_branch))
            except NotFoundError:
                pass  # the call itself reports the missing repository
        with status(f"Running {phrase.verb} {phrase.what}{' (dry run)' if dry_run else ''}"):

            try:
                before: Optional[str] = repo.resolve(sides.branch)
            except NotFoundError:
                before = None
            settled = None
            if sides.ours or sides.theirs:
                probe = merge_record(call(repo, True, None), True)
                ours = sides.branch or repo.default_branch
                chosen = {**{t: ours for t in sides.ours}, **{t: sides.source for t in sides.theirs}}
                settled = resolutions(spark, repository, probe["conflicts"], chosen) or None
            record = merge_record(call(repo, dry_run, settled), dry_run)
            fill_take_counts(repo, record, before, record["commit"] if not dry_run else sides.source)
    _report(record, phrase, fmt)


def _commit_options(message_default: str, parent: bool = False) -> Callable[[Any], Any]:
    """The options merge, cherry-pick and revert share (``--parent`` for the last two), in help order."""
    options: List[Callable[[Any], Any]] = []
    if parent:
        options.append(click.option(
            "--parent", "-p", type=click.IntRange(min=1), metavar="N",
            help="For a merge commit: the parent the change is taken against (1 is the branch it merged into)."))
    options += [
        click.option("--strategy", "-s", type=click.Choice(["fail", "ours", "theirs"], case_sensitive=False),
                     default="fail", show_default=True,
                     help="fail: stop on conflicts, commit nothing (exit 1); ours / theirs: settle every conflict "
                          "from that side."),
        click.option("--ours", "ours_tables", multiple=True, metavar="TABLE",
                     help="Settle TABLE's conflicting rows with the branch's rows (repeatable)."),
        click.option("--theirs", "theirs_tables", multiple=True, metavar="TABLE",
                     help="Settle TABLE's conflicting rows with the incoming side's rows (repeatable)."),
        click.option("--dry-run", is_flag=True, help="Report the status, tables and conflicts; commit nothing."),
        message_option(message_default),
        author_option,
        format_option,
    ]

    def apply(fn: Any) -> Any:
        for option in reversed(options):
            fn = option(fn)
        return fn

    return apply


@app.command()
@click.argument("repository")
@click.argument("source")
@click.option("--into", metavar="BRANCH", help="Branch to merge into [default: the repository's default branch].")
@click.option("--ff", "fast_forward", type=click.Choice(["auto", "never", "only"], case_sensitive=False),
              default="auto", show_default=True,
              help="auto: just move the branch to SOURCE when it is an ancestor of SOURCE; never: always a "
                   "merge commit; only: fail ([MERGE_CONFLICT]) unless the branch can just move.")
@click.option("--allow-unrelated", is_flag=True, help="Merge histories without a common ancestor (empty base).")
@click.option("--squash", is_flag=True, help="One commit with one parent (the branch's head) holding SOURCE's net "
                                              "change, its message listing the squashed commits.")
@_commit_options("merge SOURCE into BRANCH")
def merge(repository: str, source: str, into: Optional[str], fast_forward: str, allow_unrelated: bool, squash: bool,
          strategy: str, ours_tables: Tuple[str, ...], theirs_tables: Tuple[str, ...], dry_run: bool,
          message: Optional[str], author: Optional[str], fmt: Format) -> None:
    """Three-way merge of SOURCE (any revision) into a branch: one commit whose parents are the branch's head
    and SOURCE, or a fast-forward; with --squash one commit whose only parent is the branch's head.

    Tables changed on one side take that side's version; tables changed on both merge row by row, by
    primary key. On conflicts nothing is committed: they are printed and the exit code is 1, unless
    --strategy settles them all from one side, or --ours/--theirs TABLE settle a table's from one side.

    Example: versioned merge shop dev --into main --theirs products
    """
    _run(repository, _Phrase("Merged", "merge", f"{source} into {_branch(into)}"), dry_run, strategy,
         _Sides(list(ours_tables), list(theirs_tables), into, source), fmt,
         lambda repo, dry, settled: repo.merge(source, into, strategy=strategy, fast_forward=fast_forward,
                                               dry_run=dry, message=message, author=author,
                                               allow_unrelated=allow_unrelated, resolutions=settled,
                                               squash=squash))


@app.command("cherry-pick")
@click.argument("repository")
@click.argument("commit")
@click.option("--onto", metavar="BRANCH", help="Branch to apply it to [default: the repository's default branch].")
@_commit_options("cherry-pick HASH: its message", parent=True)
def cherry_pick(repository: str, commit: str, onto: Optional[str], parent: Optional[int], strategy: str,
                ours_tables: Tuple[str, ...], theirs_tables: Tuple[str, ...], dry_run: bool, message: Optional[str],
                author: Optional[str], fmt: Format) -> None:
    """Applies the change COMMIT made (against its parent) onto a branch as one new commit.

    Conflicts with changes the branch made to the same cells stop it, as in merge (exit 1).

    Example: versioned cherry-pick shop dev~2 --onto main
    """
    _run(repository, _Phrase("Cherry-picked", "cherry-pick", f"{commit} onto {_branch(onto)}"), dry_run, strategy,
         _Sides(list(ours_tables), list(theirs_tables), onto, commit), fmt,
         lambda repo, dry, settled: repo.cherry_pick(commit, onto, parent=parent, strategy=strategy, dry_run=dry,
                                                     message=message, author=author, resolutions=settled))


@app.command()
@click.argument("repository")
@click.argument("commit")
@click.option("--on", "on", metavar="BRANCH", help="Branch to commit the inverse on [default: the default branch].")
@_commit_options("revert HASH: its message", parent=True)
def revert(repository: str, commit: str, on: Optional[str], parent: Optional[int], strategy: str,
           ours_tables: Tuple[str, ...], theirs_tables: Tuple[str, ...], dry_run: bool, message: Optional[str],
           author: Optional[str], fmt: Format) -> None:
    """Commits the inverse of the change COMMIT made, on a branch; history is kept.

    Later changes to the same cells are conflicts (exit 1). A merge commit needs --parent (1: the branch
    it merged into).

    Example: versioned revert shop main~1
    """
    # the incoming side of a revert is the commit's parent: the rows before the change
    _run(repository, _Phrase("Reverted", "revert", f"{commit} on {_branch(on)}"), dry_run, strategy,
         _Sides(list(ours_tables), list(theirs_tables), on, f"{commit}^{parent or 1}"), fmt,
         lambda repo, dry, settled: repo.revert(commit, on, parent=parent, strategy=strategy, dry_run=dry,
                                                message=message, author=author, resolutions=settled))
