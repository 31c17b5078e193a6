"""Row blame: ``Repository.blame`` on classic and Spark Connect sessions (docs/BLAME.md)."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from versioned import Repository, TableNotFound
from conftest import frame, refs_state


SESSIONS = ("classic", "connect")
COMMIT = ["_commit_hash", "_commit_version", "_commit_timestamp", "_commit_author", "_commit_message"]


def blamed(repo: Repository, table: str = "t", ref: str | None = None) -> dict[int, tuple[str, str, str]]:
    return {r["id"]: (r["_commit_hash"], r["_commit_author"], r["_commit_message"])
            for r in repo.blame(table, ref).collect()}


def test_blame_rows_and_commits(spark: SparkSession, repo: Repository) -> None:
    first, second = repo.resolve(f"{repo.default_branch}~1"), repo.resolve()
    df = repo.blame("t")
    assert df.columns == ["id"] + COMMIT
    assert blamed(repo) == {1: (first, "alice", "first"), 2: (first, "alice", "first"), 3: (second, "bob", "second")}
    frame(spark, [(1, "A"), (4, "d")]).write.versioned("r.t", upsert=True, message="third", author="carol")
    third = repo.resolve()
    repo.delete_where("t", "id = 2", message="drop two")
    assert blamed(repo) == {1: (third, "carol", "third"), 3: (second, "bob", "second"), 4: (third, "carol", "third")}
    # at any revision: the rows there, blamed along its own first-parent line
    assert blamed(repo, ref=second) == blamed(repo, ref=f"{repo.default_branch}~2")
    assert set(blamed(repo, ref=second)) == {1, 2, 3}
    row = repo.blame("t").filter("id = 3").collect()[0]
    assert row["_commit_timestamp"] is not None and row["_commit_version"] >= 1


def test_blame_of_a_missing_table_is_table_not_found(spark: SparkSession, repo: Repository) -> None:
    frame(spark, [(1, "x")]).write.versioned("r.u", primary_key="id")
    before = refs_state(repo)
    with pytest.raises(TableNotFound):
        repo.blame("u", f"{repo.default_branch}~1").collect()
    with pytest.raises(TableNotFound):
        repo.blame("nope").collect()
    assert refs_state(repo) == before
