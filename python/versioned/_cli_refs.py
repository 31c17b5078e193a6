"""Commands about the warehouse, refs and history: ``init``, ``log``, ``show``, ``branch``, ``reset``, ``tag``,
``lock``, ``gc``, ``verify`` and ``reflog``. A ref left out is the repository's default branch."""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import click
from rich.console import Console

from versioned._cli_base import (DEFAULT_WAREHOUSE, METASTORE_CONF, WAREHOUSE_CONF, CommandError, Format, app,
                                 console, emit, emit_one, format_option, rows_of, short, state, status)
from versioned._cli_graph import graph_lines, topo_order
from versioned._cli_reader import log_row, reading, ref_rows
from versioned._cli_text import iso_utc

__all__ = ["init", "log", "show", "branch", "reset", "tag", "lock", "gc", "verify", "reflog"]


def _repo(spark: Any, name: str) -> Any:
    import versioned

    return versioned.Repository(spark, name)


@app.command()
@format_option
def init(fmt: Format) -> None:
    """Checks the warehouse and metastore and lists the repositories; creates nothing.

    A repository is created by its first "versioned import".

    Example: versioned -w /data/wh init
    """
    import versioned

    with state.session() as spark:
        warehouse = spark.conf.get(WAREHOUSE_CONF, None) or DEFAULT_WAREHOUSE
        metastore = spark.conf.get(METASTORE_CONF, None) or "SQLite in the warehouse"
        names = versioned.repositories(spark)
    if "://" not in warehouse and not warehouse.startswith("file:"):
        warehouse = os.path.abspath(warehouse)
    info = {"warehouse": warehouse, "metastore": metastore, "repositories": names}
    if fmt is not Format.table:
        emit_one(info, fmt)
        return
    out = console()
    out.print(f"warehouse    [bold]{warehouse}[/bold]")
    out.print(f"metastore    {metastore}")
    out.print(f"repositories {', '.join(names) if names else '[dim](none yet: versioned import creates one)[/dim]'}")


def _decorations(repo: Any) -> Dict[str, List[str]]:
    """image hash -> ref labels (``main``, ``tag: v1``, ``lock: ns:name``), from a reader repository."""
    out: Dict[str, List[str]] = {}
    for prefix, refs in (("", repo.branches()), ("tag: ", repo.tags()), ("lock: ", repo.locks())):
        for r in refs:
            out.setdefault(r.image, []).append(prefix + r.name)
    return out


@app.command()
@click.argument("repository")
@click.argument("ref", required=False)
@click.option("--graph", is_flag=True, help="Draw the commit graph from parents.")
@click.option("--oneline", is_flag=True, help="One line per commit.")
@click.option("--all", "all_refs", is_flag=True, help="History of every branch, tag and lock.")
@click.option("--limit", "-n", type=click.IntRange(min=1), help="At most this many commits.")
@click.option("--pager/--no-pager", default=True, show_default=True,
              help="Page the history (PAGER, else less) when stdout is a terminal; never when piped.")
@format_option
def log(repository: str, ref: Optional[str], graph: bool, oneline: bool, all_refs: bool, limit: Optional[int],
        pager: bool, fmt: Format) -> None:
    """History reachable from REF (default: the default branch), newest first, with branches, tags and locks
    marked.

    REF is a branch, tag, lock (ns:name), hash prefix, optionally with ~N or ^N.

    Example: versioned log shop --all --graph --oneline
    """
    with reading() as wh:  # no JVM: the metastore is read directly (versioned.reader)
        repo = wh.repository(repository)
        decor = _decorations(repo)
        starts: List[Optional[str]] = [*sorted(set(decor) | ({ref} if ref else set()))] if all_refs else [ref]
        commits: Dict[str, Dict[str, Any]] = {}
        for start in starts:
            for c in repo.log(start, limit=limit):
                commits.setdefault(c.hash, log_row(c))
    order = topo_order([(h, c["parents"], c["created"].timestamp()) for h, c in commits.items()])
    if limit is not None:
        order = order[:limit]
    rows = [commits[h] for h in order]
    for r in rows:
        r["refs"] = decor.get(r["hash"], [])
    if fmt is not Format.table:
        emit(rows, ["hash", "parents", "author", "created", "message", "tables_changed", "refs", "committer", "app_id",
                    "client"], fmt)
        return
    with _paged(pager) as out:
        _print_log(out, rows, commits, order, graph, oneline)


