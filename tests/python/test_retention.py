"""Squash merges and retention policies by ref from Python, on classic and Spark Connect sessions, and from the CLI
(docs/MERGE.md, "Squash merges"; docs/SAFETY.md, "Retention policies")."""

from __future__ import annotations

import json
from typing import Any, List

import pytest
from click.testing import CliRunner
from pyspark.sql import SparkSession

from conftest import frame, refs_state, rows_of
from versioned import InvalidOption, ProtectedRef, RefNotFound, Repository, VersionExpired
from versioned.cli import EXIT_ERROR, EXIT_OK, app
from versioned.reader import open_warehouse

SESSIONS = ("classic", "connect")


def _head(repo: Repository, ref: str) -> Any:
    return repo.log(ref, limit=1).collect()[0]


def _feature(spark: SparkSession, repo: Repository, name: str = "feature/x", commits: int = 2) -> List[str]:
    repo.create_branch(name)
    out = []
    for i in range(commits):
        frame(spark, [(10 + i, f"f{i}")]).write.versioned("r.t", branch=name, message=f"feature {i}\nmore")
        out.append(repo.resolve(name))
    return out


def test_squash_merge_is_one_commit_with_one_parent(spark: SparkSession, repo: Repository) -> None:
    main = repo.default_branch
    commits = _feature(spark, repo, "dev")
    before = repo.resolve(main)
    result = repo.merge("dev", squash=True)
    assert result.ok and result.status == "merged" and not result.fast_forward
    head = _head(repo, main)
    assert head["hash"] == result.commit and list(head["parents"]) == [before]
    assert head["message"].startswith(f"squash merge dev into {main}\n")
    for i, h in enumerate(commits):
        assert f"* {h[:12]} feature {i}" in head["message"]
    assert rows_of(spark.read.versioned("r.t")) == rows_of(spark.read.versioned("r.t", ref="dev"))


def test_squash_merge_conflicts_commit_nothing(spark: SparkSession, repo: Repository) -> None:
    repo.create_branch("dev")
    frame(spark, [(1, "dev")]).write.versioned("r.t", branch="dev", upsert=True)
    frame(spark, [(1, "main")]).write.versioned("r.t", upsert=True)
    before = refs_state(repo)
    result = repo.merge("dev", squash=True)
    assert not result.ok and result.conflict_count == 1 and result.commit is None
    assert refs_state(repo) == before
    repo.protect(repo.default_branch)
    with pytest.raises(ProtectedRef, match="squash"):
        repo.merge("dev", squash=True, strategy="theirs")
    with pytest.raises(InvalidOption):
        repo.merge("dev", squash="yes")  # type: ignore[arg-type]
    assert refs_state(repo) == before


def test_retention_policy_expires_old_versions_gc_says_why(spark: SparkSession, repo: Repository,
                                                            warehouse: str) -> None:
    commits = _feature(spark, repo, commits=3)
    policy = repo.set_retention("feature/*", keep_commits=1)
    assert [tuple(r) for r in policy.collect()] == [("feature/*", None, 1, None)]
    assert [tuple(r) for r in repo.retention().collect()] == [("feature/*", None, 1, None)]
    planned = repo.gc(older_than_seconds=0, force=True, dry_run=True).collect()
    images = {r["name"]: r["reason"] for r in planned if r["kind"] == "image"}
    assert set(images) == {f"r@{h}" for h in commits[:2]}
    assert all("retention policy 'feature/*' (keep_commits=1)" in why for why in images.values())
    assert rows_of(spark.read.versioned("r.t", ref="feature/x~1")) == [(1, "a"), (2, "b"), (3, "c"), (10, "f0"), (11, "f1")]
    assert repo.gc(dry_run=True).filter("kind = 'image'").count() == 0  # the default retention is the floor
    logged = repo.log("feature/x").count()
    done = repo.gc(older_than_seconds=0, force=True).collect()
    assert {r["name"] for r in done if r["kind"] == "image"} == set(images)
    with pytest.raises(VersionExpired, match="feature/"):
        spark.read.versioned("r.t", ref="feature/x~1").collect()
    with pytest.raises(VersionExpired):
        repo.create_branch("old", from_ref=commits[0])
    reader = open_warehouse(warehouse).repository("r")  # the Spark-free reader says the same
    with pytest.raises(VersionExpired, match="feature/"):
        reader.table("t", "feature/x~1")
    assert len(reader.table("t", "feature/x").to_arrow()) == 6
    assert len(rows_of(spark.read.versioned("r.t", ref="feature/x"))) == 6
    assert repo.log("feature/x").count() == logged  # the expired commits stay in the log
    repo.remove_retention("feature/*")
    assert repo.retention().collect() == []
    with pytest.raises(RefNotFound):
        repo.remove_retention("feature/*")


def test_bad_retention_policies_store_nothing(spark: SparkSession, repo: Repository) -> None:
    with pytest.raises(InvalidOption, match="keep_days"):
        repo.set_retention("x*", keep_days=-1)
    with pytest.raises(InvalidOption, match="keep_commits"):
        repo.set_retention("x*", keep_commits=0)
    with pytest.raises(InvalidOption, match="36500"):
        repo.set_retention("x*", expire_branches_after_days=10 ** 6)
    with pytest.raises(InvalidOption, match="sets nothing"):
        repo.set_retention("x*")
    with pytest.raises(InvalidOption):
        repo.set_retention("x*", keep_days="7")  # type: ignore[arg-type]
    assert repo.retention().collect() == []


def _cli(*args: str) -> Any:
    result = CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == EXIT_OK, (result.stdout, result.stderr)
    return result


@pytest.mark.classic_only
def test_cli_retention_and_squash(spark: SparkSession, repo: Repository) -> None:
    _feature(spark, repo, "dev")
    before = repo.resolve(repo.default_branch)
    _cli("merge", "r", "dev", "--squash", "-m", "squashed dev")
    head = _head(repo, repo.default_branch)
    assert list(head["parents"]) == [before] and head["message"].startswith("squashed dev\n")
    rows = json.loads(_cli("retention", "r", "dev", "--keep-commits", "1", "--format", "json").stdout)
    assert rows == [{"pattern": "dev", "keep_days": None, "keep_commits": 1, "expire_branches_after_days": None}]
    planned = json.loads(_cli("gc", "r", "--older-than", "0", "--force", "--dry-run", "--format", "json").stdout)
    assert any(p["kind"] == "image" and "retention policy 'dev'" in p["reason"] for p in planned)
    bad = CliRunner().invoke(app, ["retention", "r", "dev", "--keep-days", "-3"])
    assert bad.exit_code == EXIT_ERROR and bad.stderr.startswith("[INVALID_OPTION]"), bad.stderr
    assert json.loads(_cli("retention", "r", "--format", "json").stdout) == rows  # the bad value stored nothing
    _cli("retention", "r", "dev", "--remove")
    assert json.loads(_cli("retention", "r", "--format", "json").stdout) == []
