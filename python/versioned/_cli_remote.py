"""Commands that exchange history with other warehouses: ``remote add|list|remove``, ``clone``, ``fetch``, ``download``,
``pull``, ``push`` and ``import-table`` (the rules are in docs/REMOTES.md).

The warehouse given by ``--warehouse`` / ``VERSIONED_WAREHOUSE`` is the local one; a remote is named by its
own warehouse URI and metastore JDBC URL (never credentials). ``clone``, ``fetch`` and ``push`` print a status
line and the refs they changed (ref, old, new, status); ``pull`` reports like ``merge`` (a conflict exits
with 1, ``[MERGE_CONFLICT]``). A push the remote refuses (``[NON_FAST_FORWARD]``, ``[IMMUTABLE_REF]``) or an
unknown remote (``[REMOTE_NOT_FOUND]``) exits with 1 and one line on stderr, changing nothing.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional

import click
from rich.markup import escape

from versioned._cli_base import (Format, app, author_option, console, emit, emit_one, format_option, message_option,
                                 rows_of, short, state, status)
from versioned._cli_merge import _Phrase, _report, merge_record
from versioned._cli_reader import reading

__all__ = ["remote", "remote_add", "remote_list", "remote_remove", "clone", "fetch", "download", "pull", "push", "import_table",
           "fetch_record", "push_record", "FETCH_SUMMARY", "PUSH_SUMMARY"]

#: The fields ``--format csv`` prints for clone and fetch (one row); ``--format json`` adds ``refs``.
FETCH_SUMMARY = ["repository", "remote", "images", "objects", "downloaded"]
#: The fields ``--format csv`` prints for push (one row); ``--format json`` adds ``tags`` and ``refs``.
PUSH_SUMMARY = ["repository", "remote", "branch", "status", "old", "head", "images", "objects", "uploaded"]
REF_COLUMNS = ["ref", "old", "new", "status"]
REMOTE_COLUMNS = ["name", "warehouse", "metastore_url", "repository"]
_REF_STYLES = {"ref": "bold", "old": "dim", "new": "yellow", "status": "cyan"}


def _repo(spark: Any, name: str) -> Any:
    import versioned

    return versioned.Repository(spark, name)


def fetch_record(result: Any) -> Dict[str, Any]:
    """What a :class:`~versioned.FetchResult` (of a clone or fetch) says, as one JSON-ready document: the
    :data:`FETCH_SUMMARY` fields and ``refs`` (ref, old, new, status; full hashes).

    Example::

        fetch_record(repo.fetch())["refs"]   # [{'ref': 'remotes/origin/main', 'old': ..., 'new': ..., ...}]
    """
    return {
        "repository": result.repository, "remote": result.remote, "images": result.images,
        "objects": result.objects, "downloaded": result.downloaded,
        "refs": [dataclasses.asdict(u) for u in result.refs],
    }


def push_record(result: Any, tag_images: Optional[Dict[str, Optional[str]]] = None) -> Dict[str, Any]:
    """What a :class:`~versioned.PushResult` says, as one JSON-ready document: the :data:`PUSH_SUMMARY`
    fields, ``tags`` (the tags created on the remote) and ``refs``, the remote's refs that changed (ref, old,
    new, status), as for fetch. ``tag_images`` gives each created tag's image (None: not shown).

    Example::

        push_record(repo.push())["status"]   # 'fast_forward'
    """
    refs: List[Dict[str, Any]] = []
    if result.status != "up_to_date":
        refs.append({"ref": result.branch, "old": result.old, "new": result.head, "status": result.status})
    for tag in result.tags:
        refs.append({"ref": f"tags/{tag}", "old": None, "new": (tag_images or {}).get(tag), "status": "new"})
    record = {k: getattr(result, k) for k in PUSH_SUMMARY}
    record.update(tags=list(result.tags), refs=refs)
    return record


def _ref_rows(refs: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Ref updates for people: short hashes, ``(none)`` for a ref that did not or no longer exists."""
    return [dict(u, old=short(u["old"]) or "(none)", new=short(u["new"]) or "(none)") for u in refs]


