"""Remotes from Python: clone, fetch, pull, push, import_table and their errors (docs/REMOTES.md).

Two warehouses on the local file system, each with its own SQLite metastore: the session's (where clones
land) and an "origin" one reached through ``warehouse=`` options.
"""

from __future__ import annotations

import shutil
from typing import Any, Dict, List, Tuple

import pytest
from pyspark.sql import SparkSession

import versioned
from versioned import (DownloadResult, FetchResult, ImmutableRef, InvalidName, InvalidOption, NonFastForward, ObjectStoreUnsupported,
                       PushResult, RefNotFound, RemoteExists, RemoteNotFound, RemoteUnreachable, Repository, RepositoryExists)
from conftest import frame, rows_of

SESSIONS = ("classic", "connect")


@pytest.fixture
def origin(spark: SparkSession, tmp_path: Any) -> Dict[str, str]:
    """A second warehouse with repository 'r', table 't' (key id) = {1:a, 2:b}; returns its location."""
    path = str(tmp_path / "origin")
    loc = {"warehouse": path, "metastore_url": f"jdbc:sqlite:{path}/metastore.db"}
    (frame(spark, [(1, "a"), (2, "b")]).write.format("versioned").option("primaryKey", "id")
     .option("warehouse", path).mode("append").save("r.t"))
    return loc


def _origin_repo(spark: SparkSession, origin: Dict[str, str]) -> Repository:
    return Repository(spark, "r", warehouse=origin["warehouse"], metastore_url=origin["metastore_url"])


def _history(repo: Repository) -> List[str]:
    return [r["hash"] for r in repo.log("main").collect()]


def _upsert(spark: SparkSession, repo: Repository, rows: List[Tuple[int, str]], message: str) -> str:
    return repo.upsert(frame(spark, rows), "t", message=message)


def test_clone_is_lazy_and_keeps_hashes(spark: SparkSession, origin: Dict[str, str], warehouse: str) -> None:
    theirs = _origin_repo(spark, origin)
    repo = versioned.clone(spark, "r", warehouse=origin["warehouse"], metastore_url=origin["metastore_url"])
    assert isinstance(repo, Repository) and repo.name == "r"
    assert _history(repo) == _history(theirs)
    assert [(r["name"], r["repository"]) for r in repo.remotes().collect()] == [("origin", "r")]
    assert [(r["name"], r["image"]) for r in repo.remote_refs().collect()] == [("origin/main", theirs.resolve("main"))]
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b")]
    assert rows_of(spark.read.versioned("r.t", ref="origin/main")) == [(1, "a"), (2, "b")]
    assert repo.verify().filter("status != 'ok'").count() == 0
    copy = versioned.clone(spark, "r", warehouse=origin["warehouse"], metastore_url=origin["metastore_url"],
                           into="r_full", download="all")
    assert rows_of(spark.read.versioned("r_full.t")) == [(1, "a"), (2, "b")] and copy.name == "r_full"


