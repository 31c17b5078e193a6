"""Protected branches and checks from Python, on classic and Spark Connect sessions (docs/GOVERNANCE.md)."""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from pyspark.sql import SparkSession

from versioned import CheckFailed, CheckInvalid, CheckNotFound, InvalidOption, ProtectedRef, Repository
from conftest import frame, refs_state, rows_of

SESSIONS = ("classic", "connect")


def _gated(spark: SparkSession, repo: Repository) -> str:
    """The default branch protected with a required check (ids are positive); a branch 'dev' to write to."""
    main = repo.default_branch
    repo.add_check("positive_id", "id > 0", table="t")
    repo.create_branch("dev")
    repo.protect(main, checks=["positive_id"])
    return main


def test_direct_writes_to_a_protected_branch_are_refused(spark: SparkSession, repo: Repository) -> None:
    main = _gated(spark, repo)
    before = refs_state(repo)
    with pytest.raises(ProtectedRef, match="rule"):
        frame(spark, [(9, "z")]).write.versioned("r.t")
    with pytest.raises(ProtectedRef):
        repo.upsert(frame(spark, [(1, "A")]), "t")
    with pytest.raises(ProtectedRef):
        repo.delete_where("t", "id = 1")
    with pytest.raises(ProtectedRef):
        repo.reset(main, "dev")
    with pytest.raises(ProtectedRef):
        repo.delete_branch(main)
    with pytest.raises(ProtectedRef):
        with repo.transaction() as tx:
            tx.write(frame(spark, [(8, "y")]), "t")
    assert refs_state(repo) == before
    rules = repo.protections().collect()
    assert [(r["pattern"], r["require_merge"], list(r["required_checks"])) for r in rules] == [(main, True, ["positive_id"])]


def test_a_merge_lands_only_when_its_checks_pass(spark: SparkSession, repo: Repository) -> None:
    main = _gated(spark, repo)
    frame(spark, [(-4, "bad"), (-5, "bad")]).write.versioned("r.t", branch="dev")
    head = repo.resolve(main)
    with pytest.raises(CheckFailed, match="positive_id") as caught:
        repo.merge("dev", into=main)
    assert "-4" in str(caught.value) and "2 failing" in str(caught.value)
    assert repo.resolve(main) == head
    runs = {(r["check"], r["status"]) for r in repo.run_checks("dev").collect()}
    assert runs == {("positive_id", "fail")}
    repo.delete_where("t", "id < 0", branch="dev")
    frame(spark, [(4, "d")]).write.versioned("r.t", branch="dev")
    result = repo.merge("dev", into=main)
    assert result.commit is not None and repo.resolve(main) == result.commit
    assert (4, "d") in rows_of(spark.read.format("versioned").load("r.t"))
    recorded = spark.table(f"{_catalog(spark)}.r.`$checks`").collect()
    assert {(r["status"], r["purpose"]) for r in recorded} >= {("fail", f"gate:{main}"), ("pass", f"gate:{main}"),
                                                               ("fail", "run")}


def test_bad_checks_and_rules_are_refused(spark: SparkSession, repo: Repository) -> None:
    # the reason is Spark's: a query or predicate that does not parse says where
    with pytest.raises(CheckInvalid, match="PARSE_SYNTAX_ERROR"):
        repo.add_check("bad", "SELEC 1")
    with pytest.raises(CheckInvalid, match="PARSE_SYNTAX_ERROR"):
        repo.add_check("bad", "id > ", table="t")
    with pytest.raises(CheckInvalid, match="missing"):
        repo.add_check("bad", "id > 0", table="missing")
    with pytest.raises(CheckNotFound):
        repo.protect(repo.default_branch, checks=["bad"])
    with pytest.raises(InvalidOption):
        repo.protect(repo.default_branch, checks="bad")  # type: ignore[arg-type]
    assert repo.checks().collect() == [] and repo.protections().collect() == []
    frame(spark, [(5, "e")]).write.versioned("r.t")  # nothing was protected