def _emit_record(record: Dict[str, Any], summary: List[str], fmt: Format, line: str) -> None:
    """Prints a fetch or push record: the whole document (json), the summary row (csv), or for people the
    status ``line`` (Rich markup) and the table of ref updates."""
    if fmt is Format.json:
        emit_one(record, fmt)
        return
    if fmt is Format.csv:
        emit_one({k: record[k] for k in summary}, fmt)
        return
    console().print(line)
    if record["refs"]:
        emit(_ref_rows(record["refs"]), REF_COLUMNS, fmt, title="refs", styles=_REF_STYLES)


def _fetch_line(verb: str, record: Dict[str, Any]) -> str:
    """``Fetched origin into r: 1 image(s), 2 object(s), 0 downloaded`` (markup)."""
    return (f"[green]{escape(verb)}[/green]: {record['images']} image(s), {record['objects']} object(s), "
            f"{record['downloaded']} downloaded")


def _download_option(fn: Any) -> Any:
    return click.option("--download", is_flag=True,
                        help="Copy the objects into this warehouse now [default: read them in place at the "
                             "remote when a query needs them].")(fn)


@app.group()
def remote() -> None:
    """Remotes of a repository: other warehouses it fetches from and pushes to.

    \b
    Example:  versioned remote add shop origin --warehouse /data/team --metastore-url jdbc:sqlite:/data/team/m.db
              versioned remote list shop
    """


@remote.command("add")
@click.argument("repository")
@click.argument("name")
@click.option("--warehouse", "remote_warehouse", required=True, metavar="URI",
              help="The remote's warehouse directory or URI (no credentials).")
@click.option("--metastore-url", "remote_metastore_url", required=True, metavar="JDBC_URL",
              help="The remote's metastore JDBC URL (no password: see docs/REMOTES.md).")
@click.option("--repository", "remote_repository", metavar="NAME",
              help="The repository there [default: REPOSITORY].")
def remote_add(repository: str, name: str, remote_warehouse: str, remote_metastore_url: str,
               remote_repository: Optional[str]) -> None:
    """Adds remote NAME to REPOSITORY: another warehouse and a repository there. Nothing is fetched.

    Example: versioned remote add shop backup --warehouse /mnt/wh --metastore-url jdbc:sqlite:/mnt/wh/metastore.db
    """
    with state.session() as spark:
        _repo(spark, repository).add_remote(name, remote_warehouse, remote_metastore_url,
                                            repository=remote_repository)
    console().print(f"[green]Added remote {escape(name)}[/green]: {escape(remote_warehouse)} "
                    f"(repository {escape(remote_repository or repository)})")


@remote.command("list")
@click.argument("repository")
@format_option
def remote_list(repository: str, fmt: Format) -> None:
    """The remotes of REPOSITORY: name, warehouse, metastore_url, repository.

    Example: versioned remote list shop --format json
    """
    with reading() as wh:  # no JVM: the metastore's vc_upstreams rows (versioned.reader)
        rows = [{"name": name, **{c: url.get(c) for c in REMOTE_COLUMNS[1:]}}
                for name, url in wh.repository(repository).remotes().items()]
    emit(rows, REMOTE_COLUMNS, fmt, title="remotes", styles={"name": "bold"}, empty="(no remotes)")


app.add_command(remote_list, "remotes")  # the same listing: versioned remotes shop


@remote.command("remove")
@click.argument("repository")
@click.argument("name")
def remote_remove(repository: str, name: str) -> None:
    """Removes remote NAME and the refs tracking it; local branches and their history stay.

    Example: versioned remote remove shop backup
    """
    with state.session() as spark:
        _repo(spark, repository).remove_remote(name)
    console().print(f"[green]Removed remote {escape(name)}[/green]")


@app.command()
@click.argument("remote_warehouse", metavar="WAREHOUSE")
@click.argument("remote_metastore_url", metavar="METASTORE_URL")
@click.argument("repository")
@click.option("--into", metavar="NAME", help="Name of the clone in this warehouse [default: REPOSITORY].")
@click.option("--remote", "remote_name", default="origin", show_default=True, metavar="NAME",
              help="Name the remote is recorded under.")
