"""Repository.delete_where and Repository.upsert."""

from __future__ import annotations

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from versioned import (DuplicateKey, ImmutableRef, InvalidName, InvalidOption, NullPrimaryKey, RefNotFound,
                       Repository, RepositoryNotFound, SchemaMismatch, TableNotFound)
from conftest import frame, refs_state, rows_of


# Every test runs on a classic and on a Spark Connect session (conftest.py).
SESSIONS = ("classic", "connect")


def test_delete_where(spark: SparkSession, repo: Repository) -> None:
    before = repo.resolve("main")
    assert repo.delete_where("t", "id >= 2", message="drop", author="carol") == 2
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a")]
    [top] = repo.log(limit=1).collect()
    assert (top["message"], top["author"], top["parents"], top["tables_changed"]) == ("drop", "carol", [before], ["t"])
    assert rows_of(spark.read.versioned("r.t", ref="main~1")) == [(1, "a"), (2, "b"), (3, "c")]
    objects = [o for f in repo.show()["tables"][0]["fragments"] for o in f["objects"]]
    assert objects[-1]["kind"] == "DIFF" and objects[-1]["rows"] == 2


def test_delete_where_default_message_and_then_append(spark: SparkSession, repo: Repository) -> None:
    assert repo.delete_where("t", "name = 'b'") == 1
    assert "delete from t where name = 'b'" in repo.log(limit=1).collect()[0]["message"]
    frame(spark, [(2, "B")]).write.versioned("r.t")
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "B"), (3, "c")]


def test_delete_where_all_rows(spark: SparkSession, repo: Repository) -> None:
    assert repo.delete_where("t", "true") == 3
    assert rows_of(spark.read.versioned("r.t")) == []
    assert spark.read.versioned("r.t").columns == ["id", "name"]


def test_delete_where_nothing_matches_commits_nothing(repo: Repository) -> None:
    before = refs_state(repo)
    assert repo.delete_where("t", "id > 100") == 0
    assert refs_state(repo) == before


def test_delete_where_on_branch(spark: SparkSession, repo: Repository) -> None:
    repo.create_branch("dev")
    assert repo.delete_where("t", "id = 1", branch="dev") == 1
    assert rows_of(spark.read.versioned("r.t", ref="dev")) == [(2, "b"), (3, "c")]
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b"), (3, "c")]


def test_delete_where_keyless_table(spark: SparkSession) -> None:
    rows = [("a", 1), ("a", 1), ("b", 2), ("c", 3)]
    spark.createDataFrame(rows, "k string, v int").write.versioned("r.nk")
    repo = Repository(spark, "r")
    assert repo.delete_where("nk", "k = 'a' or v = 3") == 3
    assert rows_of(spark.read.versioned("r.nk")) == [("b", 2)]
    spark.createDataFrame([("a", 1)], "k string, v int").write.versioned("r.nk")
    assert rows_of(spark.read.versioned("r.nk")) == [("a", 1), ("b", 2)]
    assert rows_of(spark.read.versioned("r.nk", ref="main~2")) == sorted(rows)


def test_delete_where_errors(spark: SparkSession, repo: Repository) -> None:
    repo.create_tag("v1", "main")
    before = refs_state(repo)
    with pytest.raises(TableNotFound):
        repo.delete_where("missing", "id = 1")
    with pytest.raises(ImmutableRef):
        repo.delete_where("t", "id = 1", branch="v1")
    with pytest.raises(RefNotFound):
        repo.delete_where("t", "id = 1", branch="nope")
    with pytest.raises(InvalidOption):
        repo.delete_where("t", "  ")
    with pytest.raises(InvalidName):
        repo.delete_where("bad name", "id = 1")
    with pytest.raises(AnalysisException):
        repo.delete_where("t", "no_such_column = 1")
    with pytest.raises(AnalysisException):
        repo.delete_where("t", "id = = 1")
    # a key set (the driver's key-delete path) with a bad rest of the condition: the same errors
    with pytest.raises(AnalysisException):
        repo.delete_where("t", "id IN (1, 2) AND no_such_column = 1")
    with pytest.raises(AnalysisException):
        repo.delete_where("t", "id IN (1, 2")
    with pytest.raises(RepositoryNotFound):
        Repository(spark, "nope").delete_where("t", "id = 1")
    assert refs_state(repo) == before
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b"), (3, "c")]


