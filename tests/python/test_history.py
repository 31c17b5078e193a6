"""log, show, ancestry past the root and ambiguous hash prefixes."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

import pytest
from pyspark.sql import SparkSession

from versioned import AmbiguousRef, ImageNotFound, InvalidInputError, Repository
from conftest import empty_commits, frame, refs_state, rows_of


# Every test runs on a classic and on a Spark Connect session (conftest.py).
SESSIONS = ("classic", "connect")


def test_log_dataframe(repo: Repository) -> None:
    df = repo.log()
    assert df.columns == ["hash", "parents", "author", "message", "created", "tables_changed", "committer", "app_id",
                          "client"]
    second, first = df.collect()
    assert second["hash"] == repo.resolve("main") and first["hash"] == repo.resolve("main~1")
    assert second["parents"] == [first["hash"]] and first["parents"] == []
    assert (second["author"], second["message"], second["tables_changed"]) == ("bob", "second", ["t"])
    assert isinstance(second["created"], dt.datetime) and second["created"] >= first["created"]


def test_log_limit_and_ref(spark: SparkSession, repo: Repository) -> None:
    assert [r["message"] for r in repo.log(limit=1).collect()] == ["second"]
    assert repo.log(limit=0).collect() == []
    assert [r["message"] for r in repo.log("main~1").collect()] == ["first"]
    repo.create_branch("dev", from_ref="main~1")
    frame(spark, [(7, "g")]).write.versioned("r.t", branch="dev", message="on dev")
    assert [r["message"] for r in repo.log("dev").collect()] == ["on dev", "first"]
    assert [r["message"] for r in repo.log().collect()] == ["second", "first"]


def test_log_is_pinned_and_counts(spark: SparkSession, repo: Repository) -> None:
    df = repo.log()
    frame(spark, [(4, "d")]).write.versioned("r.t", message="third")
    assert df.count() == 2 and [r["message"] for r in df.collect()] == ["second", "first"]
    assert repo.log().count() == 3 and repo.log(limit=2).count() == 2 and repo.log(limit=0).count() == 0
    assert [r["message"] for r in repo.log().select("message").collect()] == ["third", "second", "first"]


def test_log_multiple_tables(spark: SparkSession, repo: Repository) -> None:
    frame(spark, [(1, "x")]).write.versioned("r.u", primary_key="id")
    [top] = repo.log(limit=1).collect()
    assert top["tables_changed"] == ["u"]


def test_show(repo: Repository) -> None:
    info = repo.show("main")
    assert info["image"] == repo.resolve("main")
    assert info["parents"] == [repo.resolve("main~1")]
    assert (info["author"], info["message"]) == ("bob", "second")
    assert info["created"].endswith("Z") and isinstance(info["created_ms"], int)
    assert info["changed_tables"] == ["t"] and info["dropped_tables"] == []
    [table] = info["tables"]
    assert table["name"] == "t" and table["primary_key"] == ["id"] and table["hidden_key"] is False
    assert table["schema"] == "id BIGINT,name STRING"
    assert [c["name"] for c in table["columns"]] == ["id", "name"]
    objects = [o for f in table["fragments"] for o in f["objects"]]
    assert [o["kind"] for o in objects] == ["SNAP", "DIFF"]
    assert [o["rows"] for o in objects] == [2, 1]
    assert all(o["bytes"] > 0 for o in objects)
    assert table["objects"] == 2 and table["bytes"] == sum(o["bytes"] for o in objects)
    assert repo.show() == info


def test_show_unchanged_table_and_first_image(spark: SparkSession, repo: Repository) -> None:
    frame(spark, [(1, "x")]).write.versioned("r.u", primary_key="id")
    info = repo.show("main")
    assert info["changed_tables"] == ["u"]
    assert {t["name"]: t["changed"] for t in info["tables"]} == {"t": False, "u": True}
    assert repo.show("main~2")["parents"] == []


def test_ancestry_past_the_root(spark: SparkSession, repo: Repository) -> None:
    before = refs_state(repo)
    for spec in ("main~2", "main~5", "main^2", "main~1^"):
        with pytest.raises(ImageNotFound):
            repo.resolve(spec)
    with pytest.raises(ImageNotFound):
        repo.log("main~2")
    with pytest.raises(ImageNotFound):
        repo.create_branch("old", from_ref="main~2")
    with pytest.raises(ImageNotFound):
        repo.create_tag("old", "main~3")
    with pytest.raises(ImageNotFound):
        repo.reset("main", "main~2")
    with pytest.raises(ImageNotFound):
        spark.read.versioned("r.t", ref="main~2")
    assert refs_state(repo) == before


@pytest.mark.classic_only
def test_ambiguous_prefix(spark: SparkSession, repo: Repository) -> None:
    by_prefix = defaultdict(list)
    two_rows = repo.resolve("main~1")  # the only version with two rows: the empty commits below keep main's three
    for h in (repo.resolve("main"), two_rows):
        by_prefix[h[:4]].append(h)
    prefix = next((p for p, hs in by_prefix.items() if len(hs) > 1), None)
    commits = empty_commits(spark, "r", "main", 5000)
    while prefix is None:
        h = next(commits)
        by_prefix[h[:4]].append(h)
        if len(by_prefix[h[:4]]) > 1:
            prefix = h[:4]
    a, b = by_prefix[prefix][:2]
    before = refs_state(repo)
    with pytest.raises(AmbiguousRef) as info:
        repo.resolve(prefix)
    assert info.value.error_class == "AMBIGUOUS_REF" and isinstance(info.value, InvalidInputError)
    with pytest.raises(AmbiguousRef):
        repo.create_branch("amb", from_ref=prefix)
    with pytest.raises(AmbiguousRef):
        repo.create_tag("amb", prefix)
    with pytest.raises(AmbiguousRef):
        repo.reset("main", prefix)
    with pytest.raises(AmbiguousRef):
        spark.read.versioned("r.t", image=prefix)
    assert refs_state(repo) == before
    # a longer prefix disambiguates
    n = next(i for i in range(5, 65) if a[:i] != b[:i])
    assert repo.resolve(a[:n]) == a and repo.resolve(b[:n]) == b
    expected = [(1, "a"), (2, "b")] if a == two_rows else [(1, "a"), (2, "b"), (3, "c")]
    assert rows_of(spark.read.versioned("r.t", image=a[:n])) == expected