def _stdout_is_tty() -> bool:
    return sys.stdout.isatty()


@contextlib.contextmanager
def _paged(pager: bool) -> Iterator[Console]:
    """A console for the output of ``log``: when stdout is a terminal (and ``pager``), what is printed is
    shown through ``click.echo_via_pager`` (``PAGER``, else less) once the block ends; otherwise it is the
    plain stdout console.

    Example::

        with _paged(True) as out:
            out.print("commit 3f1c2d4e5f60")
    """
    if not (pager and _stdout_is_tty()):
        yield console()
        return
    buffer = io.StringIO()
    width = console().width
    yield Console(file=buffer, no_color=not state.color, force_terminal=state.color, highlight=False, soft_wrap=True,
                  width=width)
    click.echo_via_pager(buffer.getvalue(), color=state.color)


def _print_log(out: Console, rows: List[Dict[str, Any]], commits: Dict[str, Dict[str, Any]], order: List[str],
               graph: bool, oneline: bool) -> None:
    """Prints the history for people: git's long form, ``--oneline`` or ``--graph``."""

    def head(r: Dict[str, Any]) -> str:
        refs = f" [bold cyan]({', '.join(r['refs'])})[/bold cyan]" if r["refs"] else ""
        return f"[yellow]{short(r['hash'])}[/yellow]{refs}"

    if graph:
        shown = {h for h in order}
        lines = graph_lines([(h, [p for p in commits[h]["parents"] if p in shown]) for h in order])
        for g, h in lines:
            if h is None:
                out.print(g, markup=False)
                continue
            r = commits[h]
            text = f"{head(r)} {_esc(_subject(r['message']))}"
            if not oneline:
                text += f" [dim]({_esc(r['author'])}, {iso_utc(r['created'])})[/dim]"
            out.print(f"{g} {text}")
        return
    for r in rows:
        if oneline:
            out.print(f"{head(r)} {_esc(_subject(r['message']))}")
            continue
        out.print(f"commit {head(r)}")
        if len(r["parents"]) > 1:
            out.print(f"Merge:  {' '.join(short(p) for p in r['parents'])}")
        out.print(f"Author: {_esc(r['author'])}")
        if r["committer"] is not None:
            out.print(f"Committer: {_esc(r['committer'])} ({_esc(r['client'] or '')}, {_esc(r['app_id'] or '')})")
        out.print(f"Date:   {iso_utc(r['created'])}")
        out.print(f"Tables: {', '.join(r['tables_changed']) or '-'}\n")
        body = "\n".join(f"    {line}" if line else "" for line in (r["message"] or "").splitlines())
        out.print(f"{_esc(body)}\n")


def _subject(message: Optional[str]) -> str:
    """The first line of a commit message, with a stream commit's batch id from its trailer.

    >>> _subject("append to t\\nversioned-stream: query=q1 batch=7 table=t branch=main")
    'append to t (batch 7)'
    >>> _subject("fix")
    'fix'
    """
    lines = (message or "").splitlines()
    subject = lines[0] if lines else ""
    for line in lines[1:]:
        found = re.match(r"versioned-stream: .*\bbatch=(\d+)", line)
        if found:
            return f"{subject} (batch {found.group(1)})"
    return subject


def _esc(text: Optional[str]) -> str:
    from rich.markup import escape

    return escape(text or "")


