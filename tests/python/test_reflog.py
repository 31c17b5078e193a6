"""The reflog (issue 37, "Identity and the reflog"): every ref movement is recorded with who, the application and the
client, hash-chained; Repository.reflog, the $reflog table and the reflog procedure; a deleted branch restored from
its entry; verify reports an entry edited, removed or reordered in the metastore; on classic and Spark Connect."""

from __future__ import annotations

import os
import sqlite3

import pytest
from pyspark.sql import SparkSession

from versioned import InvalidOption, RefNotFound, Repository
from conftest import frame, refs_state, rows_of

SESSIONS = ("classic", "connect")
CATALOG = "vc_reflog"


def entries(repo: Repository, ref: str = None) -> list:
    return [r.asDict() for r in repo.reflog(ref).collect()]


def metastore(warehouse: str) -> sqlite3.Connection:
    return sqlite3.connect(os.path.join(warehouse, "metastore.db"))


def test_every_move_is_recorded_with_who_and_the_client(spark: SparkSession, repo: Repository) -> None:
    spark.conf.set("spark.versioned.user", "carol")
    try:
        main = repo.default_branch
        repo.create_branch("dev")
        frame(spark, [(4, "d")]).write.versioned("r.t", branch="dev", message="on dev")
        repo.create_tag("v1", "dev")
        repo.reset("dev", main)
        repo.delete_branch("dev")
    finally:
        spark.conf.unset("spark.versioned.user")
    log = entries(repo)
    assert [(e["ref"], e["operation"]) for e in log] == [
        ("heads/dev", "delete"), ("heads/dev", "reset"), ("tags/v1", "create"), ("heads/dev", "commit"),
        ("heads/dev", "create"), (f"heads/{main}", "commit"), (f"heads/{main}", "commit")]
    assert [e["seq"] for e in log] == list(range(7, 0, -1)) and log[0]["id"] == "reflog@{7}"
    client = "connect" if "connect" in type(spark).__module__ else "python"
    assert {e["who"] for e in log[:5]} == {"carol"} and {e["client"] for e in log[:5]} == {client}
    assert all(e["app_id"] for e in log)
    assert all(later["prev_hash"] == earlier["entry_hash"] for later, earlier in zip(log, log[1:]))
    assert log[0]["new_image"] is None and log[0]["old_image"] == repo.resolve(main)
    assert [e["operation"] for e in entries(repo, "dev")] == ["delete", "reset", "commit", "create"]
    assert repo.reflog(limit=2).count() == 2
    assert repo.verify().filter("status != 'ok'").count() == 0
    with pytest.raises(InvalidOption):
        repo.reflog(limit=0)


def test_restore_a_deleted_branch_from_its_entry(spark: SparkSession, repo: Repository) -> None:
    repo.create_branch("dev")
    frame(spark, [(4, "d")]).write.versioned("r.t", branch="dev", message="on dev")
    head = repo.resolve("dev")
    repo.delete_branch("dev")
    gone = repo.reflog("dev", limit=1).first()
    assert repo.create_branch("dev", from_ref=gone["id"]) == head
    assert rows_of(spark.read.versioned("r.t", ref="dev")) == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    before = refs_state(repo)
    count = repo.reflog().count()
    with pytest.raises(RefNotFound) as e:
        repo.create_branch("again", from_ref="reflog@{999}")
    assert "Nothing was created" in str(e.value)
    assert refs_state(repo) == before and repo.reflog().count() == count


def test_sql_reflog_table_and_procedure(spark: SparkSession, repo: Repository) -> None:
    spark.conf.set(f"spark.sql.catalog.{CATALOG}", "versioned.spark.catalog.VersionedCatalog")
    spark.sql(f"CALL {CATALOG}.system.create_branch('r', 'feature')")
    table = spark.sql(f"SELECT id, ref, operation, client FROM {CATALOG}.r.`$reflog` ORDER BY seq DESC").collect()
    assert (table[0]["ref"], table[0]["operation"]) == ("heads/feature", "create")
    connect = "connect" in type(spark).__module__
    assert table[0]["client"] == ("connect" if connect else "sql")
    proc = spark.sql(f"CALL {CATALOG}.system.reflog(repository => 'r', ref => 'feature')").collect()
    assert [(r["id"], r["operation"]) for r in proc] == [(table[0]["id"], "create")]
    assert len(spark.sql(f"CALL {CATALOG}.system.reflog('r', NULL, 2)").collect()) == 2


def test_verify_reports_an_edited_removed_or_reordered_entry(spark: SparkSession, repo: Repository,
                                                               warehouse: str) -> None:
    repo.create_branch("dev")
    repo.create_tag("v1")
    repo.delete_branch("dev")
    assert repo.verify().filter("kind = 'reflog' AND status = 'ok'").count() == 1

    def bad() -> list:
        return sorted((r["object"], r["status"]) for r in repo.verify().filter("status != 'ok'").collect())

    with metastore(warehouse) as db:
        db.execute("UPDATE vc_reflog SET who = 'mallory' WHERE repo = 'r' AND seq = 3")
    assert bad() == [("reflog@{3}", "changed")]
    with metastore(warehouse) as db:
        db.execute("UPDATE vc_reflog SET who = (SELECT who FROM vc_reflog WHERE repo = 'r' AND seq = 4) "
                   "WHERE repo = 'r' AND seq = 3")
        db.execute("UPDATE vc_reflog SET seq = -1 WHERE repo = 'r' AND seq = 2")
        db.execute("UPDATE vc_reflog SET seq = 2 WHERE repo = 'r' AND seq = 3")
        db.execute("UPDATE vc_reflog SET seq = 3 WHERE repo = 'r' AND seq = -1")
    assert bad() == [("reflog@{2}", "reordered"), ("reflog@{3}", "reordered")]
    with metastore(warehouse) as db:
        db.execute("DELETE FROM vc_reflog WHERE repo = 'r' AND seq = 5")
    assert ("reflog@{5}", "removed") in bad()


def test_commits_carry_who_made_them(spark: SparkSession, repo: Repository, warehouse: str) -> None:
    from versioned.reader import open_warehouse

    spark.conf.set(f"spark.sql.catalog.{CATALOG}", "versioned.spark.catalog.VersionedCatalog")
    spark.conf.set("spark.versioned.user", "carol")
    try:
        frame(spark, [(4, "d")]).write.versioned("r.t", message="by carol", author="ann")
        spark.sql(f"UPDATE {CATALOG}.r.t SET name = 'B' WHERE id = 2")   # SQL DML
    finally:
        spark.conf.unset("spark.versioned.user")
    connect = "connect" in type(spark).__module__
    client = "connect" if connect else "python"
    log = [r.asDict() for r in repo.log(limit=2).collect()]
    assert [(r["author"], r["committer"], r["client"]) for r in log] == [
        ("carol", "carol", "connect" if connect else "sql"), ("ann", "carol", client)]
    assert all(r["app_id"] for r in log)
    # the reflog entry of each commit names the same actor
    moves = entries(repo)[:2]
    assert [(m["new_image"], m["who"], m["client"]) for m in moves] == [
        (r["hash"], r["committer"], r["client"]) for r in log]
    # the $log table and the Spark-free reader show the same
    table = spark.sql(f"SELECT hash, committer, app_id, client FROM {CATALOG}.r.`$log` LIMIT 2").collect()
    assert [tuple(r) for r in table] == [(r["hash"], r["committer"], r["app_id"], r["client"]) for r in log]
    commits = open_warehouse(warehouse).repository("r").log(limit=2)
    assert [(c.hash, c.committer, c.app_id, c.client) for c in commits] == [tuple(r) for r in table]