@_download_option
@format_option
def clone(remote_warehouse: str, remote_metastore_url: str, repository: str, into: Optional[str], remote_name: str,
          download: bool, fmt: Format) -> None:
    """Clones REPOSITORY of another warehouse (WAREHOUSE, METASTORE_URL) into this one: its whole history with
    the same hashes, its refs as remotes/origin/*, and a local default branch. No data is copied unless
    --download.

    Example: versioned -w ./mine clone /data/team jdbc:sqlite:/data/team/metastore.db shop
    """
    from versioned.remotes import clone_result

    with state.session(light=not download) as spark:
        with status(f"Cloning {repository}"):
            result = clone_result(spark, repository, warehouse=remote_warehouse, metastore_url=remote_metastore_url,
                                  into=into, remote=remote_name, download="all" if download else None)
    record = fetch_record(result)
    line = _fetch_line(f"Cloned {repository} into {record['repository']}", record)
    _emit_record(record, FETCH_SUMMARY, fmt, line)


@app.command()
@click.argument("repository")
@click.argument("remote_name", metavar="[REMOTE]", default="origin")
@_download_option
@format_option
def fetch(repository: str, remote_name: str, download: bool, fmt: Format) -> None:
    """Brings the commits REMOTE (default origin) has that REPOSITORY lacks and moves remotes/REMOTE/*;
    never moves a local branch.

    Example: versioned fetch shop && versioned diff shop.orders main origin/main --stat
    """
    with state.session(light=not download) as spark:
        with status(f"Fetching {remote_name}"):
            result = _repo(spark, repository).fetch(remote_name, download="all" if download else None)
    record = fetch_record(result)
    line = _fetch_line(f"Fetched {remote_name} into {repository}", record)
    if not record["refs"] and not record["images"]:
        line = f"Already up to date with {escape(remote_name)}"
    _emit_record(record, FETCH_SUMMARY, fmt, line)


@app.command()
@click.argument("repository")
@click.argument("ref", metavar="[REF]", required=False)
@format_option
def download(repository: str, ref: Optional[str], fmt: Format) -> None:
    """Copies into this warehouse the objects of REF's tables (default: of every version) that a lazy clone or
    fetch left at a remote, verified, and forgets their places there; refs do not move.

    Example: versioned download shop v3 && versioned download shop
    """
    with state.session(light=False) as spark:
        with status(f"Downloading {repository}" + (f" at {ref}" if ref else "")):
            result = _repo(spark, repository).download(ref)
    record = dataclasses.asdict(result)
    if fmt is not Format.table:
        emit_one(record, fmt)
        return
    at = f" at {result.image[:12]}" if result.image else " (every version)"
    console().print(f"[green]Downloaded {escape(repository)}{at}[/green]: {result.downloaded} of "
                    f"{result.objects} object(s) held at remotes copied")


@app.command()
@click.argument("repository")
@click.argument("remote_name", metavar="[REMOTE]", default="origin")
@click.option("--branch", "-b", metavar="BRANCH", help="Branch to pull [default: the default branch].")
@click.option("--strategy", "-s", type=click.Choice(["fail", "ours", "theirs"], case_sensitive=False),
              default="fail", show_default=True,
              help="fail: stop on conflicts, commit nothing (exit 1); ours / theirs: settle every conflict from "
                   "that side.")
@click.option("--ff", "fast_forward", type=click.Choice(["auto", "never", "only"], case_sensitive=False),
              default="auto", show_default=True, help="As for merge.")
