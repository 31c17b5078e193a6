"""Diffs, ref-driven snapshots (materialize/evict) and garbage collection through the Python API."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from versioned import Repository, RefNotFound, SchemaMismatch, TableNotFound
from conftest import frame, rows_of


# Every test runs on a classic and on a Spark Connect session (conftest.py).
SESSIONS = ("classic", "connect")


def test_diff_reports_inserts_updates_and_deletes(spark: SparkSession, repo: Repository) -> None:
    repo.create_tag("v1", "main")
    repo.upsert(frame(spark, [(2, "B"), (4, "d")]), "t", message="update 2, add 4")
    repo.delete_where("t", "id = 1")
    diff = repo.diff("t", "v1", "main")
    assert rows_of(diff) == [("delete", 1, "a", None), ("insert", 4, None, "d"), ("update", 2, "b", "B")]
    assert diff.columns == ["_change", "id", "name_before", "name_after"]
    assert rows_of(repo.diff("t", "main", "main")) == []
    assert rows_of(repo.diff("t", "main", "v1")) == [("delete", 4, "d", None), ("insert", 1, None, "a"),
                                                     ("update", 2, "B", "b")]


def test_diff_of_keyless_table_counts_duplicates(spark: SparkSession) -> None:
    frame(spark, [(1, "a"), (1, "a")]).write.versioned("k.t", message="two copies")
    frame(spark, [(1, "a"), (2, "b")]).write.versioned("k.t", mode="overwrite", message="one copy, add b")
    diff = Repository(spark, "k").diff("t", "main~1", "main")
    assert sorted((r["_change"], r["id"], r["name"]) for r in diff.collect()) == [("delete", 1, "a"), ("insert", 2, "b")]


def test_diff_across_schema_change(spark: SparkSession, repo: Repository) -> None:
    frame(spark, [(1, 5), (2, 7)], "id long, other long").write.versioned("r.t", mode="overwrite", message="new schema")
    diff = repo.diff("t", "main~1", "main")
    assert diff.columns == ["_change", "id", "other_before", "other_after", "name_before", "name_after"]
    assert rows_of(diff) == [("delete", 3, None, None, "c", None), ("update", 1, None, 5, "a", None),
                             ("update", 2, None, 7, "b", None)]


def test_diff_errors(spark: SparkSession, repo: Repository) -> None:
    with pytest.raises(RefNotFound):
        repo.diff("t", "nope", "main")
    frame(spark, [(1, True)], "id long, name boolean").write.versioned("r.t", mode="overwrite", message="new type")
    with pytest.raises(SchemaMismatch):
        repo.diff("t", "main~1", "main")


def test_diff_summary(spark: SparkSession, repo: Repository) -> None:
    repo.create_tag("v1", "main")
    repo.upsert(frame(spark, [(2, "B"), (4, "d")]), "t", message="update 2, add 4")
    repo.delete_where("t", "id = 1")
    frame(spark, [(1, "x")], "k long, v string").write.versioned("r.u", primary_key="k", message="new table")
    summary = repo.diff_summary("v1", "main")
    assert summary.columns == ["table", "inserted", "updated", "deleted", "columns_changed", "cells_changed",
                               "schema_changed"]
    assert [r.asDict() for r in summary.collect()] == [
        {"table": "t", "inserted": 1, "updated": 1, "deleted": 1, "columns_changed": ["name"],
         "cells_changed": {"name": 1}, "schema_changed": False},
        {"table": "u", "inserted": 1, "updated": 0, "deleted": 0, "columns_changed": ["k", "v"],
         "cells_changed": {}, "schema_changed": True}]
    assert [r["table"] for r in repo.diff_summary("v1", "main", table="u").collect()] == ["u"]
    assert repo.diff_summary("main", "main").count() == 0
    spark.conf.set("spark.sql.catalog.vcs", "versioned.spark.catalog.VersionedCatalog")
    assert rows_of(spark.sql("CALL vcs.system.diff_summary('r', 'v1', table => 't')")
                   .select("table", "inserted", "updated", "deleted")) == [("t", 1, 1, 1)]
    with pytest.raises(RefNotFound):
        repo.diff_summary("nope", "main")
    with pytest.raises(TableNotFound):
        repo.diff_summary("v1", "main", table="nope")


@pytest.fixture
def no_commit_compaction(spark: SparkSession):  # type: ignore[no-untyped-def]
    """Chains stay as written, so only materialize() compacts."""
    spark.conf.set("spark.versioned.compaction.maxDiffRatio", "1000")
    yield
    spark.conf.unset("spark.versioned.compaction.maxDiffRatio")


def test_materialize_evict_and_gc_keep_every_version(spark: SparkSession, no_commit_compaction: None) -> None:
    frame(spark, [(1, "a"), (2, "b")]).write.versioned("r.t", primary_key="id", message="first")
    frame(spark, [(3, "c")]).write.versioned("r.t", message="second")
    repo = Repository(spark, "r")
    repo.create_lock("reports", "q3", "main")
    repo.upsert(frame(spark, [(1, "A")]), "t")
    versions = {ref: rows_of(spark.read.versioned("r.t", ref=ref)) for ref in ("main", "main~1", "main~2")}
    heads = {repo.resolve("main"), repo.resolve("reports:q3")}
    done = repo.materialize()
    assert {r["image"] for r in done.collect()} <= heads
    assert all(repo.show(ref)["tables"][0].get("compacted_fragments") for ref in ("main", "reports:q3"))
    repo.release_lock("reports", "q3")
    repo.materialize()
    assert repo.gc(older_than_seconds=0, force=True).count() >= 1
    for ref, expected in versions.items():
        assert rows_of(spark.read.versioned("r.t", ref=ref)) == expected
    assert repo.resolve("main") in heads  # compaction never changes an image hash


def test_upsert_with_delete_column_applies_a_change_feed(spark: SparkSession, repo: Repository) -> None:
    feed = spark.createDataFrame([(1, "A", False), (2, None, True), (9, "z", False), (42, None, True)],
                                 "id long, name string, gone boolean")
    before = repo.resolve("main")
    repo.upsert(feed, "t", delete_column="gone", message="apply feed")
    assert rows_of(spark.read.versioned("r.t")) == [(1, "A"), (3, "c"), (9, "z")]
    assert repo.resolve("main~1") == before
    assert spark.read.versioned("r.t").columns == ["id", "name"]
    with pytest.raises(SchemaMismatch):
        repo.upsert(feed.withColumnRenamed("gone", "g2"), "t", delete_column="gone")
    assert repo.resolve("main~1") == before


def test_compact_runs_the_policy_on_the_head_now(spark: SparkSession, no_commit_compaction: None) -> None:
    frame(spark, [(i, "a") for i in range(10)]).write.versioned("r.t", primary_key="id")
    repo = Repository(spark, "r")
    repo.upsert(frame(spark, [(i, "b") for i in range(10)]), "t")  # every row changed: a 100% DIFF share
    assert not repo.show("main")["tables"][0].get("compacted_fragments")
    spark.conf.unset("spark.versioned.compaction.maxDiffRatio")  # the default policy from here on
    done = repo.compact("t").collect()
    assert [(r["table"], r["image"]) for r in done] == [("t", repo.resolve("main"))]
    assert repo.show("main")["tables"][0].get("compacted_fragments")
    assert rows_of(spark.read.versioned("r.t")) == [(i, "b") for i in range(10)]
    assert repo.compact().count() == 0  # nothing left to do