@app.command()
@click.argument("repository")
@click.argument("ref", required=False)
@format_option
def show(repository: str, ref: Optional[str], fmt: Format) -> None:
    """Shows one commit (default: the head of the default branch): hash, parents, author, message and its
    tables (key, schema, objects).

    Example: versioned show shop v1 --format json
    """
    with reading() as wh:
        info = wh.repository(repository).show(ref)
    if fmt is Format.json:
        emit_one(info, fmt)
        return
    tables = [{
        "table": t["name"], "changed": "yes" if t.get("changed") else "",
        "primary_key": ",".join(t.get("primary_key") or []), "schema": t.get("schema", ""),
        "fragments": len(t.get("fragments", [])), "objects": t.get("objects"), "bytes": t.get("bytes"),
    } for t in info.get("tables", [])]
    if fmt is Format.csv:
        emit(tables, list(tables[0]) if tables else ["table"], fmt)
        return
    out = console()
    out.print(f"commit [yellow]{short(info['image'])}[/yellow]")
    if info.get("parents"):
        out.print(f"Parents: {' '.join(short(p) for p in info['parents'])}")
    out.print(f"Author:  {_esc(info.get('author'))}")
    out.print(f"Date:    {info.get('created')}")
    out.print(f"\n    {_esc(info.get('message'))}\n")
    if info.get("dropped_tables"):
        out.print(f"dropped: {', '.join(info['dropped_tables'])}")
    emit(tables, ["table", "changed", "primary_key", "schema", "fragments", "objects", "bytes"], fmt,
         styles={"changed": "green"}, empty="(no tables)")


def _list_refs(rows: List[Dict[str, Any]], fmt: Format, title: str, default: Optional[str] = None) -> None:
    """Lists refs; for branches (``default`` given) the default one is marked: ``*`` before its name for people,
    a ``default`` column (true/false) for scripts."""
    columns = ["name", "image", "created"]
    if default is not None:
        rows = [dict(r, default=r["name"] == default) for r in rows]
        columns.append("default")
    if fmt is Format.table:
        rows = [dict(r, image=short(r["image"])) for r in rows]
        if default is not None:
            rows = [dict(r, name=("* " if r["default"] else "  ") + r["name"]) for r in rows]
            columns.remove("default")
    emit(rows, columns, fmt, title=title, styles={"image": "yellow"})


def _ref_command(repository: str, kind: str, name: Optional[str], removed: Optional[str], remove_flag: str,
                 removed_verb: str, fmt: Format, *, create: Callable[[Any, str], str],
                 created: Callable[[str, str], str],
                 remove: Callable[[Any, str], None], namespace: Optional[str] = None) -> None:
    """The flow the branch, tag and lock commands share: remove ``removed``, create ``name``, or list.

    Example::

        _ref_command("shop", "tag", "v1", None, "--delete", "Deleted", Format.table,
                     create=lambda repo, n: repo.create_tag(n), created=lambda n, h: f"{n} at {h}",
                     remove=lambda repo, n: repo.delete_tag(n))
    """
    if name and removed:
        raise click.UsageError(f"give a {kind} to create or {remove_flag}, not both.")
    if not name and not removed:  # a listing only reads: no JVM (versioned.reader)
        with reading() as wh:
            reader = wh.repository(repository)
            refs = {"branch": reader.branches, "tag": reader.tags, "lock": reader.locks}[kind]()
            if namespace is not None:
                refs = [r for r in refs if r.name.split(":", 1)[0] == namespace]
            _list_refs(ref_rows(refs), fmt, f"{kind}es" if kind == "branch" else f"{kind}s",
                       default=reader.default_branch if kind == "branch" else None)
        return
    with state.session() as spark:
        repo = _repo(spark, repository)
        if removed:
            remove(repo, removed)
            console().print(f"{removed_verb} {kind} [bold]{removed}[/bold]")
        elif name:
            console().print(created(name, short(create(repo, name))))