@message_option("merge REMOTE/BRANCH")
@author_option
@format_option
def pull(repository: str, remote_name: str, branch: Optional[str], strategy: str, fast_forward: str,
         message: Optional[str], author: Optional[str], fmt: Format) -> None:
    """Fetches REMOTE (default origin), then merges its BRANCH into the local branch of that name: a
    fast-forward when the local branch has not moved, else a merge commit. On conflicts nothing is
    committed: they are printed and the exit code is 1.

    Example: versioned pull shop origin --branch main
    """
    what = f"{remote_name}/{branch} into {branch}" if branch else f"{remote_name} into the default branch"
    phrase = _Phrase("Pulled", "pull", what)
    with state.session(light=False) as spark:
        with status(f"Pulling {what}"):
            result = _repo(spark, repository).pull(remote_name, branch, strategy=strategy.lower(),
                                                   fast_forward=fast_forward.lower(), message=message,
                                                   author=author)
            record = merge_record(result, dry_run=False)
    _report(record, phrase, fmt)


@app.command()
@click.argument("repository")
@click.argument("remote_name", metavar="[REMOTE]", default="origin")
@click.option("--branch", "-b", metavar="BRANCH", help="Branch to push [default: the default branch].")
@click.option("--force", is_flag=True, help="Move the remote branch even if it has commits this one lacks.")
@click.option("--tags/--no-tags", default=True, show_default=True,
              help="Create local tags on the remote whose images it then has.")
@format_option
def push(repository: str, remote_name: str, branch: Optional[str], force: bool, tags: bool, fmt: Format) -> None:
    """Uploads what REMOTE (default origin) lacks, then moves its BRANCH by compare-and-swap. A remote
    branch with commits this one lacks refuses it ([NON_FAST_FORWARD], exit 1, nothing moved) unless --force.

    Example: versioned push shop origin --branch main
    """
    with state.session() as spark:
        repo = _repo(spark, repository)
        with status(f"Pushing to {remote_name}"):
            result = repo.push(remote_name, branch, force=force, tags=tags)
            tag_images = {t: repo.resolve(t) for t in result.tags}
    record = push_record(result, tag_images)
    if record["status"] == "up_to_date":
        line = f"Everything up to date: {escape(remote_name)}/{escape(record['branch'])} is " \
               f"[yellow]{short(record['head'])}[/yellow]"
    else:
        line = (f"[green]Pushed {escape(record['branch'])} to {escape(remote_name)}[/green]: "
                f"{record['images']} image(s), {record['uploaded']} object(s) uploaded")
    _emit_record(record, PUSH_SUMMARY, fmt, line)


@app.command("import-table")
@click.argument("repository")
@click.argument("from_repository")
@click.argument("table")
@click.option("--ref", metavar="REF", help="Revision of FROM_REPOSITORY [default: its default branch].")
@click.option("--as", "as_table", metavar="NAME", help="Name of the table in REPOSITORY [default: TABLE].")
@click.option("--branch", "-b", metavar="BRANCH", help="Branch to commit on [default: the default branch].")
@click.option("--remote", "remote_name", metavar="NAME",
              help="FROM_REPOSITORY is in this remote's warehouse (its objects are read in place there).")
@message_option("import FROM_REPOSITORY.TABLE")
@author_option
@format_option
def import_table(repository: str, from_repository: str, table: str, ref: Optional[str], as_table: Optional[str],
                 branch: Optional[str], remote_name: Optional[str], message: Optional[str], author: Optional[str],
                 fmt: Format) -> None:
    """One commit on a branch of REPOSITORY that adds TABLE of FROM_REPOSITORY, without copying data.

    Example: versioned import-table shop reference countries --ref v3 --as places
    """
    with state.session() as spark:
        with status(f"Importing {from_repository}.{table}"):
            commit = _repo(spark, repository).import_table(from_repository, table, ref, as_table, branch=branch,
                                                           remote=remote_name, message=message, author=author)
    record = {"commit": commit, "repository": repository, "table": as_table or table, "branch": branch,
              "from_repository": from_repository, "from_table": table, "ref": ref, "remote": remote_name}
    if fmt is not Format.table:
        emit_one(record, fmt)
        return
    source = f"{from_repository}.{table}" + (f"@{ref}" if ref else "") + (f" of {remote_name}" if remote_name else "")
    console().print(f"[green]Imported {escape(source)} as {escape(repository)}.{escape(as_table or table)}[/green]: "
                    f"[yellow]{short(commit)}[/yellow]")
