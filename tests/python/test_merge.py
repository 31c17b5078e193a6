"""Repository.merge, cherry_pick and revert, and the SQL procedures (docs/MERGE.md)."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import SparkSession

from versioned import (ImmutableRef, InvalidOption, MergeConflict, MergeResult, RefNotFound, Repository,
                       SchemaMismatch)
from conftest import frame, refs_state, rows_of


# Every test runs on a classic and on a Spark Connect session (conftest.py).
SESSIONS = ("classic", "connect")


def _diverge(spark: SparkSession, repo: Repository) -> None:
    """dev renames 1 and adds 4; main renames 2 and adds 5 (no conflict)."""
    repo.create_branch("dev", from_ref="main")
    repo.upsert(frame(spark, [(1, "A"), (4, "d")]), "t", branch="dev")
    repo.upsert(frame(spark, [(2, "B"), (5, "e")]), "t", branch="main")


def test_merge_combines_both_sides_in_a_two_parent_commit(spark: SparkSession, repo: Repository) -> None:
    _diverge(spark, repo)
    ours, theirs = repo.resolve("main"), repo.resolve("dev")
    result = repo.merge("dev", into="main", message="bring dev in", author="alice")
    assert isinstance(result, MergeResult) and result.ok and result.status == "merged"
    assert result.commit == repo.resolve("main") and not result.fast_forward
    assert rows_of(spark.read.versioned("r.t")) == [(1, "A"), (2, "B"), (3, "c"), (4, "d"), (5, "e")]
    [top] = repo.log(limit=1).collect()
    assert (top["parents"], top["message"], top["author"]) == ([ours, theirs], "bring dev in", "alice")
    assert [(r["table"], r["action"], r["upserts"]) for r in result.tables.collect()] == [("t", "merge", 2)]
    assert repo.merge("dev").status == "up_to_date"


def test_fast_forward_and_dry_run(spark: SparkSession, repo: Repository) -> None:
    repo.create_branch("dev", from_ref="main")
    repo.upsert(frame(spark, [(9, "z")]), "t", branch="dev")
    before = refs_state(repo)
    dry = repo.merge("dev", dry_run=True)
    assert (dry.status, dry.fast_forward) == ("fast_forward", True)
    assert refs_state(repo) == before
    assert repo.merge("dev").status == "fast_forward"
    assert repo.resolve("main") == repo.resolve("dev")


def test_conflicts_are_returned_and_nothing_is_committed(spark: SparkSession, repo: Repository) -> None:
    repo.create_branch("dev", from_ref="main")
    repo.upsert(frame(spark, [(1, "dev")]), "t", branch="dev")
    repo.upsert(frame(spark, [(1, "main")]), "t")
    before = refs_state(repo)
    result = repo.merge("dev")
    assert result.status == "conflicts" and result.commit is None and result.conflict_count == 1
    [c] = result.conflicts.collect()
    assert (c["table"], json.loads(c["key"]), c["column"], c["base"], c["ours"], c["theirs"], c["kind"]) == \
        ("t", {"id": 1}, "name", "a", "main", "dev", "update")
    assert refs_state(repo) == before
    with pytest.raises(MergeConflict):
        result.check()
    fixed = frame(spark, [(1, "both")])
    assert repo.merge("dev", resolutions={"t": fixed}).check().status == "merged"
    assert rows_of(spark.read.versioned("r.t")) == [(1, "both"), (2, "b"), (3, "c")]


def test_strategies(spark: SparkSession, repo: Repository) -> None:
    repo.create_branch("dev", from_ref="main")
    repo.upsert(frame(spark, [(1, "dev")]), "t", branch="dev")
    repo.upsert(frame(spark, [(1, "main")]), "t")
    assert repo.merge("dev", strategy="ours").status == "merged"
    assert rows_of(spark.read.versioned("r.t")) == [(1, "main"), (2, "b"), (3, "c")]
    repo.upsert(frame(spark, [(2, "dev")]), "t", branch="dev")
    repo.upsert(frame(spark, [(2, "main")]), "t")
    repo.merge("dev", strategy="theirs").check()
    assert rows_of(spark.read.versioned("r.t")) == [(1, "main"), (2, "dev"), (3, "c")]


def test_cherry_pick_then_revert(spark: SparkSession, repo: Repository) -> None:
    repo.create_branch("dev", from_ref="main")
    repo.upsert(frame(spark, [(7, "g")]), "t", branch="dev")
    before = rows_of(spark.read.versioned("r.t"))
    picked = repo.cherry_pick("dev", onto="main").check()
    assert rows_of(spark.read.versioned("r.t")) == before + [(7, "g")]
    assert repo.log(limit=1).collect()[0]["message"].startswith("cherry-pick ")
    repo.revert(picked.commit, on="main").check()
    assert rows_of(spark.read.versioned("r.t")) == before


def test_sql_procedures(spark: SparkSession, repo: Repository) -> None:
    _diverge(spark, repo)
    spark.conf.set("spark.sql.catalog.vcm", "versioned.spark.catalog.VersionedCatalog")
    [c] = spark.sql("CALL vcm.system.merge_conflicts(repository => 'r', source => 'dev')").collect() or [None]
    assert c is None
    [row] = spark.sql("CALL vcm.system.merge(repository => 'r', source => 'dev', target => 'main')").collect()
    assert row["status"] == "merged" and row["commit"] == repo.resolve("main") and row["conflicts"] == 0
    [rev] = spark.sql(f"CALL vcm.system.revert('r', '{row['commit']}', 'main', '1')").collect()
    assert rev["status"] == "merged"
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "B"), (3, "c"), (5, "e")]


def test_bad_input_commits_nothing(spark: SparkSession, repo: Repository) -> None:
    _diverge(spark, repo)
    repo.create_tag("v1", "main")
    before = refs_state(repo)
    with pytest.raises(RefNotFound):
        repo.merge("nope")
    with pytest.raises(ImmutableRef):
        repo.merge("dev", into="v1")
    with pytest.raises(InvalidOption):
        repo.merge("main", into="main")
    with pytest.raises(InvalidOption):
        repo.merge("dev", strategy="mine")
    with pytest.raises(MergeConflict):
        repo.merge("dev", fast_forward="only")
    with pytest.raises(SchemaMismatch):
        repo.upsert(frame(spark, [(1, "x")]), "t", branch="dev")
        repo.upsert(frame(spark, [(1, "y")]), "t")
        repo.merge("dev", resolutions={"t": frame(spark, [(1, "z", 1)], "id long, name string, extra int")})
    assert refs_state(repo)["tags"] == before["tags"]
    # a parent is 1-based: 0 or a negative one is refused, not taken as "not given"
    head = repo.resolve(repo.default_branch)
    for parent in (0, -1):
        with pytest.raises(InvalidOption, match="1-based"):
            repo.revert(repo.default_branch, parent=parent)
        with pytest.raises(InvalidOption, match="1-based"):
            repo.cherry_pick("dev", parent=parent)
    assert repo.resolve(repo.default_branch) == head


def test_column_added_on_one_side_merges_with_rows_changed_on_the_other(spark: SparkSession,
                                                                        repo: Repository) -> None:
    """dev adds a column (ALTER TABLE) and fills it for one row; main changes rows: the merge has both."""
    repo.create_branch("dev", from_ref="main")
    spark.conf.set("spark.sql.catalog.vcm", "versioned.spark.catalog.VersionedCatalog")
    spark.sql("ALTER TABLE vcm.r.`t@dev` ADD COLUMN price int")
    spark.sql("UPDATE vcm.r.`t@dev` SET price = 10 WHERE id = 1")
    repo.upsert(frame(spark, [(2, "B"), (4, "d")]), "t")
    ours, theirs = repo.resolve("main"), repo.resolve("dev")
    result = repo.merge("dev").check()
    assert result.status == "merged" and result.conflict_count == 0
    assert [(r["table"], r["action"]) for r in result.tables.collect()] == [("t", "merge")]
    assert repo.log(limit=1).collect()[0]["parents"] == [ours, theirs]
    merged = spark.read.versioned("r.t")
    assert merged.columns == ["id", "name", "price"]
    # main's rows get null in the column dev added; dev's value stays
    assert rows_of(merged) == [(1, "a", 10), (2, "B", None), (3, "c", None), (4, "d", None)]