@app.command()
@click.argument("repository")
@click.argument("name", required=False)
@click.argument("from_ref", metavar="[FROM]", required=False)
@click.option("--delete", "-d", metavar="NAME", help="Delete this branch.")
@click.option("--move", "-m", nargs=2, metavar="OLD NEW", help="Rename branch OLD to NEW (the default moves along).")
@click.option("--set-default", metavar="NAME", help="Make branch NAME the repository's default branch.")
@format_option
def branch(repository: str, name: Optional[str], from_ref: Optional[str], delete: Optional[str],
           move: Optional[Tuple[str, str]], set_default: Optional[str], fmt: Format) -> None:
    """Lists branches (* marks the default branch), creates branch NAME at FROM (default: the head of the
    default branch), deletes one with -d, renames one with -m OLD NEW, or makes one the default with
    --set-default.

    Example: versioned branch shop dev main~1
    """
    if move or set_default:
        if sum(bool(x) for x in (name, delete, move, set_default)) > 1:
            raise click.UsageError("give one of NAME, --delete, --move and --set-default.")
        with state.session() as spark:
            repo = _repo(spark, repository)
            if move:
                repo.rename_branch(*move)
                console().print(f"Renamed branch [bold]{_esc(move[0])}[/bold] to [bold]{_esc(move[1])}[/bold]")
            else:
                head = repo.set_default_branch(str(set_default))
                console().print(f"Default branch of {_esc(repository)} is now [bold]{_esc(set_default)}[/bold] "
                                f"at [yellow]{short(head)}[/yellow]")
        return
    _ref_command(repository, "branch", name, delete, "--delete", "Deleted", fmt,
                 create=lambda repo, n: repo.create_branch(n, from_ref),
                 created=lambda n, h: f"Created branch [bold]{n}[/bold] at [yellow]{h}[/yellow]",
                 remove=lambda repo, n: repo.delete_branch(n))


@app.command()
@click.argument("repository")
@click.argument("branch_name", metavar="BRANCH")
@click.argument("ref")
@format_option
def reset(repository: str, branch_name: str, ref: str, fmt: Format) -> None:
    """Moves BRANCH to the commit REF names (history is kept: the commits it leaves stay reachable by hash,
    other refs and the log of other branches).

    Example: versioned reset shop main main~1
    """
    with state.session() as spark:
        repo = _repo(spark, repository)
        old = repo.resolve(branch_name)
        head = repo.reset(branch_name, ref)
    if fmt is not Format.table:
        emit_one({"repository": repository, "branch": branch_name, "old": old, "head": head}, fmt)
        return
    console().print(f"Reset [bold]{_esc(branch_name)}[/bold] from [yellow]{short(old)}[/yellow] to "
                    f"[yellow]{short(head)}[/yellow]")


@app.command()
@click.argument("repository")
@click.argument("name", required=False)
@click.argument("ref", metavar="[REF]", required=False)
@click.option("--delete", "-d", metavar="NAME", help="Delete this tag.")
@format_option
def tag(repository: str, name: Optional[str], ref: Optional[str], delete: Optional[str], fmt: Format) -> None:
    """Lists tags, tags REF (default: the head of the default branch) as NAME (tags never move), or deletes one
    with -d.

    Example: versioned tag shop v1 main
    """
    _ref_command(repository, "tag", name, delete, "--delete", "Deleted", fmt,
                 create=lambda repo, n: repo.create_tag(n, ref),
                 created=lambda n, h: f"Tagged [yellow]{h}[/yellow] as [bold]{n}[/bold]",
                 remove=lambda repo, n: repo.delete_tag(n))


def _lock_name(text: str) -> List[str]:
    ns, colon, name = text.partition(":")
    if not colon or not ns or not name:
        raise click.BadParameter(f"{text!r} is not NAMESPACE:NAME.")
    return [ns, name]


@app.command()
@click.argument("repository")
@click.argument("name", metavar="[NS:NAME]", required=False)
@click.argument("ref", metavar="[REF]", required=False)
@click.option("--release", metavar="NS:NAME", help="Release this lock.")
@click.option("--namespace", help="List only this namespace's locks.")
@format_option
def lock(repository: str, name: Optional[str], ref: Optional[str], release: Optional[str], namespace: Optional[str],
         fmt: Format) -> None:
    """Lists locks, pins REF (default: the head of the default branch) under NS:NAME (locks never move), or
    releases one.

    Example: versioned lock shop reports:q3 main
    """
    _ref_command(repository, "lock", name, release, "--release", "Released", fmt,
                 create=lambda repo, n: repo.create_lock(*_lock_name(n), ref),
                 created=lambda n, h: f"Locked [yellow]{h}[/yellow] as [bold]{n}[/bold]",
                 remove=lambda repo, n: repo.release_lock(*_lock_name(n)), namespace=namespace)