def test_fetch_pull_push_and_a_rejected_push(spark: SparkSession, origin: Dict[str, str]) -> None:
    theirs = _origin_repo(spark, origin)
    repo = versioned.clone(spark, "r", warehouse=origin["warehouse"], metastore_url=origin["metastore_url"])
    _upsert(spark, theirs, [(3, "c")], "origin adds 3")
    _upsert(spark, repo, [(4, "d")], "clone adds 4")
    local_head = repo.resolve("main")
    fetched = repo.fetch()
    assert isinstance(fetched, FetchResult) and fetched.images == 1
    assert [(u.ref, u.status) for u in fetched.refs] == [("remotes/origin/main", "fast_forward")]
    assert repo.resolve("main") == local_head and repo.resolve("origin/main") == theirs.resolve("main")
    pulled = repo.pull()
    assert pulled.ok and pulled.status == "merged"
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    pushed = repo.push()
    assert isinstance(pushed, PushResult) and pushed.status == "fast_forward" and pushed.uploaded >= 1
    assert theirs.resolve("main") == repo.resolve("main")
    # the origin moves on: a push is rejected and changes nothing there, then pull and push again
    _upsert(spark, theirs, [(5, "e")], "origin adds 5")
    _upsert(spark, repo, [(6, "f")], "clone adds 6")
    before = _history(theirs)
    with pytest.raises(NonFastForward):
        repo.push()
    assert _history(theirs) == before
    repo.pull().check()
    assert repo.push().status == "fast_forward"
    assert _history(theirs) == _history(repo)
    assert rows_of(spark.read.format("versioned").option("warehouse", origin["warehouse"]).load("r.t")) == \
        [(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e"), (6, "f")]
    assert repo.push().status == "up_to_date"
    # a local branch only behind the remote's: rejected, and the message says so (there is nothing to push)
    _upsert(spark, theirs, [(7, "g")], "origin adds 7")
    repo.fetch()
    with pytest.raises(NonFastForward, match="the local branch is behind the remote's") as behind:
        repo.push()
    assert "has commits this repository does not" not in str(behind.value)
    assert _history(theirs)[1:] == _history(repo)


def test_tags_push_and_are_immutable(spark: SparkSession, origin: Dict[str, str]) -> None:
    theirs = _origin_repo(spark, origin)
    repo = versioned.clone(spark, "r", warehouse=origin["warehouse"], metastore_url=origin["metastore_url"])
    _upsert(spark, repo, [(3, "c")], "clone adds 3")
    repo.create_tag("v1", "main")
    assert repo.push().tags == ("v1",)
    assert [r["name"] for r in theirs.tags().collect()] == ["v1"]
    repo.delete_tag("v1")
    repo.create_tag("v1", "main~1")
    with pytest.raises(ImmutableRef):
        repo.push()


def test_import_table_links_without_copying(spark: SparkSession, origin: Dict[str, str]) -> None:
    frame(spark, [(7, "g")]).write.versioned("ref.countries", primary_key="id")
    dest = Repository(spark, "dest")
    dest.import_table("ref", "countries", as_table="places")
    assert rows_of(spark.read.versioned("dest.places")) == [(7, "g")]
    dest.add_remote("origin", origin["warehouse"], origin["metastore_url"], repository="r")
    commit = dest.import_table("r", "t", "main", remote="origin", message="bring t")
    assert dest.resolve("main") == commit and dest.show("main")["message"] == "bring t"
    assert rows_of(spark.read.versioned("dest.t")) == [(1, "a"), (2, "b")]


def test_download_makes_lazily_held_versions_independent_of_the_remote(spark: SparkSession, origin: Dict[str, str]) -> None:
    theirs = _origin_repo(spark, origin)
    repo = versioned.clone(spark, "r", warehouse=origin["warehouse"], metastore_url=origin["metastore_url"])
    first = repo.resolve()
    _upsert(spark, theirs, [(3, "c")], "origin adds 3")
    repo.fetch()
    newer = repo.resolve("origin/main")
    with pytest.raises(RefNotFound):
        repo.download("nope")
    one = repo.download(first)
    assert isinstance(one, DownloadResult) and one.image == first and one.objects == one.downloaded >= 1
    assert repo.download(first) == DownloadResult("r", first, 0, 0)
    rest = repo.download()
    assert rest.image is None and rest.objects == rest.downloaded >= 1
    shutil.rmtree(origin["warehouse"])  # the remote is gone: both versions read from this warehouse
    assert rows_of(spark.read.versioned("r.t", ref=first)) == [(1, "a"), (2, "b")]
    assert rows_of(spark.read.versioned("r.t", ref=newer)) == [(1, "a"), (2, "b"), (3, "c")]
    assert repo.verify().filter("status != 'ok'").count() == 0


def test_sql_procedures(spark: SparkSession, origin: Dict[str, str]) -> None:
    spark.conf.set("spark.sql.catalog.vcr", "versioned.spark.catalog.VersionedCatalog")
    wh, url = origin["warehouse"], origin["metastore_url"]
    [cloned] = spark.sql(f"CALL vcr.system.clone(repository => 'r', warehouse => '{wh}', metastore_url => '{url}', "
                         "into => 'r2')").collect()
    assert (cloned["repository"], cloned["remote"], cloned["images"]) == ("r2", "origin", 1)
    frame(spark, [(9, "i")]).write.versioned("r2.t", upsert=True)
    [pushed] = spark.sql("CALL vcr.system.push(repository => 'r2')").collect()
    assert pushed["status"] == "fast_forward"
    [fetched] = spark.sql("CALL vcr.system.fetch(repository => 'r2')").collect()
    assert fetched["images"] == 0


def test_errors(spark: SparkSession, origin: Dict[str, str], tmp_path: Any) -> None:
    repo = versioned.clone(spark, "r", warehouse=origin["warehouse"], metastore_url=origin["metastore_url"])
    with pytest.raises(RepositoryExists):
        versioned.clone(spark, "r", warehouse=origin["warehouse"], metastore_url=origin["metastore_url"])
    with pytest.raises(RemoteNotFound):
        repo.fetch("upstream")
    with pytest.raises(RemoteExists):
        repo.add_remote("origin", origin["warehouse"], origin["metastore_url"])
    with pytest.raises(InvalidOption):
        repo.add_remote("pg", origin["warehouse"], "jdbc:postgresql://db/versioned?user=u&password=secret")
    with pytest.raises(InvalidOption):
        repo.fetch(download="some")
    nowhere = str(tmp_path / "nowhere")
    with pytest.raises(RemoteUnreachable):
        versioned.clone(spark, "r", warehouse=nowhere, metastore_url=f"jdbc:sqlite:{nowhere}/metastore.db", into="r9")
    assert "r9" not in versioned.repositories(spark)
    # a blank remote name is INVALID_NAME, as a blank branch name is: it never means origin
    for blank in ("", "  "):
        with pytest.raises(InvalidName):
            repo.remove_remote(blank)
        with pytest.raises(InvalidName):
            repo.add_remote(blank, str(tmp_path / "other"), f"jdbc:sqlite:{tmp_path}/other/metastore.db")
        with pytest.raises(InvalidName):
            repo.push(blank)
    assert [r["name"] for r in repo.remotes().collect()] == ["origin"] and repo.remote_refs().count() == 1
    repo.remove_remote("origin")
    assert repo.remotes().count() == 0 and repo.remote_refs().count() == 0


def test_s3a_without_its_jars_is_object_store_unsupported(spark: SparkSession, tmp_path: Any) -> None:
    """The suites' session has no hadoop-aws (as pip's PySpark): an s3a:// remote or warehouse is refused with
    OBJECT_STORE_UNSUPPORTED naming the helper, and nothing is created (test_s3_remotes.py has the jars)."""
    with pytest.raises(ObjectStoreUnsupported) as e:
        versioned.clone(spark, "r", warehouse="s3a://bucket/wh", metastore_url="jdbc:postgresql://meta.invalid/v",
                        into="r_s3")
    assert "bin/install-s3a-jars" in str(e.value) and e.value.error_class == "OBJECT_STORE_UNSUPPORTED"
    assert "r_s3" not in versioned.repositories(spark)
    meta = tmp_path / "s3meta"
    with pytest.raises(ObjectStoreUnsupported):
        (frame(spark, [(1, "a")]).write.format("versioned").option("primaryKey", "id")
         .option("warehouse", "s3a://bucket/wh").option("metastoreUrl", f"jdbc:sqlite:{meta}/metastore.db")
         .mode("append").save("s.t"))
    assert not meta.exists(), "no metastore was created for the refused warehouse"
