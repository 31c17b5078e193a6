"""Shared fixtures: one real SparkSession (local[2]) built with configure_spark_with_versioned, and a fresh
warehouse directory per test."""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, Iterator, List, Tuple

import pytest
from pyspark.sql import DataFrame, SparkSession

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

import versioned  # noqa: E402
from connect_server import DRIVER_JAVA_OPTIONS  # noqa: E402
from versioned import Repository  # noqa: E402

SCHEMA = "id long, name string"


SESSION_CONF = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.sql.session.timeZone": "UTC",
}


@pytest.fixture(scope="session")
def classic_spark() -> Iterator[SparkSession]:
    builder = SparkSession.builder.master("local[2]").appName("versioned-python-tests")
    for key, value in SESSION_CONF.items():
        builder = builder.config(key, value)
    builder = builder.config("spark.driver.extraJavaOptions", DRIVER_JAVA_OPTIONS)
    session = versioned.configure_spark_with_versioned(builder).getOrCreate()
    session.sparkContext.setLogLevel("FATAL")
    versioned.install()
    yield session
    session.stop()


@pytest.fixture(scope="session")
def connect_spark(tmp_path_factory: Any) -> Iterator[SparkSession]:
    """A Spark Connect session, on a local Spark Connect server started with the connector jar."""
    from connect_server import ConnectServer

    server = ConnectServer(versioned.jar_path(), SESSION_CONF, str(tmp_path_factory.mktemp("connect")))
    try:
        # The Connect session class itself: pyspark's builder refuses a remote session next to a classic one.
        from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

        session = RemoteSparkSession.builder.remote(server.url).getOrCreate()
        versioned.install()
        yield session
        session.stop()
    finally:
        server.stop()


def pytest_generate_tests(metafunc: Any) -> None:
    """Modules that set ``SESSIONS = ("classic", "connect")`` run each test on both kinds of session."""
    kinds = getattr(metafunc.module, "SESSIONS", None)
    if kinds and "spark" in metafunc.fixturenames:
        metafunc.parametrize("spark", kinds, indirect=True)


@pytest.fixture
def spark(request: Any) -> SparkSession:
    """The session a test runs on: classic unless its module asks for both kinds (see SESSIONS)."""
    kind = getattr(request, "param", "classic")
    if kind == "connect" and request.node.get_closest_marker("classic_only"):
        pytest.skip("needs a classic session (it calls the JVM directly)")
    return request.getfixturevalue(f"{kind}_spark")


@pytest.fixture(autouse=True)
def warehouse(spark: SparkSession, tmp_path: Any) -> Iterator[str]:
    """A fresh warehouse (and SQLite metastore) for every test; afterwards the background compactions of the
    test's commits are waited for (classic sessions), so none runs into the next test."""
    path = str(tmp_path / "warehouse")
    spark.conf.set("spark.versioned.warehouse", path)
    versioned.install()
    yield path
    jvm = getattr(getattr(spark, "_sc", None), "_jvm", None)
    if jvm is not None:
        getattr(jvm, "versioned.spark.api.VersionedApi").awaitCompactions(0)


def frame(spark: SparkSession, rows: List[Tuple[Any, ...]], schema: str = SCHEMA) -> DataFrame:
    return spark.createDataFrame(rows, schema)


def rows_of(df: DataFrame) -> List[Tuple[Any, ...]]:
    return sorted(tuple(r) for r in df.collect())


@pytest.fixture
def repo(spark: SparkSession) -> Repository:
    """Repository 'r' with table 't' (key id) after two commits on main: {1:a,2:b} then +{3:c}."""
    frame(spark, [(1, "a"), (2, "b")]).write.versioned("r.t", primary_key="id", message="first", author="alice")
    frame(spark, [(3, "c")]).write.versioned("r.t", message="second", author="bob")
    return Repository(spark, "r")


def refs_state(repo: Repository) -> Dict[str, Any]:
    """Everything a failed call must leave untouched: refs of every kind and the history of each branch."""
    def refs(df: DataFrame) -> List[Tuple[str, str, str]]:
        return sorted((r["name"], r["kind"], r["image"]) for r in df.collect())
    branches = refs(repo.branches())
    return {
        "branches": branches,
        "tags": refs(repo.tags()),
        "locks": refs(repo.locks()),
        "history": {b[0]: [r["hash"] for r in repo.log(b[0]).collect()] for b in branches},
    }


def empty_commits(spark: SparkSession, repo: str, branch: str, count: int) -> Iterator[str]:
    """Test scaffolding only: commits without table changes straight through the core engine (a Spark
    write per commit would make the ambiguous-prefix test take minutes). Yields each new image hash."""
    jvm = spark._jvm
    engine = jvm.versioned.core.Engine.apply(
        jvm.versioned.core.WarehouseConfig.embedded(spark.conf.get("spark.versioned.warehouse")),
        spark._jsc.hadoopConfiguration())
    no_updates = getattr(getattr(jvm, "scala.collection.immutable.Map$"), "MODULE$").empty()
    no_lease = getattr(getattr(jvm, "scala.None$"), "MODULE$")
    no_merge_parents = getattr(getattr(jvm, "scala.collection.immutable.Nil$"), "MODULE$")
    head = Repository(spark, repo).resolve(branch)
    for i in range(count):
        # allowEmpty: these scaffolding commits change no table; no probe (None): an ordinary commit
        result = engine.commit(repo, branch, jvm.scala.Some(head), no_updates, "tester", f"empty {i}", no_lease,
                               no_merge_parents, True, no_lease)
        head = result.image().hash()
        yield head
