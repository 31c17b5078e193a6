"""Commands about table data: ``import``, ``export``, ``cat``, ``diff`` and ``sql``."""

from __future__ import annotations

import datetime as dt
import enum
import os
import shutil
from collections import Counter
from decimal import Decimal
from typing import Any, Dict, List, Optional, Tuple

import click
from rich.table import Table

from versioned._cli_base import (CommandError, Format, app, author_option, console, emit, emit_one, format_option,
                                 jsonable, message_option, print_table, rows_of, short, split_table, state, status)
from versioned._cli_reader import reader_diff, reading

__all__ = ["import_file", "export", "cat", "diff", "blame", "sql", "CATALOG"]

CATALOG = "vc"
CATALOG_CLASS = "versioned.spark.catalog.VersionedCatalog"


class Mode(str, enum.Enum):
    """How ``import`` changes the table: insert new keys, replace the content, or insert-or-update.

    Example::

        >>> Mode("upsert").value
        'upsert'
    """

    append = "append"
    overwrite = "overwrite"
    upsert = "upsert"


class FileFormat(str, enum.Enum):
    """Files ``import`` reads and ``export`` writes.

    Example::

        >>> FileFormat("parquet") is FileFormat.parquet
        True
    """

    csv = "csv"
    parquet = "parquet"


def _file_format(path: str, given: Optional[FileFormat]) -> FileFormat:
    """The format of ``path``: given, or from its suffix (a directory is Parquet).

    Example::

        >>> _file_format("orders.csv", None)
        <FileFormat.csv: 'csv'>
    """
    if given is not None:
        return given
    lower = path.lower().rstrip("/")
    if lower.endswith((".csv", ".tsv", ".csv.gz")):
        return FileFormat.csv
    if lower.endswith((".parquet", ".pq")) or os.path.isdir(path):
        return FileFormat.parquet
    raise click.BadParameter(f"cannot tell the format of {path!r} from its name; pass --as csv|parquet.")


def _read_file(spark: Any, path: str, ff: FileFormat, delimiter: Optional[str]) -> Any:
    if ff is FileFormat.parquet:
        return spark.read.parquet(path)
    sep = delimiter or ("\t" if path.lower().endswith(".tsv") else ",")
    return spark.read.options(header=True, inferSchema=True, sep=sep).csv(path)


def _fit_to_table(spark: Any, df: Any, table: str, branch: Optional[str]) -> Any:
    """Casts the file's columns to the existing table's types (CSV inference gives int where the table has
    bigint); a table that does not exist yet keeps the file's types."""
    from versioned.errors import NotFoundError

    try:
        target = spark.read.versioned(table, ref=branch).schema
    except NotFoundError:
        return df
    types = {f.name: f.dataType for f in target.fields}
    return df.select(*[df[c].cast(types[c]).alias(c) if c in types else df[c] for c in df.columns])


def _choice(enum_cls: Any) -> "click.Choice[str]":
    return click.Choice([e.value for e in enum_cls], case_sensitive=False)


def _as_enum(enum_cls: Any) -> Any:
    return lambda _c, _p, v: None if v is None else enum_cls(v.lower())


_file_format_option = click.option("--as", "file_format", type=_choice(FileFormat), callback=_as_enum(FileFormat),
                                   help="File format [default: from the file name].")


@app.command("import")
@click.argument("file")
@click.argument("target", metavar="REPOSITORY.TABLE")
@click.option("--key", "-k", multiple=True, help="Primary key column(s): repeat, or a comma list.")
@click.option("--branch", "-b", help="Branch to commit to [default: the repository's default branch].")
@message_option("import FILE")
@author_option
@click.option("--mode", type=_choice(Mode), default=Mode.append.value, show_default=True, callback=_as_enum(Mode),
              help="append: new keys only; overwrite: the file becomes the content; upsert: insert or update.")