def test_publish_dry_run_then_publish(spark: SparkSession, repo: Repository) -> None:
    main = _gated(spark, repo)
    frame(spark, [(-7, "bad")]).write.versioned("r.t", branch="dev")
    head = repo.resolve(main)
    preview = repo.publish("dev", dry_run=True)
    # the required check fails on the merged image: the dry run says the publish would be refused
    assert preview["commit"] is None and preview["status"] == "check_failed" and repo.resolve(main) == head
    assert [(c["check"], c["status"], c["failing_rows"]) for c in preview["checks"]] == [("positive_id", "fail", 1)]
    with pytest.raises(CheckFailed):
        repo.publish("dev", delete_branch=True)
    assert repo.resolve(main) == head and "dev" in {r["name"] for r in repo.branches().collect()}
    repo.delete_where("t", "id < 0", branch="dev")
    frame(spark, [(7, "g")]).write.versioned("r.t", branch="dev")
    assert repo.publish("dev", dry_run=True)["status"] == "merged"
    done = repo.publish("dev", delete_branch=True)
    assert done["branch_deleted"] and repo.resolve(main) == done["commit"]
    assert [(c["check"], c["status"]) for c in done["checks"]] == [("positive_id", "pass")]
    assert "dev" not in {r["name"] for r in repo.branches().collect()}


def test_bisect_finds_the_first_failing_commit(spark: SparkSession, repo: Repository) -> None:
    good = repo.resolve()
    heads: List[str] = []
    for i in range(4, 8):
        heads.append(repo.upsert(frame(spark, [(i, "bad" if i == 6 else "ok")]), "t"))
    found = repo.bisect("SELECT id FROM t WHERE name = 'bad'", good)
    assert found["first_bad"] == heads[2] and found["last_good"] == heads[1] and found["candidates"] == 4
    assert len(found["runs"]) <= 3
    with pytest.raises(InvalidOption):
        repo.bisect("SELECT id FROM t WHERE name = 'bad'", good, heads[1])


def _catalog(spark: SparkSession) -> str:
    from versioned._connect import catalog
    return catalog(spark, None)


@pytest.mark.classic_only
def test_cli_protects_adds_and_runs_checks(spark: SparkSession, repo: Repository) -> None:
    from click.testing import CliRunner

    from versioned.cli import EXIT_ERROR, EXIT_OK, app

    def run(*args: str) -> Any:
        return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args), catch_exceptions=False)

    main = repo.default_branch
    assert run("check", "add", "r", "small_ids", "id < 3", "--table", "t").exit_code == EXIT_OK
    listed = run("protect", "r", main, "--check", "small_ids", "--format", "json")
    assert listed.exit_code == EXIT_OK and '"small_ids"' in listed.stdout
    failing = run("check", "run", "r", main, "--format", "json")  # row 3 fails the predicate
    assert failing.exit_code == EXIT_ERROR and "[CHECK_FAILED]" in failing.stderr and '"fail"' in failing.stdout
    refused = run("reset", "r", main, f"{main}~1")
    assert refused.exit_code == EXIT_ERROR and refused.stderr.startswith("[PROTECTED_REF] ")
    bad = run("check", "add", "r", "broken", "SELEC 1")
    assert bad.exit_code == EXIT_ERROR and bad.stderr.startswith("[CHECK_INVALID] ")
    runs = run("check", "runs", "r", "--format", "json")
    assert runs.exit_code == EXIT_OK and '"small_ids"' in runs.stdout
    repo.create_branch("dev")
    frame(spark, [(9, "z")]).write.versioned("r.t", branch="dev")
    preview = run("publish", "r", "dev", "--dry-run", "--format", "json")
    # id 9 fails small_ids: the dry run shows it and exits 1, as the publish would be refused
    assert preview.exit_code == EXIT_ERROR and '"fail"' in preview.stdout and '"check_failed"' in preview.stdout
    assert preview.stderr.startswith("[CHECK_FAILED] the publish would be refused: small_ids")
    table = run("publish", "r", "dev", "--dry-run")
    assert table.exit_code == EXIT_ERROR and "Would not publish dev" in table.stdout, table.stdout
    assert run("publish", "r", "dev").stderr.startswith("[CHECK_FAILED] ")
    assert run("unprotect", "r", main).exit_code == EXIT_OK
    assert run("protect", "r", "--format", "json").stdout.strip() == "[]"
