"""The command line of issue 31 (items 2, 14, 15): the repository's default branch where a branch is omitted,
``reset``, ``branch -m`` and ``--set-default``, per-table conflict resolution, a pager for ``log``, real counts for
a reverted merge, ``cat`` in key order, one date format, errors in CLI words with "did you mean", no JVM noise
on stderr and progress for long operations."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
from typing import Any, List

import click
import pytest
from pyspark.sql import SparkSession
from rich.console import Console

from conftest import ROOT, frame, refs_state, rows_of
from test_cli import as_json, cells, ok, run, write_csv
from versioned import Repository
from versioned.cli import EXIT_ERROR

ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$")


@pytest.fixture
def trunk(spark: SparkSession, tmp_path: Any) -> Repository:
    """Repository 'r' whose default branch is 'trunk' (there is no 'main'), imported through the CLI without -b:
    t = {1:a, 2:b}."""
    spark.conf.set("spark.sql.catalog.vc_cli", "versioned.spark.catalog.VersionedCatalog")
    spark.sql("CREATE NAMESPACE vc_cli.r WITH DBPROPERTIES ('defaultBranch' = 'trunk')")
    ok("import", write_csv(tmp_path / "a.csv", "id,name\n1,a\n2,b\n"), "r.t", "--key", "id", "-m", "first")
    return Repository(spark, "r")


def test_commands_without_a_branch_use_the_default_branch(spark: SparkSession, trunk: Repository,
                                                          tmp_path: Any) -> None:
    head = trunk.resolve("trunk")
    assert [b["name"] for b in as_json("branch", "r")] == ["trunk"]
    assert as_json("import", write_csv(tmp_path / "b.csv", "id,name\n3,c\n"), "r.t")["branch"] == "trunk"
    head = trunk.resolve("trunk")
    assert [r["message"] for r in as_json("log", "r")] == ["import b.csv", "first"]
    assert as_json("show", "r")["image"] == head
    assert "Created branch dev at " + head[:12] in ok("branch", "r", "dev").stdout
    ok("tag", "r", "v1")
    ok("lock", "r", "ns:pin")
    assert trunk.resolve("dev") == trunk.resolve("v1") == trunk.resolve("ns:pin") == head
    assert [(b["name"], b["default"]) for b in as_json("branch", "r")] == [("dev", False), ("trunk", True)]
    assert ["* trunk", head[:12]] == cells(ok("branch", "r").stdout)[-1][:2]
    assert "Default branch of r is now dev" in ok("branch", "r", "--set-default", "dev").stdout
    assert trunk.default_branch == "dev"
    assert as_json("import", write_csv(tmp_path / "c.csv", "id,name\n4,d\n"), "r.t")["branch"] == "dev"
    assert trunk.resolve("trunk") == head != trunk.resolve("dev")


def test_reset_and_rename(spark: SparkSession, trunk: Repository, tmp_path: Any) -> None:
    first = trunk.resolve("trunk")
    ok("import", write_csv(tmp_path / "b.csv", "id,name\n3,c\n"), "r.t")
    second = trunk.resolve("trunk")
    assert f"Reset trunk from {second[:12]} to {first[:12]}" in ok("reset", "r", "trunk", "trunk~1").stdout
    assert trunk.resolve("trunk") == first
    assert as_json("reset", "r", "trunk", second) == {"repository": "r", "branch": "trunk", "old": first,
                                                      "head": second}
    ok("branch", "r", "dev")
    assert "Renamed branch dev to develop" in ok("branch", "r", "-m", "dev", "develop").stdout
    assert [b["name"] for b in as_json("branch", "r")] == ["develop", "trunk"]
    ok("branch", "r", "-m", "trunk", "main")  # renaming the default branch moves the default along
    assert trunk.default_branch == "main"
    bad = run("reset", "r", "v9", "main")
    assert bad.exit_code == EXIT_ERROR and bad.stderr.startswith("[REF_NOT_FOUND] ")


def _two_table_conflict(spark: SparkSession) -> Repository:
    """main and dev (from main) change t's key 1 and u's key 1 differently; dev deletes t's key 2, main updates
    it."""
    schema = "id long, name string"
    frame(spark, [(1, "a"), (2, "b"), (3, "c")], schema).write.versioned("r.t", primary_key="id")
    frame(spark, [(1, "x")], schema).write.versioned("r.u", primary_key="id")
    repo = Repository(spark, "r")
    repo.create_branch("dev")
    repo.upsert(frame(spark, [(1, "dev")], schema), "t", branch="dev")
    repo.delete_where("t", "id = 2", branch="dev")
    repo.upsert(frame(spark, [(1, "dev")], schema), "u", branch="dev")
    repo.upsert(frame(spark, [(1, "main"), (2, "B")], schema), "t")
    repo.upsert(frame(spark, [(1, "main")], schema), "u")
    return repo


def test_merge_settles_chosen_tables_from_one_side(spark: SparkSession) -> None:
    repo = _two_table_conflict(spark)
    before = refs_state(repo)
    half = run("merge", "r", "dev", "--theirs", "t")
    assert half.exit_code == EXIT_ERROR and half.stderr.startswith("[MERGE_CONFLICT] 1 conflict(s)")
    assert "--ours TABLE / --theirs TABLE" in half.stderr and "Repository." not in half.stderr
    assert {c[0] for c in cells(half.stdout) if c[-1] == "update"} == {"u"}
    assert refs_state(repo) == before
    dry = as_json("merge", "r", "dev", "--theirs", "t", "--ours", "u", "--dry-run")
    assert dry["status"] == "merged" and refs_state(repo) == before
    out = ok("merge", "r", "dev", "--theirs", "t", "--ours", "u", "-m", "settled").stdout
    assert f"Merged dev into {repo.default_branch}" in out
    assert rows_of(spark.read.versioned("r.t")) == [(1, "dev"), (3, "c")]
    assert rows_of(spark.read.versioned("r.u")) == [(1, "main")]
    assert repo.log(limit=1).first()["parents"] == [before["history"]["main"][0], repo.resolve("dev")]
    usage = run("merge", "r", "dev", "--strategy", "ours", "--theirs", "t")
    assert usage.exit_code == 2


def test_cherry_pick_and_revert_settle_tables_too(spark: SparkSession) -> None:
    repo = _two_table_conflict(spark)
    main_change = repo.resolve("main~1")  # t: 1 a -> main, 2 b -> B
    stopped = run("cherry-pick", "r", "dev~2", "--onto", "main")  # dev~2: t's key 1 a -> dev
    assert stopped.exit_code == EXIT_ERROR and "--theirs TABLE" in stopped.stderr
    info = as_json("cherry-pick", "r", "dev~2", "--onto", "main", "--theirs", "t")
    assert info["status"] == "merged" and {"id": 1, "name": "dev"} in as_json("cat", "r.t")
    # reverting main's change of t meets the pick on key 1: keep ours there, key 2 goes back to b
    info = as_json("revert", "r", main_change, "--ours", "t")
    assert info["status"] == "merged"
    assert rows_of(spark.read.versioned("r.t")) == [(1, "dev"), (2, "b"), (3, "c")]


def test_revert_of_a_merge_prints_the_rows_it_changed(spark: SparkSession) -> None:
    schema = "id long, name string"
    frame(spark, [(1, "a"), (2, "b"), (3, "c")], schema).write.versioned("r.t", primary_key="id")
    repo = Repository(spark, "r")
    repo.create_branch("dev")
    repo.upsert(frame(spark, [(1, "A"), (4, "d")], schema), "t", branch="dev")
    repo.upsert(frame(spark, [(3, "C")], schema), "t")
    ok("merge", "r", "dev")
    # a merge commit needs --parent, and the error says so in the command line's words
    unsaid = run("revert", "r", "main")
    assert unsaid.exit_code == EXIT_ERROR and "--parent N, 1 to 2" in unsaid.stderr, unsaid.stderr
    beyond = run("revert", "r", "main", "--parent", "3")
    assert beyond.exit_code == EXIT_ERROR and "give --parent 1 to 2" in beyond.stderr, beyond.stderr
    out = ok("revert", "r", "main", "--parent", "1").stdout
    assert ["t", "take", "1", "1"] in cells(out), out  # key 1 back to 'a', key 4 deleted
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b"), (3, "C")]


def test_cat_prints_rows_in_key_order(spark: SparkSession, tmp_path: Any) -> None:
    ok("import", write_csv(tmp_path / "a.csv", "id,name\n3,c\n1,a\n2,b\n"), "r.t", "--key", "id")
    ok("import", write_csv(tmp_path / "b.csv", "id,name\n1,A\n"), "r.t", "--mode", "upsert")
    assert [r["id"] for r in as_json("cat", "r.t")] == [1, 2, 3]
    assert [r["id"] for r in as_json("cat", "r.t", "--limit", "2")] == [1, 2]
    assert [c[0] for c in cells(ok("cat", "r.t").stdout)] == ["1", "2", "3"]


def test_one_date_format_iso_8601_utc(spark: SparkSession, trunk: Repository) -> None:
    [entry] = as_json("log", "r")
    assert ISO_UTC.match(entry["created"]), entry["created"]
    assert ISO_UTC.match(as_json("branch", "r")[0]["created"])
    assert ISO_UTC.match(as_json("show", "r")["created"])
    text = ok("log", "r").stdout
    date = next(line for line in text.splitlines() if line.startswith("Date:"))
    assert ISO_UTC.match(date.split()[1]), date
    assert ISO_UTC.match(re.search(r"\(\w+, (\S+)\)", ok("log", "r", "--graph").stdout).group(1))
    assert ISO_UTC.match(ok("branch", "r", "-f", "csv").stdout.splitlines()[1].split(",")[2])


def test_log_is_paged_on_a_terminal_only(spark: SparkSession, trunk: Repository, monkeypatch: Any) -> None:
    import versioned._cli_refs as refs

    paged: List[str] = []
    monkeypatch.setattr(click, "echo_via_pager", lambda text, color=None: paged.append(str(text)))
    assert "first" in ok("log", "r").stdout and paged == []  # CliRunner's stdout is not a terminal
    monkeypatch.setattr(refs, "_stdout_is_tty", lambda: True)
    result = ok("log", "r")
    assert len(paged) == 1 and "first" in paged[0] and "commit " in paged[0] and "first" not in result.stdout
    ok("log", "r", "--no-pager")
    assert len(paged) == 1
    ok("log", "r", "-f", "json")
    assert len(paged) == 1


def test_errors_name_commands_and_suggest_close_names(spark: SparkSession, trunk: Repository) -> None:
    ref = run("cat", "r.t@trunc")
    assert ref.exit_code == EXIT_ERROR and ref.stderr.startswith("[REF_NOT_FOUND] ")
    assert "Did you mean 'trunk'?" in ref.stderr and "()" not in ref.stderr
    assert "versioned branch|tag|lock r" in ref.stderr
    table = run("cat", "r.tt")
    assert table.exit_code == EXIT_ERROR and table.stderr.startswith("[TABLE_NOT_FOUND] ")
    assert "Did you mean 't'?" in table.stderr
    protected = run("branch", "r", "-d", "trunk")
    assert protected.stderr.startswith("[PROTECTED_REF] ") and "versioned branch r --set-default" in protected.stderr
    far = run("log", "r", "zzzzzz")
    assert far.exit_code == EXIT_ERROR and "Did you mean" not in far.stderr
    remote = run("fetch", "r", "nope")
    assert remote.stderr.startswith("[REMOTE_NOT_FOUND] ") and "'versioned remote add r NAME" in remote.stderr
    assert "procedure" not in remote.stderr and "the API's" not in remote.stderr
    check = run("check", "run", "r", "--check", "nope")
    assert "'versioned check add r NAME EXPRESSION'" in check.stderr and "the API's" not in check.stderr, check.stderr


def _class_archives(cache: Any) -> List[str]:
    """The complete class archives in a CLI cache directory (their names end with their size)."""
    names = sorted(os.listdir(cache)) if os.path.isdir(cache) else []
    return [n for n in names if n.endswith(".jsa") and os.path.getsize(cache / n) == int(n[:-4].rsplit("-", 1)[1])]


def test_no_jvm_noise_on_stderr_and_the_class_archive(tmp_path: Any) -> None:
    cache = tmp_path / "cache"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), VERSIONED_WAREHOUSE=str(tmp_path / "wh"),
               VERSIONED_CACHE_DIR=str(cache))
    env.pop("VERSIONED_CLI_CLASS_ARCHIVE", None)
    done = subprocess.run([sys.executable, "-m", "versioned.cli", "init", "-f", "json"], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["repositories"] == []
    assert done.stderr == ""
    # the first command's JVM left its classes for the next commands: one whole archive, nothing half-written
    [archive] = _class_archives(cache)
    assert sorted(os.listdir(cache)) == [archive]
    # a refused write prints its one error line, without Spark's "write support ... is aborting" log lines first
    csv = tmp_path / "a.csv"
    csv.write_text("id,name\n1,a\n", encoding="utf-8")
    cli = [sys.executable, "-m", "versioned.cli", "import", str(csv), "shop.t"]
    first = subprocess.run(cli + ["--key", "id"], cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    [full] = [n for n in _class_archives(cache) if n != archive]  # import's JVM keeps the full JIT: another key
    again = subprocess.run(cli, cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 1 and again.stderr.startswith("[KEY_EXISTS] "), again.stderr
    assert len(again.stderr.strip().splitlines()) == 1, again.stderr
    # a failed query too: PySpark's query-context log (the whole Java trace) is not printed
    query = subprocess.run([sys.executable, "-m", "versioned.cli", "sql", "SELECT * FROM vc.shop.nope"],
                           cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    assert query.returncode == 1 and query.stderr.startswith("[TABLE_OR_VIEW_NOT_FOUND]"), query.stderr
    assert len(query.stderr.strip().splitlines()) == 1, query.stderr
    # the commands after the first started from the archive (and left it as it was)
    assert sorted(os.listdir(cache)) == sorted([archive, full])


def test_class_archive_cut_short_is_never_mapped(tmp_path: Any, monkeypatch: Any) -> None:
    from versioned._cli_jvm import _ClassArchive

    monkeypatch.setenv("VERSIONED_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("VERSIONED_CLI_CLASS_ARCHIVE", raising=False)
    archive = _ClassArchive.for_options("-XX:TieredStopAtLevel=1")
    assert archive is not None and archive.key != _ClassArchive.for_options("").key  # type: ignore[union-attr]
    # none yet: the JVM writes one as it exits, into a file of its own
    [dump, *quiet] = archive.java_options()
    assert dump.startswith("-XX:ArchiveClassesAtExit=") and "-Xlog:disable" in quiet
    # an archive cut short (a disk that filled up, a JVM killed while it wrote) would crash the JVM that maps it:
    # it is removed and written again; a whole one is mapped
    cut = tmp_path / f"cli-classes-{archive.key}-1000.jsa"
    cut.write_bytes(b"x" * 500)
    assert archive.java_options()[0].startswith("-XX:ArchiveClassesAtExit=") and not cut.exists()
    whole = tmp_path / f"cli-classes-{archive.key}-1000.jsa"
    whole.write_bytes(b"x" * 1000)
    assert archive.java_options()[0] == f"-XX:SharedArchiveFile={whole}"
    # a JVM that did not exit normally leaves nothing in place
    archive.dumping = str(tmp_path / f"cli-classes-{archive.key}-writing-1.tmp")
    open(archive.dumping, "wb").close()

    class Failed:
        stdin = None

        def wait(self, timeout: float) -> int:
            return 134

    archive.publish(Failed())
    assert sorted(os.listdir(tmp_path)) == [whole.name]
    # off by setting
    monkeypatch.setenv("VERSIONED_CLI_CLASS_ARCHIVE", "0")
    assert _ClassArchive.for_options("") is None


def test_long_operations_show_task_progress_on_a_terminal_only(spark: SparkSession, monkeypatch: Any) -> None:
    import versioned._cli_base as base

    def slow_job() -> None:
        spark.sparkContext.parallelize(range(4), 4).map(lambda x: time.sleep(1.5) or x).count()

    screen = io.StringIO()
    monkeypatch.setattr(base, "err_console", lambda: Console(file=screen, force_terminal=True, width=120))
    with base.status("Verifying r"):
        slow_job()
    assert "Verifying r" in screen.getvalue() and re.search(r"\d+/4 tasks", screen.getvalue()), screen.getvalue()
    piped = io.StringIO()
    monkeypatch.setattr(base, "err_console", lambda: Console(file=piped, force_terminal=False))
    with base.status("Verifying r"):
        slow_job()
    assert piped.getvalue() == ""