@_file_format_option
@click.option("--delimiter", help="CSV field separator [default: ',', tab for .tsv].")
@format_option
def import_file(file: str, target: str, key: Tuple[str, ...], branch: Optional[str], message: Optional[str],
                author: Optional[str], mode: Mode, file_format: Optional[FileFormat], delimiter: Optional[str],
                fmt: Format) -> None:
    """Imports FILE (.csv, .tsv, .parquet file or directory) into a table as one commit.

    The repository and the table are created by their first import (give --key then).

    Example: versioned import products.csv shop.products --key id -m "first load"
    """
    repo, table, _ = split_table(target, allow_ref=False)
    if not os.path.exists(file) and "://" not in file:
        raise click.BadParameter(f"{file!r} does not exist.", param_hint="FILE")
    ff = _file_format(file, file_format)
    keys = [k.strip() for part in (key or []) for k in part.split(",") if k.strip()]
    import versioned

    with state.session(light=False) as spark:
        with status(f"Importing {os.path.basename(file)} into {repo}.{table}"):
            before = _head_or_none(spark, repo, branch)
            df = _fit_to_table(spark, _read_file(spark, file, ff, delimiter), f"{repo}.{table}", branch)
            df.write.versioned(f"{repo}.{table}", branch=branch, author=author,
                               message=message or f"import {os.path.basename(file)}",
                               mode="overwrite" if mode is Mode.overwrite else "append",
                               primary_key=keys or None, upsert=mode is Mode.upsert)
            repository = versioned.Repository(spark, repo)
            branch = branch or repository.default_branch
            head = repository.resolve(branch)
    committed = head != before  # a write that changes nothing commits nothing: the branch stays where it was
    # "commit": the branch's head after the import (the one it made, or where it stayed); "committed": whether it made one
    info = {"repository": repo, "table": table, "branch": branch, "commit": head, "committed": committed,
            "mode": mode.value}
    if fmt is not Format.table:
        emit_one(info, fmt)
        return
    if not committed:
        console().print(f"{file} changes nothing in [bold]{repo}.{table}[/bold] on {branch} ({mode.value}): "
                        f"nothing to commit; {branch} stays at [yellow]{short(head)}[/yellow]")
        return
    console().print(f"[green]Imported[/green] {file} into [bold]{repo}.{table}[/bold] on {branch} "
                    f"({mode.value}): [yellow]{short(head)}[/yellow]")


def _head_or_none(spark: Any, repo: str, branch: Optional[str]) -> Optional[str]:
    """The head of ``branch`` (None: the default branch) of ``repo`` before a write, or None where there is none yet."""
    import versioned
    from versioned.errors import NotFoundError

    try:
        repository = versioned.Repository(spark, repo)
        return repository.resolve(branch or repository.default_branch)
    except NotFoundError:
        return None


_as_of_option = click.option("--as-of", help="The newest version at or before this time (ISO-8601 or epoch ms).")


@app.command()
@click.argument("target", metavar="REPOSITORY.TABLE[@REF]")
@click.option("--limit", "-n", type=click.IntRange(min=0), help="At most this many rows.")
@_as_of_option
@format_option
def cat(target: str, limit: Optional[int], as_of: Optional[str], fmt: Format) -> None:
    """Prints a table at any revision (default: the head of the default branch) in primary-key order, without
    checking anything out.

    Example: versioned cat shop.products@v1 --limit 10
    """
    repo, table, ref = split_table(target)
    with reading() as wh:  # no JVM: versioned.reader reads the objects, in key order, fragment by fragment
        version = wh.repository(repo).table(table, ref, as_of=as_of)
        columns = list(version.schema.names)
        rows: List[Dict[str, Any]] = []
        for batch in version.batches():
            rows += batch.to_pylist()
            if limit is not None and len(rows) >= limit:
                break
    emit(rows[:limit] if limit is not None else rows, columns, fmt, empty="(no rows)")


@app.command()
@click.argument("target", metavar="REPOSITORY.TABLE[@REF]")
@click.argument("out")
@_file_format_option
@_as_of_option
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
def export(target: str, out: str, file_format: Optional[FileFormat], as_of: Optional[str], force: bool) -> None:
    """Writes a table at a revision (default: the repository's default branch) to one CSV (with a header) or
    Parquet file OUT, in primary-key order, without Spark.

    Example: versioned export shop.products@v1 products-v1.parquet
    """
    ff = _file_format(out, file_format)
    if os.path.exists(out) and not force:
        raise CommandError(f"{out} exists; pass --force to replace it.", "FILE_EXISTS")
    _check_writable(out)
    repo, table, ref = split_table(target)
    with reading() as wh:  # no JVM: versioned.reader streams the rows, fragment by fragment, in key order
        version = wh.repository(repo).table(table, ref, as_of=as_of)
        with status(f"Exporting {target} to {out}"):
            _write_single(version, out, ff)
    console().print(f"[green]Exported[/green] {target} to {out}")


