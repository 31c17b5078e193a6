"""Text of the ``versioned`` command line that is not a command: error messages in CLI words (the engine's
messages name the SQL procedures and API operations), "did you mean" suggestions for unknown refs and tables,
and the one date format (ISO 8601, UTC)."""

from __future__ import annotations

import datetime as _dt
import difflib
import re
from typing import Any, List, Optional, Sequence, Tuple

__all__ = ["cli_wording", "iso_utc", "suggestion", "add_suggestion"]

#: (pattern, replacement) applied in order to an error message; ``REPO`` is replaced by the repository named
#: in the message, when there is one.
_WORDING: Sequence[Tuple[str, str]] = (
    (r"List the branches, tags and locks \(metadata table \$refs, or the API's ref listings\)",
     "List refs with 'versioned branch|tag|lock REPO'"),
    (r"List the branches \(metadata table \$refs, or the API's branches\), or create it first \(procedure "
     r"create_branch, or the API's create branch\)\.",
     "List branches with 'versioned branch REPO', or create it with 'versioned branch REPO NAME'."),
    (r"Create it first \(procedure create_branch, or the API's create branch\)\.",
     "Create it first with 'versioned branch REPO NAME FROM'."),
    (r"Verify the repository \(procedure verify, or the API's verify\)", "Run 'versioned verify REPO'"),
    (r"Merge with allow unrelated histories \(merge argument allow_unrelated\)", "Pass --allow-unrelated"),
    (r"Run gc with force", "Pass --force"),
    (r"push with force to replace the remote branch", "push with --force to replace the remote branch"),
    (r"Use mode 'overwrite', or an upsert \(write option upsert 'true'\) to update existing rows",
     "Use --mode overwrite, or --mode upsert to update existing rows"),
    (r"Inspect them \(conflicts\), then merge again with strategy 'ours' or 'theirs', or with resolutions\.",
     "Run again with --strategy ours or --strategy theirs, or settle tables with --ours TABLE / --theirs TABLE."),
    (r"Add one first \(procedure add_remote, or the API's add remote\)\.",
     "Add one first: 'versioned remote add REPO NAME --warehouse URI --metastore-url JDBC_URL'."),
    (r"Add it first \(procedure add_check, or the API's add check\); the metadata table \$checks lists runs\.",
     "Add it first: 'versioned check add REPO NAME EXPRESSION'; 'versioned check runs REPO' lists runs."),
    (r"add it first \(add_check\)\.", "add it first: 'versioned check add REPO NAME EXPRESSION'."),
    (r"keep more history with the retention policy \(procedure set_retention, or the API's set retention\)",
     "keep more history with the retention policy ('versioned retention REPO PATTERN')"),
    (r"against: parent (\d+) to (\d+) \(1 = ", r"against with --parent N, \1 to \2 (1 = "),
    (r"give parent (\d+) to (\d+)\.", r"give --parent \1 to \2."),
    (r"has one parent; parent must be 1 or omitted\.", "has one parent; leave --parent out (or give 1)."),
    (r"Make another branch the default first\.",
     "Make another branch the default first: 'versioned branch REPO --set-default NAME'."),
)
_REPO = re.compile(r"(?:[Rr]epository|of) '([^']+)'|^'([^']+)' has no ")


def cli_wording(message: str) -> str:
    """An engine message with its Python method names replaced by the commands that do the same.

    Example::

        >>> cli_wording("No branch matches 'x' in repository 'shop'. List the branches, tags and locks "
        ...             "(metadata table $refs, or the API's ref listings).")
        "No branch matches 'x' in repository 'shop'. List refs with 'versioned branch|tag|lock shop'."
    """
    found = _REPO.search(message)
    repo = (found.group(1) or found.group(2)) if found else "REPOSITORY"
    for pattern, replacement in _WORDING:
        message = re.sub(pattern, replacement.replace("REPO", repo), message)
    return message


def iso_utc(value: Any) -> str:
    """A timestamp in the command line's one date format, ISO 8601 in UTC (``2026-01-31T12:00:05Z``,
    milliseconds when there are some); a naive datetime is local time, as PySpark returns them. A date is
    ``YYYY-MM-DD``; a string is taken as it is.

    Example::

        >>> iso_utc(datetime.datetime(2026, 1, 31, 12, 0, 5, tzinfo=datetime.timezone.utc))
        '2026-01-31T12:00:05Z'
    """
    if isinstance(value, _dt.datetime):
        utc = value.astimezone(_dt.timezone.utc)
        text = utc.strftime("%Y-%m-%dT%H:%M:%S")
        return text + (f".{utc.microsecond // 1000:03d}Z" if utc.microsecond // 1000 else "Z")
    if isinstance(value, _dt.date):
        return value.isoformat()
    return str(value)


def _quoted(message: str) -> List[str]:
    return re.findall(r"'([^']*)'", message)


def suggestion(missing: str, candidates: Sequence[str]) -> Optional[str]:
    """`` Did you mean 'x'?`` (or several) for a name that does not exist, from the names that do; None when
    none is close.

    Example::

        >>> suggestion("mian", ["main", "dev"])
        " Did you mean 'main'?"
    """
    close = difflib.get_close_matches(missing, [c for c in candidates if c != missing], n=3, cutoff=0.6)
    if not close:
        return None
    return " Did you mean " + " or ".join(f"'{c}'" for c in close) + "?"


def _ref_names(repo: Any) -> List[str]:
    return [r["name"] for df in (repo.branches(), repo.tags(), repo.locks()) for r in df.collect()]


def add_suggestion(spark: Any, exc: BaseException) -> None:
    """Adds "did you mean" to a ``REF_NOT_FOUND`` or ``TABLE_NOT_FOUND`` error (its ``cli_hint``), from the
    repository's refs or the tables at the default branch's head; does nothing for other errors or when the
    names cannot be read.

    Example::

        try:
            repo.resolve("mian")
        except RefNotFound as e:
            add_suggestion(spark, e)   # e.cli_hint == " Did you mean 'main'?"
    """
    import versioned

    error_class = getattr(exc, "error_class", None)
    if error_class not in ("REF_NOT_FOUND", "TABLE_NOT_FOUND"):
        return
    message = str(getattr(exc, "message", exc))
    names = _quoted(message)
    repo_name = _REPO.search(message)
    if not names or repo_name is None:
        return
    missing = names[0].split("~")[0].split("^")[0]
    try:
        repo = versioned.Repository(spark, repo_name.group(1))
        if error_class == "REF_NOT_FOUND":
            candidates = _ref_names(repo)
        else:
            candidates = [t["name"] for t in repo.show().get("tables", [])]
    except Exception:  # noqa: BLE001 - a suggestion is best effort; the error itself is what matters
        return
    hint = suggestion(missing, candidates)
    if hint:
        setattr(exc, "cli_hint", hint)
