"""The ``versioned`` command line: version CSV/Parquet data from a shell.

Commands: ``init``, ``import``, ``export``, ``cat``, ``log``, ``show``, ``diff``, ``blame``, ``branch``, ``reset``,
``tag``, ``lock``, ``merge``, ``cherry-pick``, ``revert``, ``remote``, ``clone``, ``fetch``, ``download``, ``pull``, ``push``,
``import-table``, ``protect``, ``unprotect``, ``publish``, ``bisect``, ``check``, ``gc``, ``verify``, ``reflog`` and ``sql``. A branch or ref left out is the repository's default branch.
``log``, ``show``, ``cat``, ``export``, ``diff``, ``verify``
and the branch, tag and lock listings only read: they use :mod:`versioned.reader` and start no JVM. The others run
on the active SparkSession if there is one (a notebook, a test) and otherwise start a quiet local one (``local[*]``, no
UI) on the warehouse given by ``--warehouse`` / ``VERSIONED_WAREHOUSE`` (default ``./versioned-warehouse``)
and ``--metastore-url`` / ``VERSIONED_METASTORE_URL``; ``VERSIONED_MASTER`` (default ``local[*]``) and
``VERSIONED_JAVA_OPTIONS`` (extra driver JVM options) tune that session.

Exit codes: 0 ok; 1 a versioned error, reported on stderr as ``[ERROR_CLASS] message`` (no Java
trace; in CLI words, with "did you mean" for an unknown ref or table), also a merge, cherry-pick, revert or pull
that stopped on conflicts (``[MERGE_CONFLICT]``) and a
push the remote refused (``[NON_FAST_FORWARD]``); 2 a usage
error (unknown command or option, bad argument).

Example::

    $ versioned import products.csv shop.products --key id -m "first load"
    $ versioned tag shop v1
    $ versioned log shop --graph --oneline
    $ versioned diff shop.products v1 main --stat
    $ versioned cat shop.products@v1 --format json
    $ versioned merge shop dev --into main
    $ versioned push shop origin --branch main
"""

from __future__ import annotations

from typing import List, Optional

from versioned import _cli_data, _cli_governance, _cli_merge, _cli_refs, _cli_remote, _cli_retention  # noqa: F401 - registers the commands on the app
from versioned._cli_base import EXIT_ERROR, EXIT_OK, EXIT_USAGE, app, state

__all__ = ["app", "main", "EXIT_OK", "EXIT_ERROR", "EXIT_USAGE"]


def main(argv: Optional[List[str]] = None) -> None:
    """Entry point of the ``versioned`` console script.

    Example::

        from versioned.cli import main
        main(["log", "shop", "--oneline"])   # exits with the command's exit code
    """
    try:
        app(args=argv, prog_name="versioned")
    finally:
        state.shutdown()


if __name__ == "__main__":  # pragma: no cover
    main()