def _check_writable(out: str) -> None:
    """Refuses OUT before anything is read when its directory is missing or not writable (FILE_NOT_WRITABLE).

    Example::

        _check_writable("/tmp/products.csv")  # returns; "/nonexistent/p.csv" raises CommandError
    """
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise CommandError(f"Cannot write {out}: directory {parent} does not exist. Create it, or choose another path.",
                           "FILE_NOT_WRITABLE")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CommandError(f"Cannot write {out}: directory {parent} is not writable. Choose another path.",
                           "FILE_NOT_WRITABLE")


def _write_single(version: Any, out: str, ff: FileFormat) -> None:
    """Writes a table version (:class:`versioned.reader.TableVersion`) as one file at ``out``, batch by batch: a
    temporary file beside it, renamed when complete (an error leaves ``out`` as it was)."""
    import pyarrow.parquet as pq

    tmp = f"{out}.versioned-tmp-{os.getpid()}"
    try:
        if ff is FileFormat.parquet:
            with pq.ParquetWriter(tmp, version.schema) as writer:
                for batch in version.batches():
                    writer.write_batch(batch)
        else:
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                _write_csv(f, version.schema.names, version.batches())
        if os.path.isdir(out):
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _write_csv(f: Any, columns: List[str], batches: Any) -> None:
    """CSV as Spark's writer makes it: a header, fields quoted only when needed with ``\\"`` for a quote, empty
    for NULL, ``true``/``false``, ISO-8601 times (``2026-01-31T12:00:00.000Z``).

    Example::

        _write_csv(sys.stdout, ["id"], table.to_batches())
    """
    import csv

    w = csv.writer(f, lineterminator="\n", escapechar="\\", doublequote=False)
    w.writerow(columns)
    for batch in batches:
        for row in zip(*(batch.column(i).to_pylist() for i in range(batch.num_columns))):
            w.writerow([_csv_value(v) for v in row])


def _csv_value(v: Any) -> Any:
    """A value as Spark's CSV writer renders it.

    Example::

        >>> _csv_value(True), _csv_value(None), _csv_value(dt.datetime(2026, 1, 31, 12, tzinfo=dt.timezone.utc))
        ('true', '', '2026-01-31T12:00:00.000Z')
    """
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dt.datetime):
        text = v.isoformat(timespec="milliseconds")
        return text[:-6] + "Z" if text.endswith("+00:00") else text
    if isinstance(v, (dt.date, Decimal)):
        return str(v)
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return v


def _diff_columns(columns: List[str]) -> Tuple[List[str], List[str]]:
    """``(key columns, value columns)`` of a diff frame (``_change``, keys, ``<c>_before``, ``<c>_after``).

    Example::

        >>> _diff_columns(["_change", "id", "name_before", "name_after"])
        (['id'], ['name'])
    """
    values = [c[: -len("_before")] for c in columns if c.endswith("_before") and f"{c[:-7]}_after" in columns]
    paired = {f"{v}_before" for v in values} | {f"{v}_after" for v in values}
    keys = [c for c in columns if c != "_change" and c not in paired]
    return keys, values


def _diff_records(rows: List[Dict[str, Any]], keys: List[str], values: List[str]) -> List[Dict[str, Any]]:
    out = []
    for r in rows:
        change = r["_change"]
        before = None if change == "insert" else {v: r[f"{v}_before"] for v in values}
        after = None if change == "delete" else {v: r[f"{v}_after"] for v in values}
        changed = [v for v in values if before is None or after is None or before[v] != after[v]]
        out.append({"change": change, "key": {k: r[k] for k in keys}, "before": before, "after": after,
                    "changed": changed})
    return out


_MARK = {"insert": ("+", "green"), "delete": ("-", "red"), "update": ("~", "yellow")}


@app.command()
@click.argument("target", metavar="REPOSITORY.TABLE")
@click.argument("from_ref", metavar="FROM")
@click.argument("to_ref", metavar="TO")
@click.option("--stat", is_flag=True, help="Only count the rows inserted, updated and deleted.")
@click.option("--limit", "-n", type=click.IntRange(min=1), help="At most this many changed rows.")
@format_option
def diff(target: str, from_ref: str, to_ref: str, stat: bool, limit: Optional[int], fmt: Format) -> None:
    """Cell-level diff of a table from FROM to TO: inserted rows green, deleted red, changed cells old -> new.

    Example: versioned diff shop.products v1 main --stat
    """
    repo, table, _ = split_table(target, allow_ref=False)
    changes = reader_diff(repo, table, from_ref, to_ref)  # no JVM: versioned.reader reads both versions
    columns = changes.column_names
    keys, values = _diff_columns(columns)
    counts = {c: n for c, n in Counter(changes.column("_change").to_pylist()).items()}
    rows = changes.slice(0, limit).to_pylist() if limit is not None else changes.to_pylist()
    if stat:
        info = {"table": f"{repo}.{table}", "from": from_ref, "to": to_ref, "inserted": counts.get("insert", 0),
                "updated": counts.get("update", 0), "deleted": counts.get("delete", 0)}
        if fmt is not Format.table:
            emit_one(info, fmt)
            return
        console().print(f"{info['table']} {from_ref}..{to_ref}: [green]{info['inserted']} inserted[/green], "
                        f"[yellow]{info['updated']} updated[/yellow], [red]{info['deleted']} deleted[/red]")
        return
    if fmt is Format.json:
        emit(_diff_records(rows, keys, values), ["change", "key", "before", "after", "changed"], fmt)
        return
    if fmt is Format.csv:
        emit(rows, columns, fmt)
        return
    _print_diff(rows, keys, values, f"{repo}.{table} {from_ref}..{to_ref}")


