"""``versioned reflog`` (issue 37): the CLI lists every ref movement, records its own as client ``cli``, restores a
deleted branch from an entry with ``versioned branch``, and refuses an unknown entry without creating anything."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner, Result
from pyspark.sql import SparkSession

from conftest import refs_state
from versioned import Repository
from versioned.cli import EXIT_ERROR, EXIT_OK, EXIT_USAGE, app


def run(*args: str) -> Result:
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args), catch_exceptions=False)


def as_json(*args: str) -> Any:
    result = run(*args, "--format", "json")
    assert result.exit_code == EXIT_OK, (result.stdout, result.stderr)
    return json.loads(result.stdout)


def test_reflog_lists_moves_as_cli_and_restores_a_branch(spark: SparkSession, tmp_path: Any) -> None:
    csv = tmp_path / "t.csv"
    csv.write_text("id,name\n1,a\n2,b\n")
    assert run("import", str(csv), "r.t", "--key", "id").exit_code == EXIT_OK
    main = Repository(spark, "r").default_branch
    assert run("branch", "r", "dev").exit_code == EXIT_OK
    assert run("tag", "r", "v1").exit_code == EXIT_OK
    assert run("branch", "r", "--delete", "dev").exit_code == EXIT_OK
    entries = as_json("reflog", "r")
    assert [(e["ref"], e["operation"]) for e in entries] == [
        ("heads/dev", "delete"), ("tags/v1", "create"), ("heads/dev", "create"), (f"heads/{main}", "commit")]
    assert {e["client"] for e in entries} == {"cli"} and all(e["who"] and e["app_id"] for e in entries)
    assert [e["id"] for e in as_json("reflog", "r", "dev", "-n", "1")] == [entries[0]["id"]]
    table = run("reflog", "r")
    assert table.exit_code == EXIT_OK and "reflog@{4}" in table.stdout and "delete" in table.stdout
    # piped into a narrow consumer (80 columns, no terminal): the table keeps its natural width, one line per entry
    piped = CliRunner(env={"COLUMNS": "80", "NO_COLOR": "1"}).invoke(app, ["reflog", "r"], catch_exceptions=False)
    header = next(line for line in piped.stdout.splitlines() if "operation" in line)
    assert all(c in header for c in ("id", "old_image", "new_image", "client", "detail")), piped.stdout
    assert sum("│" in line for line in piped.stdout.splitlines()) == len(entries), piped.stdout
    # restore dev from its deletion's entry
    assert run("branch", "r", "dev", entries[0]["id"]).exit_code == EXIT_OK
    assert Repository(spark, "r").resolve("dev") == entries[0]["old_image"]
    # an unknown entry: REF_NOT_FOUND, nothing created; a bad limit is a usage error
    before, count = refs_state(Repository(spark, "r")), len(as_json("reflog", "r"))
    bad = run("branch", "r", "again", "reflog@{99}")
    assert bad.exit_code == EXIT_ERROR and bad.stderr.startswith("[REF_NOT_FOUND]")
    assert refs_state(Repository(spark, "r")) == before and len(as_json("reflog", "r")) == count
    assert run("reflog", "r", "-n", "0").exit_code == EXIT_USAGE
    assert all(o["status"] == "ok" for o in as_json("verify", "r"))


def test_log_shows_who_committed_and_retention_changes_are_audited(spark: SparkSession, tmp_path: Any) -> None:
    csv = tmp_path / "t.csv"
    csv.write_text("id,name\n1,a\n")
    assert run("import", str(csv), "r.t", "--key", "id").exit_code == EXIT_OK
    commits = as_json("log", "r")
    assert [(c["committer"] is not None, c["client"]) for c in commits] == [(True, "cli")] and commits[0]["app_id"]
    moves = as_json("reflog", "r")
    assert (moves[0]["who"], moves[0]["client"]) == (commits[0]["committer"], "cli")
    long = run("log", "r", "--no-pager")
    assert long.exit_code == EXIT_OK and f"Committer: {commits[0]['committer']} (cli, " in long.stdout
    # a retention policy set, then removed: two entries on retention/<pattern>
    assert run("retention", "r", "feature/*", "--keep-commits", "5").exit_code == EXIT_OK
    assert run("retention", "r", "feature/*", "--remove").exit_code == EXIT_OK
    changes = as_json("reflog", "r", "retention/feature/*")
    assert [(e["operation"], e["client"]) for e in changes] == [("unretain", "cli"), ("retain", "cli")]
    assert "keep_commits=5" in changes[1]["detail"]
    assert all(o["status"] == "ok" for o in as_json("verify", "r"))
