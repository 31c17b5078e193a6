"""DataFrameWriter.versioned and DataFrameReader.versioned."""

from __future__ import annotations

import datetime as dt

import pytest
from pyspark.sql import SparkSession

from versioned import (DuplicateKey, ImageNotFound, ImmutableRef, InvalidOption, InvalidRevision, KeyExists,
                       MissingKeyColumn, NullPrimaryKey, RefNotFound, ReplaceWhereMismatch, Repository,
                       RepositoryNotFound, SchemaMismatch, TableNotFound)
from conftest import frame, refs_state, rows_of


# Every test runs on a classic and on a Spark Connect session (conftest.py).
SESSIONS = ("classic", "connect")


def test_write_append_records_message_and_author(spark: SparkSession, repo: Repository) -> None:
    log = repo.log().collect()
    assert [(r["message"], r["author"]) for r in log] == [("second", "bob"), ("first", "alice")]
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b"), (3, "c")]


def test_write_overwrite(spark: SparkSession, repo: Repository) -> None:
    frame(spark, [(1, "A"), (4, "d")]).write.versioned("r.t", mode="overwrite", message="replace")
    assert rows_of(spark.read.versioned("r.t")) == [(1, "A"), (4, "d")]
    assert rows_of(spark.read.versioned("r.t", ref="main~1")) == [(1, "a"), (2, "b"), (3, "c")]


def test_write_overwrite_replace_where(spark: SparkSession, repo: Repository) -> None:
    before = refs_state(repo)
    # a row outside the condition: typed, nothing committed
    with pytest.raises(ReplaceWhereMismatch):
        frame(spark, [(2, "B"), (1, "x")]).write.versioned("r.t", mode="overwrite", replace_where="id >= 2")
    with pytest.raises(InvalidOption):
        frame(spark, [(2, "B")]).write.versioned("r.t", replace_where="id >= 2")  # mode append
    assert refs_state(repo) == before
    frame(spark, [(2, "B"), (4, "d")]).write.versioned("r.t", mode="overwrite", replace_where="id >= 2",
                                                       message="replace 2..")
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "B"), (4, "d")]
    assert repo.log(limit=1).first()["message"] == "replace 2.."
    assert len(repo.log().collect()) == len(before["history"][repo.default_branch]) + 1


def test_write_upsert(spark: SparkSession, repo: Repository) -> None:
    frame(spark, [(2, "B"), (5, "e")]).write.versioned("r.t", upsert=True)
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "B"), (3, "c"), (5, "e")]


def test_write_composite_primary_key_list(spark: SparkSession) -> None:
    df = spark.createDataFrame([(1, "x", 1.0), (1, "y", 2.0)], "a long, b string, v double")
    df.write.versioned("r.c", primary_key=["a", "b"])
    assert Repository(spark, "r").show()["tables"][0]["primary_key"] == ["a", "b"]


def test_write_to_branch(spark: SparkSession, repo: Repository) -> None:
    repo.create_branch("dev")
    frame(spark, [(9, "z")]).write.versioned("r.t", branch="dev")
    assert rows_of(spark.read.versioned("r.t", ref="dev")) == [(1, "a"), (2, "b"), (3, "c"), (9, "z")]
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b"), (3, "c")]


def test_write_to_tag_is_immutable(spark: SparkSession, repo: Repository) -> None:
    repo.create_tag("v1", "main")
    before = refs_state(repo)
    with pytest.raises(ImmutableRef):
        frame(spark, [(9, "z")]).write.versioned("r.t", branch="v1")
    assert refs_state(repo) == before


def test_write_to_missing_branch(spark: SparkSession, repo: Repository) -> None:
    before = refs_state(repo)
    with pytest.raises(RefNotFound):
        frame(spark, [(9, "z")]).write.versioned("r.t", branch="nope")
    assert refs_state(repo) == before


def test_write_invalid_mode(spark: SparkSession, repo: Repository) -> None:
    before = refs_state(repo)
    with pytest.raises(InvalidOption):
        frame(spark, [(9, "z")]).write.versioned("r.t", mode="error")
    assert refs_state(repo) == before


@pytest.mark.parametrize("rows, schema, error", [
    ([(1, "again")], "id long, name string", KeyExists),
    ([(None, "x")], "id long, name string", NullPrimaryKey),
    ([(7, "x"), (7, "y")], "id long, name string", DuplicateKey),
    ([(7, 1)], "id long, other int", SchemaMismatch),
])
def test_write_validation_errors(spark: SparkSession, repo: Repository, rows, schema, error) -> None:
    before = refs_state(repo)
    with pytest.raises(error):
        spark.createDataFrame(rows, schema).write.versioned("r.t")
    assert refs_state(repo) == before
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b"), (3, "c")]


def test_write_missing_key_column(spark: SparkSession) -> None:
    with pytest.raises(MissingKeyColumn):
        frame(spark, [(1, "a")]).write.versioned("r.t", primary_key="nope")
    with pytest.raises(RepositoryNotFound):
        Repository(spark, "r").branches()


def test_read_by_ref_image_and_prefix(spark: SparkSession, repo: Repository) -> None:
    first = repo.resolve("main~1")
    expected = [(1, "a"), (2, "b")]
    assert rows_of(spark.read.versioned("r.t", ref="main~1")) == expected
    assert rows_of(spark.read.versioned("r.t", ref="main^")) == expected
    assert rows_of(spark.read.versioned("r.t", image=first)) == expected
    assert rows_of(spark.read.versioned("r.t", image=first[:10])) == expected
    assert rows_of(spark.read.versioned("r.t", ref=first[:8])) == expected


def test_read_as_of_forms(spark: SparkSession, repo: Repository) -> None:
    first, second = repo.show("main~1"), repo.show("main")
    ms = first["created_ms"]
    expected = [(1, "a"), (2, "b")]
    assert second["created_ms"] > ms
    assert rows_of(spark.read.versioned("r.t", as_of=ms)) == expected
    assert rows_of(spark.read.versioned("r.t", as_of=first["created"])) == expected
    when = dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc)
    assert rows_of(spark.read.versioned("r.t", as_of=when)) == expected
    assert rows_of(spark.read.versioned("r.t", as_of=when.replace(tzinfo=None))) == expected
    assert len(rows_of(spark.read.versioned("r.t", as_of=second["created_ms"] + 1000))) == 3
    assert len(rows_of(spark.read.versioned("r.t", as_of=ms, ref="main"))) == 2


def test_read_as_of_before_first_commit(spark: SparkSession, repo: Repository) -> None:
    before = refs_state(repo)
    first = repo.show("main~1")["created_ms"]
    with pytest.raises(ImageNotFound):
        spark.read.versioned("r.t", as_of=first - 1)
    with pytest.raises(ImageNotFound):
        spark.read.versioned("r.t", as_of=dt.datetime(2000, 1, 1))
    assert refs_state(repo) == before


def test_read_errors(spark: SparkSession, repo: Repository) -> None:
    with pytest.raises(TableNotFound):
        spark.read.versioned("r.missing")
    with pytest.raises(RepositoryNotFound):
        spark.read.versioned("nope.t")
    with pytest.raises(RefNotFound):
        spark.read.versioned("r.t", ref="nope")
    with pytest.raises(InvalidOption):
        spark.read.versioned("r.t", ref="main", image="abcd")
    with pytest.raises(InvalidRevision):
        spark.read.versioned("r.t", image="xyz!")
    with pytest.raises(InvalidRevision):
        spark.read.versioned("r.t", as_of="not a time")
    with pytest.raises(InvalidOption):
        spark.read.versioned("r.t", as_of=True)
