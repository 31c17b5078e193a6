"""The repository's default branch is used everywhere a branch or ref is omitted (issue 31, item 2), and can be
read and changed: Repository.default_branch / set_default_branch, on classic and Spark Connect sessions."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

import versioned
from versioned import RefNotFound, Repository
from conftest import frame, refs_state, rows_of

SESSIONS = ("classic", "connect")
CATALOG = "vc_default"


@pytest.fixture
def trunk(spark: SparkSession) -> Repository:
    """Repository 'r' whose default branch is 'trunk' (no 'main'), table 't' = {1:a, 2:b} in two commits made
    without naming a branch."""
    spark.conf.set(f"spark.sql.catalog.{CATALOG}", "versioned.spark.catalog.VersionedCatalog")
    spark.sql(f"CREATE NAMESPACE {CATALOG}.r WITH DBPROPERTIES ('defaultBranch' = 'trunk')")
    repo = Repository(spark, "r")
    assert repo.default_branch == "trunk"  # also before its first commit
    frame(spark, [(1, "a")]).write.versioned("r.t", primary_key="id", message="first")
    frame(spark, [(2, "b")]).write.versioned("r.t", message="second")
    return repo


def names(df) -> list:
    return [r["name"] for r in df.collect()]


def test_writes_and_reads_without_a_branch_use_the_default(spark: SparkSession, trunk: Repository) -> None:
    assert names(trunk.branches()) == ["trunk"]
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b")]
    frame(spark, [(2, "B")]).write.versioned("r.t", upsert=True, message="third")
    assert rows_of(spark.read.versioned("r.t", ref="trunk")) == [(1, "a"), (2, "B")]
    assert names(trunk.branches()) == ["trunk"]


def test_history_and_refs_without_a_ref_use_the_default(spark: SparkSession, trunk: Repository) -> None:
    head = trunk.resolve("trunk")
    assert trunk.resolve() == head
    assert [r["message"] for r in trunk.log().collect()] == ["second", "first"]
    assert trunk.log(limit=1).count() == 1
    assert trunk.show()["image"] == head
    assert trunk.create_branch("dev") == head
    assert trunk.create_tag("v1") == head
    assert trunk.create_lock("etl", "run-1") == head
    assert (trunk.resolve("dev"), trunk.resolve("v1"), trunk.resolve("etl:run-1")) == (head, head, head)
    trunk.upsert(frame(spark, [(3, "c")]), "t", message="upsert")
    assert trunk.delete_where("t", "id = 1", message="delete") == 1
    with trunk.transaction(message="tx") as tx:
        tx.upsert(frame(spark, [(4, "d")]), "t")
    assert tx.branch == "trunk"
    assert [r["message"] for r in trunk.log(limit=3).collect()] == ["tx", "delete", "upsert"]
    assert trunk.resolve("dev") == head  # nothing went anywhere else


def test_set_default_branch(spark: SparkSession, trunk: Repository) -> None:
    trunk.create_branch("dev", "trunk~1")
    assert trunk.set_default_branch("dev") == trunk.resolve("dev")
    assert trunk.default_branch == "dev" and Repository(spark, "r").default_branch == "dev"
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a")]
    frame(spark, [(5, "e")]).write.versioned("r.t", message="on dev")
    assert trunk.log().first()["message"] == "on dev" and trunk.log("trunk").first()["message"] == "second"
    with pytest.raises(versioned.ProtectedRef):
        trunk.delete_branch("dev")
    trunk.delete_branch("trunk")  # no longer the default
    before = refs_state(trunk)
    with pytest.raises(RefNotFound):
        trunk.set_default_branch("nope")
    with pytest.raises(RefNotFound):
        trunk.set_default_branch("trunk")
    assert trunk.default_branch == "dev" and refs_state(trunk) == before


def test_unknown_repository_has_no_default_branch(spark: SparkSession) -> None:
    with pytest.raises(versioned.RepositoryNotFound):
        Repository(spark, "nope").default_branch
    with pytest.raises(versioned.RepositoryNotFound):
        Repository(spark, "nope").set_default_branch("main")