def test_upsert(spark: SparkSession, repo: Repository) -> None:
    head = repo.upsert(frame(spark, [(2, "B"), (4, "d")]), "t", message="sync", author="dave")
    assert head == repo.resolve("main")
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "B"), (3, "c"), (4, "d")]
    [top] = repo.log(limit=1).collect()
    assert (top["message"], top["author"]) == ("sync", "dave")


def test_upsert_default_message(spark: SparkSession, repo: Repository) -> None:
    repo.upsert(frame(spark, [(1, "A")]), "t")
    assert repo.log(limit=1).collect()[0]["message"] == "upsert into t"


def test_upsert_creates_table_and_repository(spark: SparkSession) -> None:
    repo = Repository(spark, "fresh")
    head = repo.upsert(frame(spark, [(1, "a")]), "t", primary_key=["id"])
    assert head == repo.resolve("main")
    assert repo.show()["tables"][0]["primary_key"] == ["id"]
    repo.upsert(frame(spark, [(1, "b")]), "t")
    assert rows_of(spark.read.versioned("fresh.t")) == [(1, "b")]


def test_upsert_on_branch(spark: SparkSession, repo: Repository) -> None:
    repo.create_branch("dev")
    head = repo.upsert(frame(spark, [(3, "C")]), "t", branch="dev")
    assert head == repo.resolve("dev") != repo.resolve("main")
    assert rows_of(spark.read.versioned("r.t", ref="dev")) == [(1, "a"), (2, "b"), (3, "C")]


def test_upsert_with_before_images(spark: SparkSession, repo: Repository) -> None:
    before = repo.resolve("main")
    cdc = spark.createDataFrame([(2, "B", False), (3, None, True), (5, "e", False)], "id long, name string, gone boolean")
    head = repo.upsert(cdc, "t", delete_column="gone", before_images=True, message="cdc")
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "B"), (5, "e")]
    changes = sorted(tuple(r) for r in repo.diff("t", before, head).collect())
    assert changes == [("delete", 3, "c", None), ("insert", 5, None, "e"), ("update", 2, "b", "B")]
    with pytest.raises(InvalidOption, match="beforeImages"):
        frame(spark, [(9, "z")]).write.format("versioned").option("upsert", "true") \
            .option("beforeImages", "maybe").mode("append").save("r.t")
    assert repo.resolve("main") == head


def test_upsert_errors(spark: SparkSession, repo: Repository) -> None:
    repo.create_tag("v1", "main")
    before = refs_state(repo)
    with pytest.raises(ImmutableRef):
        repo.upsert(frame(spark, [(1, "x")]), "t", branch="v1")
    with pytest.raises(RefNotFound):
        repo.upsert(frame(spark, [(1, "x")]), "t", branch="nope")
    with pytest.raises(NullPrimaryKey):
        repo.upsert(frame(spark, [(None, "x")]), "t")
    with pytest.raises(DuplicateKey):
        repo.upsert(frame(spark, [(1, "x"), (1, "y")]), "t")
    with pytest.raises(SchemaMismatch):
        repo.upsert(spark.createDataFrame([(1, 2)], "id long, n int"), "t")
    assert refs_state(repo) == before
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b"), (3, "c")]


def test_upsert_into_a_table_without_primary_key_is_refused(spark: SparkSession) -> None:
    events = spark.createDataFrame([("2026-01-01", 1)], "day string, n int")
    events.write.versioned("k.events")
    repo = Repository(spark, "k")
    before = refs_state(repo)
    with pytest.raises(InvalidOption, match="needs a primary key"):
        repo.upsert(spark.createDataFrame([("2026-01-02", 2)], "day string, n int"), "events")
    with pytest.raises(InvalidOption, match="needs a primary key"):
        spark.createDataFrame([("2026-01-02", 2)], "day string, n int").write.versioned("k.events", upsert=True)
    assert refs_state(repo) == before
    assert rows_of(spark.read.versioned("k.events")) == [("2026-01-01", 1)]
