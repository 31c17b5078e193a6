"""Shared pieces of the ``versioned`` command line: the Typer app, the Spark session it runs on, error
handling (exit codes) and output in the three formats (``table``, ``json``, ``csv``).

Only the public Python API of :mod:`versioned` and PySpark is used; nothing here talks to py4j.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as _dt
import enum
import json
import os
import sys
import threading
from decimal import Decimal
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from versioned import __version__
from versioned._cli_jvm import end_session, local_session, writes_class_archive
from versioned._cli_text import add_suggestion, cli_wording, iso_utc

__all__ = [
    "app", "format_option", "Format", "State", "CommandError", "state", "console", "err_console", "status", "short",
    "split_table", "emit", "emit_one", "print_table", "jsonable", "message_option", "author_option", "EXIT_OK", "EXIT_ERROR",
    "EXIT_USAGE",
]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
SHORT = 12
WAREHOUSE_CONF = "spark.versioned.warehouse"
METASTORE_CONF = "spark.versioned.metastore.url"
CLIENT_CONF = "spark.versioned.client"
DEFAULT_WAREHOUSE = "./versioned-warehouse"


class Format(str, enum.Enum):
    """Output formats: ``table`` for people (Rich, colour on a terminal), ``json`` and ``csv`` for scripts.

    Example::

        >>> Format("json") is Format.json
        True
    """

    table = "table"
    json = "json"
    csv = "csv"


class CommandError(Exception):
    """An error found by the command line itself (exit code 1), e.g. an output file that exists. Like a
    :class:`versioned.errors.VersionedError` it has an ``error_class`` and a ``message``; it is not one, so that the
    read-only commands run without importing PySpark.

    Example::

        raise CommandError("out.csv exists; pass --force to replace it", "FILE_EXISTS")
    """

    def __init__(self, message: str, error_class: str = "COMMAND_ERROR") -> None:
        """The message (what was wrong and what to do) and a stable class.

        Example::

            CommandError("out.csv exists; pass --force to replace it", "FILE_EXISTS")
        """
        super().__init__(message)
        self.message = message
        self.error_class = error_class


def _error_text(exc: BaseException) -> Tuple[str, str]:
    """``(error_class, message)`` of any exception, without a Java stack trace, in CLI words (commands, not
    Python methods) and with a "did you mean" hint when one was found."""
    error_class, message = _raw_error_text(exc)
    return error_class, cli_wording(message) + getattr(exc, "cli_hint", "")


def _raw_error_text(exc: BaseException) -> Tuple[str, str]:
    error_class = getattr(exc, "error_class", None)
    message = getattr(exc, "message", None)
    if isinstance(error_class, str) and isinstance(message, str):  # a VersionedError or a CommandError
        return error_class or "VERSIONED_ERROR", message
    from versioned._connect import condition_of

    condition = condition_of(exc)
    text = str(exc)
    if "JVM stacktrace:" in text:
        text = text.split("JVM stacktrace:")[0]
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip() and not ln.startswith("\tat ")]
    if type(exc).__name__ == "Py4JJavaError":  # "An error occurred while calling ...\n: java.X: message"
        lines = [ln.lstrip(": ") for ln in lines[1:2]] or lines
    message = lines[0] if lines else type(exc).__name__
    if condition:
        prefix = f"[{condition}] "
        message = message[len(prefix):] if message.startswith(prefix) else message
        return str(condition), message
    return type(exc).__name__.upper(), message


class _Group(click.Group):
    """Runs a command and turns every non-usage error into exit code 1 with ``[ERROR_CLASS] message``."""

    def invoke(self, ctx: click.Context) -> Any:
        """Runs the command; a failure that is not a usage error prints one line and exits with 1.

        Example::

            $ versioned cat shop.products@nope; echo $?
            [REF_NOT_FOUND] No branch, tag, lock or image matches 'nope' in repository 'shop'. ...
            1
        """
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - the command line reports every failure the same way
            if os.environ.get("VERSIONED_DEBUG"):
                raise  # the whole Python (and Java) trace, for bug reports
            error_class, message = _error_text(exc)
            click.echo(f"[{error_class}] {message}", err=True)
            ctx.exit(EXIT_ERROR)


class State:
    """Options given before the command (warehouse, metastore, colour) and the session once started.

    Example::

        with state.session() as spark:
            spark.read.versioned("shop.products").show()
    """

    def __init__(self) -> None:
        """No options given yet, no session started (the group command fills them in).

        Example::

            state = State()
            state.warehouse = "/tmp/warehouse"
        """
        self.warehouse: Optional[str] = None
        self.metastore_url: Optional[str] = None
        self.color: bool = True
        self.owned: Any = None  # the session this process started, stopped by shutdown()

    def reset(self, warehouse: Optional[str], metastore_url: Optional[str], color: bool) -> None:
        """Sets the options of one invocation.

        Example::

            state.reset("/tmp/wh", None, color=False)
        """
        self.warehouse, self.metastore_url, self.color = warehouse, metastore_url, color

    @contextlib.contextmanager
    def session(self, light: bool = True) -> Iterator[Any]:
        """The active SparkSession (reused, e.g. inside pytest or a notebook) or a new local one, with the
        warehouse and metastore of this invocation set for the duration of the command. A ``light`` command
        (metadata only: refs, history) starts its JVM with the client compiler only, which starts faster;
        commands that move data keep the full JIT.

        Example::

            with state.session(light=False) as spark:
                spark.read.versioned("shop.products").count()
        """
        import versioned
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
        if spark is None:
            with status("Starting Spark"):
                spark = self.owned = local_session(light)
        versioned.install()
        # the reflog records this command's moves as the CLI's (docs/AUDIT.md)
        overrides = {WAREHOUSE_CONF: self.warehouse, METASTORE_CONF: self.metastore_url, CLIENT_CONF: "cli"}
        saved: Dict[str, Optional[str]] = {}
        for key, value in overrides.items():
            if value is not None:
                saved[key] = spark.conf.get(key, None)
                spark.conf.set(key, value)
        try:
            yield spark
        except Exception as exc:
            add_suggestion(spark, exc)  # while the invocation's warehouse is still set
            raise
        finally:
            for key, old in saved.items():
                if old is None:
                    spark.conf.unset(key)
                else:
                    spark.conf.set(key, old)

    def shutdown(self) -> None:
        """Stops the session this process started (a reused session is left running).

        Example::

            try:
                app()
            finally:
                state.shutdown()
        """
        if self.owned is not None:
            spark, self.owned = self.owned, None
            # the first command of an installation keeps its JVM's classes for the next ones (_cli_jvm._ClassArchive)
            with status("Keeping the JVM's classes for faster starts") if writes_class_archive() else contextlib.nullcontext():
                end_session(spark)


state = State()


def console() -> Console:
    """The console for results (stdout), created per call so that redirected output is honoured.

    Example::

        console().print("[green]done[/green]")
    """
    return Console(no_color=not state.color, highlight=False, soft_wrap=True)


def print_table(out: Console, table: Table) -> None:
    """Prints a Rich table; into a pipe or a file (no terminal to fit) at its natural width, one line per row, so
    that headers and cells are not folded to the 80 columns Rich assumes there.

    Example::

        print_table(console(), Table("name", "image"))
    """
    if not out.is_terminal:
        from rich.measure import Measurement

        out.width = max(out.width, Measurement.get(out, out.options.update(max_width=1 << 16), table).maximum)
    out.print(table)


def err_console() -> Console:
    """The console for progress and notes (stderr).

    Example::

        err_console().print("working...")
    """
    return Console(stderr=True, no_color=not state.color, highlight=False)


def _progress(spark: Any) -> Optional[str]:
    """``stage 3: 12/40 tasks`` for the Spark stages running now (classic sessions), or None."""
    sc = getattr(spark, "_sc", None) if spark is not None else None
    if sc is None:
        return None
    try:
        tracker = sc.statusTracker()
        stages = [tracker.getStageInfo(i) for i in tracker.getActiveStageIds()]
    except Exception:  # noqa: BLE001 - progress is decoration; a session being stopped has none
        return None
    stages = [s for s in stages if s is not None]
    if not stages:
        return None
    done, total = sum(s.numCompletedTasks for s in stages), sum(s.numTasks for s in stages)
    ids = ", ".join(str(s.stageId) for s in stages)
    return f"stage{'s' if len(stages) > 1 else ''} {ids}: {done}/{total} tasks"


@contextlib.contextmanager
def status(text: str) -> Iterator[None]:
    """A spinner on stderr while a long operation runs, with the progress of the Spark jobs it starts (stages
    and tasks done, on a classic session); nothing when stderr is not a terminal.

    Example::

        with status("Importing orders.csv"):
            df.write.versioned("shop.orders", primary_key="id")
    """
    c = err_console()
    if not c.is_terminal:
        yield
        return
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    stop = threading.Event()
    with c.status(text) as spinner:

        def watch() -> None:
            while not stop.wait(0.25):
                done = _progress(spark)
                spinner.update(f"{text} ({done})" if done else text)

        watcher = threading.Thread(target=watch, name="versioned-progress", daemon=True)
        watcher.start()
        try:
            yield
        finally:
            stop.set()
            watcher.join(timeout=1)


def short(h: Optional[str]) -> str:
    """A hash shortened to 12 characters for people.

    Example::

        >>> short("3f1c2d4e5f60718293a4b5c6d7e8f9")
        '3f1c2d4e5f60'
    """
    return (h or "")[:SHORT]


def split_table(spec: str, allow_ref: bool = True) -> Tuple[str, str, Optional[str]]:
    """Splits ``repo.table[@ref]`` into ``(repo, table, ref)``; a bad spec is a usage error (exit 2).

    Example::

        >>> split_table("shop.products@main~1")
        ('shop', 'products', 'main~1')
    """
    name, ref = spec, None
    if "@" in spec:
        if not allow_ref:
            raise click.BadParameter(f"{spec!r}: no @ref here, use --branch.")
        name, ref = spec.split("@", 1)
        if not ref:
            raise click.BadParameter(f"{spec!r}: empty ref after '@'.")
    repo, dot, table = name.partition(".")
    if not dot or not repo or not table:
        raise click.BadParameter(f"{spec!r} is not REPOSITORY.TABLE[@REF].")
    return repo, table, ref


def jsonable(value: Any) -> Any:
    """A value JSON can hold: timestamps as ISO 8601 in UTC, decimals as strings, bytes as hex, rows as dicts.

    Example::

        >>> jsonable(datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc))
        '2026-01-02T03:04:05Z'
    """
    if isinstance(value, (_dt.datetime, _dt.date)):
        return iso_utc(value)
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if hasattr(value, "asDict"):
        return {k: jsonable(v) for k, v in value.asDict().items()}
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ",".join(_cell(v) for v in value)
    return str(jsonable(value))


def emit(rows: Sequence[Dict[str, Any]], columns: Sequence[str], fmt: Format, *, title: Optional[str] = None,
         styles: Optional[Dict[str, str]] = None, empty: str = "(none)") -> None:
    """Prints rows (dicts) as a Rich table, a JSON array or CSV with a header.

    Example::

        emit([{"name": "main", "image": "3f1c2d4e5f60"}], ["name", "image"], Format.table, title="branches")
    """
    if fmt is Format.json:
        click.echo(json.dumps([{c: jsonable(r.get(c)) for c in columns} for r in rows], indent=2))
        return
    if fmt is Format.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        for r in rows:
            writer.writerow([_cell(r.get(c)) for c in columns])
        sys.stdout.flush()
        return
    out = console()
    if not rows:
        out.print(f"[dim]{empty}[/dim]")
        return
    table = Table(title=title, title_justify="left", show_edge=False, header_style="bold")
    for c in columns:
        table.add_column(c, style=(styles or {}).get(c), overflow="fold")
    for r in rows:
        table.add_row(*(escape(_cell(r.get(c))) for c in columns))  # values are text, not markup
    print_table(out, table)


def emit_one(record: Dict[str, Any], fmt: Format) -> None:
    """Prints one record for scripts: a JSON object, or CSV with a header and one row.

    Example::

        emit_one({"commit": "3f1c...", "branch": "main"}, Format.json)
    """
    if fmt is Format.json:
        click.echo(json.dumps(jsonable(record), indent=2))
    else:
        emit([record], list(record), fmt)


#: A command function, as click's decorators take and return it.
FC = TypeVar("FC", bound=Callable[..., Any])


def format_option(fn: FC) -> FC:
    """Adds ``--format/-f table|json|csv`` (passed as ``fmt``, a :class:`Format`) to a command.

    Example::

        @app.command()
        @format_option
        def branches(fmt: Format) -> None: ...
    """
    return click.option("--format", "-f", "fmt", type=click.Choice([f.value for f in Format], case_sensitive=False),
                        default=Format.table.value, show_default=True, callback=lambda _c, _p, v: Format(v.lower()),
                        help="Output: table (people), json or csv (scripts).")(fn)


def message_option(default: str) -> Callable[[FC], FC]:
    """``--message/-m`` of a command that commits; ``default`` says what the message is without it.

    Example::

        @app.command()
        @message_option("import FILE")
        def load(message: Optional[str]) -> None: ...
    """
    return click.option("--message", "-m", help=f"Commit message [default: {default}].")


author_option = click.option("--author", help="Commit author [default: spark.versioned.author or the OS user].")


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--warehouse", "-w", envvar="VERSIONED_WAREHOUSE", metavar="URI",
              help=f"Warehouse directory or URI (env VERSIONED_WAREHOUSE) [default: {DEFAULT_WAREHOUSE}].")
@click.option("--metastore-url", envvar="VERSIONED_METASTORE_URL", metavar="JDBC_URL",
              help="JDBC URL of the metastore (env VERSIONED_METASTORE_URL) [default: SQLite in the warehouse].")
@click.option("--color/--no-color", default=True, help="Colour on a terminal (NO_COLOR is honoured).")
@click.version_option(version=__version__, prog_name="versioned")
def app(warehouse: Optional[str], metastore_url: Optional[str], color: bool) -> None:
    """Git-like version control for tables: import CSV/Parquet, branch, tag, lock, diff, merge and time-travel.

    \b
    Exit codes: 0 ok; 1 versioned error ("[ERROR_CLASS] message" on stderr), also a merge that
    stopped on conflicts ([MERGE_CONFLICT]); 2 usage error.
    Example:  versioned import products.csv shop.products --key id
    """
    state.reset(warehouse, metastore_url, color)


def rows_of(df: Any, limit: Optional[int] = None) -> List[Dict[str, Any]]:
    """Collects a DataFrame (at most ``limit`` rows) as a list of dicts.

    Example::

        rows_of(repo.branches())
    """
    if limit is not None:
        df = df.limit(limit)
    return [r.asDict(recursive=True) for r in df.collect()]
