"""Branches, tags, locks, reset and resolve through Repository, with their error cases."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from versioned import (ImmutableRef, InvalidName, InvalidRevision, NotFoundError, ProtectedRef, RefExists,
                       RefNotFound, RefStateError, Repository, RepositoryNotFound)
from conftest import frame, refs_state, rows_of


# Every test runs on a classic and on a Spark Connect session (conftest.py).
SESSIONS = ("classic", "connect")


def names(df) -> list:
    return [r["name"] for r in df.collect()]


def test_branches_dataframe(repo: Repository) -> None:
    df = repo.branches()
    assert df.columns == ["name", "kind", "image", "created"]
    [main] = df.collect()
    assert (main["name"], main["kind"], main["image"]) == ("main", "branch", repo.resolve("main"))
    assert main["created"] is not None


def test_create_branch(spark: SparkSession, repo: Repository) -> None:
    head = repo.create_branch("dev")
    assert head == repo.resolve("main") == repo.resolve("dev")
    old = repo.create_branch("feature/old", from_ref="main~1")
    assert old == repo.resolve("main~1")
    assert names(repo.branches()) == ["dev", "feature/old", "main"]
    assert rows_of(spark.read.versioned("r.t", ref="feature/old")) == [(1, "a"), (2, "b")]


def test_create_branch_that_exists(repo: Repository) -> None:
    repo.create_branch("dev", from_ref="main~1")
    before = refs_state(repo)
    with pytest.raises(RefExists) as info:
        repo.create_branch("dev", from_ref="main")
    assert info.value.error_class == "REF_EXISTS" and isinstance(info.value, RefStateError)
    with pytest.raises(RefExists):
        repo.create_branch("main")
    assert refs_state(repo) == before


@pytest.mark.parametrize("bad", ["a..b", "has space", "x~1", "x^", "-x", "a/", "x.lock", "", "a:b", "q?", "0" * 64])
def test_invalid_branch_names(repo: Repository, bad: str) -> None:
    before = refs_state(repo)
    with pytest.raises(InvalidName):
        repo.create_branch(bad)
    assert refs_state(repo) == before


def test_invalid_tag_and_lock_names(repo: Repository) -> None:
    before = refs_state(repo)
    with pytest.raises(InvalidName):
        repo.create_tag("bad tag", "main")
    with pytest.raises(InvalidName):
        repo.create_lock("ns/x", "n", "main")
    with pytest.raises(InvalidName):
        repo.create_lock("ns", "a:b", "main")
    with pytest.raises(InvalidName):
        Repository(repo.spark, "bad repo").branches()
    assert refs_state(repo) == before


def test_create_branch_from_unknown_ref(repo: Repository) -> None:
    before = refs_state(repo)
    with pytest.raises(RefNotFound) as info:
        repo.create_branch("dev", from_ref="nope")
    assert isinstance(info.value, NotFoundError) and isinstance(info.value, LookupError)
    assert refs_state(repo) == before


def test_delete_branch(repo: Repository) -> None:
    repo.create_branch("dev")
    repo.delete_branch("dev")
    assert names(repo.branches()) == ["main"]
    before = refs_state(repo)
    with pytest.raises(RefNotFound):
        repo.delete_branch("dev")
    assert refs_state(repo) == before


def test_delete_default_branch_is_protected(repo: Repository) -> None:
    repo.create_branch("dev")
    before = refs_state(repo)
    with pytest.raises(ProtectedRef):
        repo.delete_branch("main")
    assert refs_state(repo) == before


def test_rename_branch(spark: SparkSession, repo: Repository) -> None:
    head = repo.create_branch("dev")
    repo.rename_branch("dev", "develop")
    assert names(repo.branches()) == ["develop", "main"]
    assert repo.resolve("develop") == head
    before = refs_state(repo)
    with pytest.raises(RefExists):
        repo.rename_branch("develop", "main")
    with pytest.raises(RefNotFound):
        repo.rename_branch("dev", "x")
    assert refs_state(repo) == before


def test_rename_default_branch_moves_default(spark: SparkSession, repo: Repository) -> None:
    repo.rename_branch("main", "trunk")
    assert names(repo.branches()) == ["trunk"]
    assert len(rows_of(spark.read.versioned("r.t"))) == 3
    with pytest.raises(ProtectedRef):
        repo.delete_branch("trunk")


def test_reset(spark: SparkSession, repo: Repository) -> None:
    second = repo.resolve("main")
    first = repo.reset("main", "main~1")
    assert first == repo.resolve("main") != second
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b")]
    assert repo.reset("main", second) == second
    assert len(rows_of(spark.read.versioned("r.t"))) == 3


def test_reset_errors(repo: Repository) -> None:
    repo.create_tag("v1", "main~1")
    before = refs_state(repo)
    with pytest.raises(ImmutableRef):
        repo.reset("v1", "main")
    with pytest.raises(RefNotFound):
        repo.reset("nope", "main")
    with pytest.raises(RefNotFound):
        repo.reset("main", "nope")
    assert refs_state(repo) == before


def test_tags(spark: SparkSession, repo: Repository) -> None:
    first = repo.create_tag("v1", "main~1")
    assert first == repo.resolve("main~1") == repo.resolve("v1") == repo.resolve("tags/v1")
    [row] = repo.tags().collect()
    assert (row["name"], row["kind"], row["image"]) == ("v1", "tag", first)
    assert rows_of(spark.read.versioned("r.t", ref="v1")) == [(1, "a"), (2, "b")]
    repo.delete_tag("v1")
    assert repo.tags().collect() == []


def test_moving_a_tag_fails(spark: SparkSession, repo: Repository) -> None:
    repo.create_tag("v1", "main~1")
    before = refs_state(repo)
    with pytest.raises(RefExists):
        repo.create_tag("v1", "main")
    with pytest.raises(RefExists):
        repo.create_tag("v1", "main~1")
    with pytest.raises(ImmutableRef):
        frame(spark, [(9, "z")]).write.versioned("r.t", branch="v1")
    assert refs_state(repo) == before
    assert rows_of(spark.read.versioned("r.t", ref="v1")) == [(1, "a"), (2, "b")]


def test_delete_unknown_tag(repo: Repository) -> None:
    before = refs_state(repo)
    with pytest.raises(RefNotFound):
        repo.delete_tag("nope")
    assert refs_state(repo) == before


def test_locks(spark: SparkSession, repo: Repository) -> None:
    a = repo.create_lock("etl", "run-1", "main~1")
    b = repo.create_lock("etl", "run-2", "main")
    repo.create_lock("audit", "q1", "main")
    assert a == repo.resolve("etl:run-1") == repo.resolve("main~1")
    assert b == repo.resolve("locks/etl:run-2")
    assert names(repo.locks()) == ["audit:q1", "etl:run-1", "etl:run-2"]
    assert names(repo.locks("etl")) == ["etl:run-1", "etl:run-2"]
    assert {r["kind"] for r in repo.locks().collect()} == {"lock"}
    assert rows_of(spark.read.versioned("r.t", ref="etl:run-1")) == [(1, "a"), (2, "b")]
    # a lock pins its image while the branch moves on
    frame(spark, [(9, "z")]).write.versioned("r.t")
    assert repo.resolve("etl:run-2") == b != repo.resolve("main")


def test_release_and_recreate_lock(repo: Repository) -> None:
    first = repo.create_lock("etl", "run", "main~1")
    before = refs_state(repo)
    with pytest.raises(RefExists):
        repo.create_lock("etl", "run", "main")
    assert refs_state(repo) == before
    repo.release_lock("etl", "run")
    assert repo.locks().collect() == []
    released = refs_state(repo)
    with pytest.raises(RefNotFound):
        repo.release_lock("etl", "run")
    with pytest.raises(RefNotFound):
        repo.resolve("etl:run")
    assert refs_state(repo) == released
    second = repo.create_lock("etl", "run", "main")
    assert second == repo.resolve("main") != first
    assert names(repo.locks("etl")) == ["etl:run"]


def test_resolve(repo: Repository) -> None:
    head = repo.resolve("main")
    assert len(head) == 64
    assert repo.resolve("heads/main") == head
    assert repo.resolve(head) == head
    assert repo.resolve(head[:6]) == head
    assert repo.resolve(head.upper()[:6]) == head
    assert repo.resolve("main~1") == repo.resolve("main^") == repo.resolve("main^1") == repo.resolve(head + "~")
    assert repo.resolve("main~0") == head


def test_resolve_errors(repo: Repository) -> None:
    before = refs_state(repo)
    with pytest.raises(RefNotFound):
        repo.resolve("nope")
    with pytest.raises(RefNotFound):
        repo.resolve("ffff")
    with pytest.raises(InvalidRevision):
        repo.resolve("")
    with pytest.raises(InvalidRevision):
        repo.resolve("~1")
    with pytest.raises(RepositoryNotFound):
        Repository(repo.spark, "nope").resolve("main")
    assert refs_state(repo) == before


def test_unknown_repository(spark: SparkSession) -> None:
    other = Repository(spark, "nope")
    for call in (other.branches, other.tags, other.locks, other.log, other.show):
        with pytest.raises(RepositoryNotFound):
            call()
    with pytest.raises(RepositoryNotFound):
        other.create_branch("dev")
    with pytest.raises(RepositoryNotFound):
        other.create_tag("v1", "main")
    assert repr(other) == "Repository('nope')"