@app.command()
@click.argument("target", metavar="REPOSITORY.TABLE[@REF]")
@click.option("--limit", "-n", type=click.IntRange(min=1), help="At most this many rows (in key order).")
@format_option
def blame(target: str, limit: Optional[int], fmt: Format) -> None:
    """For each row of a table at a revision (default: the head of the default branch), the commit of its
    first-parent history that last changed it: hash, time, author and message, in key order.

    Example: versioned blame shop.products@v2 --limit 20
    """
    repo, table, ref = split_table(target)
    import versioned

    with state.session() as spark:
        df = versioned.Repository(spark, repo).blame(table, ref)
        ids = [c for c in df.columns if not c.startswith("_commit_")]
        with status(f"Blaming {target}"):
            rows = rows_of(df.orderBy(*ids), limit)
    commit = ["_commit_hash", "_commit_timestamp", "_commit_author", "_commit_message"]
    if fmt is Format.table:
        rows = [{**r, "_commit_hash": short(r["_commit_hash"])} for r in rows]
    emit(rows, ids + commit, fmt, title=f"{repo}.{table}" + (f"@{ref}" if ref else ""), empty="(no rows)")


def _print_diff(rows: List[Dict[str, Any]], keys: List[str], values: List[str], title: str) -> None:
    from rich.markup import escape

    out = console()
    if not rows:
        out.print(f"[dim]{escape(title)}: no changes[/dim]")
        return
    grid = Table(title=escape(title), title_justify="left", show_edge=False, header_style="bold")
    grid.add_column("")
    for c in keys:
        grid.add_column(c, style="bold")
    for c in values:
        grid.add_column(c, overflow="fold")

    def cell(v: Any) -> str:
        return escape("NULL" if v is None else str(jsonable(v)))

    for rec in _diff_records(rows, keys, values):
        mark, colour = _MARK.get(rec["change"], ("?", "white"))
        cells = [f"[{colour}]{mark}[/{colour}]"] + [cell(rec["key"][k]) for k in keys]
        for v in values:
            if rec["change"] == "insert":
                cells.append(f"[green]{cell(rec['after'][v])}[/green]")
            elif rec["change"] == "delete":
                cells.append(f"[red]{cell(rec['before'][v])}[/red]")
            elif v in rec["changed"]:
                cells.append(f"[red]{cell(rec['before'][v])}[/red] -> [green]{cell(rec['after'][v])}[/green]")
            else:
                cells.append(f"[dim]{cell(rec['after'][v])}[/dim]")
        grid.add_row(*cells)
    print_table(out, grid)


@app.command()
@click.argument("query")
@click.option("--limit", "-n", type=click.IntRange(min=0), help="At most this many result rows.")
@format_option
def sql(query: str, limit: Optional[int], fmt: Format) -> None:
    """Runs one Spark SQL statement; versioned tables are vc.REPOSITORY.TABLE (catalog vc).

    Example: versioned sql "SELECT * FROM vc.shop.products VERSION AS OF 'v1'"
    """
    with state.session(light=False) as spark:
        key = f"spark.sql.catalog.{CATALOG}"
        if spark.conf.get(key, None) is None:
            spark.conf.set(key, CATALOG_CLASS)
        with status("Running query"):
            df = spark.sql(query)
            rows = rows_of(df, limit) if df.columns else []
        columns = df.columns
    if not columns:
        if fmt is Format.table:
            console().print("[green]OK[/green]")
        else:
            emit([], ["result"], fmt)
        return
    emit(rows, columns, fmt, empty="(no rows)")