@app.command()
@click.argument("repository", required=False)
@click.option("--older-than", type=click.FloatRange(min=0), metavar="SECONDS",
              help="Keep objects used within this many seconds [default: a day].")
@click.option("--force", is_flag=True, help="Allow a retention below an hour.")
@click.option("--dry-run", is_flag=True, help="List what would be deleted; delete nothing.")
@format_option
def gc(repository: Optional[str], older_than: Optional[float], force: bool, dry_run: bool, fmt: Format) -> None:
    """Deletes objects no version needs, of REPOSITORY or (without it) of the whole warehouse.

    Example: versioned gc shop --dry-run
    """
    import versioned

    with state.session(light=False) as spark:
        with status("Collecting garbage"):
            if repository:
                df = _repo(spark, repository).gc(older_than, force=force, dry_run=dry_run)
            else:
                df = versioned.collect_garbage(spark, older_than_seconds=older_than, force=force, dry_run=dry_run)
            rows = rows_of(df)
    emit(rows, ["kind", "name", "path", "reason"], fmt, title="would delete" if dry_run else "deleted",
         empty="nothing to delete")
    if fmt is Format.table and rows:
        console().print(f"{len(rows)} item(s) {'would be ' if dry_run else ''}deleted")


@app.command()
@click.argument("repository")
@click.argument("refs", nargs=-1)
@format_option
def verify(repository: str, refs: Tuple[str, ...], fmt: Format) -> None:
    """Checks the objects REFS (default: every branch, tag and lock) need against their checksums.

    Exits with 1 ([VERIFY_FAILED]) if an object is missing or corrupt.

    Example: versioned verify shop main v1
    """
    with reading() as wh:  # no JVM: versioned.reader reads every object whole against its checksum
        with status(f"Verifying {repository}"):
            rows = wh.repository(repository).verify(list(refs) or None)
    bad = [r for r in rows if r["status"] != "ok"]
    if fmt is Format.table:
        show_rows = [dict(r, object=short(r["object"])) for r in (bad or [])]
        if bad:
            emit(show_rows, ["object", "kind", "status", "detail", "needed_by"], fmt, styles={"status": "red"})
        console().print(f"{len(rows) - len(bad)} object(s) ok, {len(bad)} missing or corrupt"
                        if bad else f"[green]{len(rows)} object(s) ok[/green]")
    else:
        emit(rows, ["object", "kind", "status", "detail", "needed_by"], fmt)
    if bad:
        raise CommandError(f"{len(bad)} object(s) missing or corrupt", "VERIFY_FAILED")


@app.command()
@click.argument("repository")
@click.argument("ref", required=False)
@click.option("-n", "--limit", type=click.IntRange(min=1), metavar="N", help="Show the newest N entries only.")
@format_option
def reflog(repository: str, ref: Optional[str], limit: Optional[int], fmt: Format) -> None:
    """Lists every ref movement of REPOSITORY (of REF only, when given), newest first: who moved what, when,
    through which client. An entry's id (reflog@{N}) restores a deleted branch: versioned branch REPO NAME
    'reflog@{N}'. ``versioned verify`` checks the entries' hash chain.

    Example: versioned reflog shop main -n 10
    """
    with state.session() as spark:
        rows = rows_of(_repo(spark, repository).reflog(ref, limit=limit))
    if fmt is Format.table:
        rows = [dict(r, old_image=short(r["old_image"]) if r["old_image"] else "-",
                     new_image=short(r["new_image"]) if r["new_image"] else "-", at=iso_utc(r["at"])) for r in rows]
    emit(rows, ["id", "ref", "operation", "old_image", "new_image", "who", "client", "at", "detail"]
         + ([] if fmt is Format.table else ["seq", "app_id", "prev_hash", "entry_hash"]), fmt, title="reflog",
         empty="no ref movements")
