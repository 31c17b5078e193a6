"""Repository names and missing repositories read the same on both kinds of session: ``versioned.repositories``
gives the names themselves (Spark Connect's ``SHOW NAMESPACES`` backtick-quotes a name such as ``my-repo``), and
the ref listings of a repository that does not exist raise the connector's RepositoryNotFound, which is also the
session's own AnalysisException, without a failed query logged on the way."""

from __future__ import annotations

import logging
from typing import Any, Callable, Iterator, List, Tuple

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

import versioned
from versioned._connect import is_connect
from conftest import frame, rows_of

SESSIONS = ("classic", "connect")


def variant_module(spark: SparkSession) -> Any:
    if is_connect(spark):
        from pyspark.errors.exceptions import connect

        return connect
    from pyspark.errors.exceptions import captured

    return captured


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: List[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def query_errors_logged() -> Iterator[List[logging.LogRecord]]:
    """The records PySpark logs for failed queries (its query-context loggers do not propagate to the root)."""
    from pyspark.logger import PySparkLogger

    handler = _Records()
    # PySpark's own loggers (a plain logging.Logger of the same name would reject their extra arguments)
    loggers = [PySparkLogger.getLogger(n) for n in ("SQLQueryContextLogger", "DataFrameQueryContextLogger")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        for logger in loggers:
            logger.removeHandler(handler)


def test_unquote_gives_the_name_spark_quoted() -> None:
    from versioned._connect import _unquote

    assert _unquote("`my-repo`") == "my-repo"
    assert _unquote("shop") == "shop"
    assert _unquote("`a``b`") == "a`b"
    assert _unquote("``") == ""


def test_repositories_are_the_names_themselves(spark: SparkSession) -> None:
    for name in ("my-repo", "plain", "_x-1"):
        frame(spark, [(1, "a")]).write.versioned(f"{name}.t", primary_key="id")
    names = versioned.repositories(spark)
    assert names == sorted(["my-repo", "plain", "_x-1"])
    for name in names:
        repo = versioned.Repository(spark, name)
        assert repo.log().count() == 1, name
        assert [r["name"] for r in repo.branches().collect()] == [repo.default_branch], name
        assert rows_of(spark.read.versioned(f"{name}.t")) == [(1, "a")], name


def test_a_hyphenated_repository_lists_its_refs(spark: SparkSession) -> None:
    frame(spark, [(1, "a")]).write.versioned("my-repo.t", primary_key="id")
    repo = versioned.Repository(spark, "my-repo")
    repo.create_tag("v1")
    repo.create_lock("jobs", "nightly")
    assert [r["name"] for r in repo.tags().collect()] == ["v1"]
    assert [r["name"] for r in repo.locks().collect()] == ["jobs:nightly"]
    assert repo.tags().collect()[0]["image"] == repo.resolve(repo.default_branch)


def ghost_listings(ghost: versioned.Repository) -> List[Tuple[str, Callable[[], Any]]]:
    return [("branches", ghost.branches), ("tags", ghost.tags), ("locks", ghost.locks),
            ("locks(ns)", lambda: ghost.locks("jobs")), ("log", ghost.log)]


def test_listing_a_missing_repository_is_the_sessions_repository_not_found(
        spark: SparkSession, query_errors_logged: List[logging.LogRecord]) -> None:
    frame(spark, [(1, "a")]).write.versioned("real.t", primary_key="id")
    ghost = versioned.Repository(spark, "ghost")
    with pytest.raises(versioned.RepositoryNotFound) as resolved:
        ghost.resolve("x")
    own = variant_module(spark).AnalysisException
    for what, call in ghost_listings(ghost):
        with pytest.raises(AnalysisException) as info:  # an existing PySpark handler catches it
            call()
        e = info.value
        assert isinstance(e, versioned.RepositoryNotFound) and isinstance(e, own), (what, type(e).__mro__)
        assert (e.getCondition(), e.getSqlState()) == ("REPOSITORY_NOT_FOUND", "42P01"), what
        # the connector's own message (as resolve gives it), not a shorter one made by the client
        assert e.message == resolved.value.message, what
        assert "'ghost'" in e.message and "Create it with a first write" in e.message, what
    if "connect" not in type(spark).__module__:  # on Connect the failed metadata query is analyzed (and logged) first
        assert [r.getMessage() for r in query_errors_logged] == []


def test_listing_an_existing_repository_logs_no_failed_query(
        spark: SparkSession, repo: versioned.Repository, query_errors_logged: List[logging.LogRecord]) -> None:
    repo.create_branch("dev")
    assert [r["name"] for r in repo.branches().collect()] == sorted([repo.default_branch, "dev"])
    assert repo.tags().collect() == [] and repo.locks().collect() == []
    assert [r["hash"] for r in repo.log().collect()][0] == repo.resolve(repo.default_branch)
    assert [r.getMessage() for r in query_errors_logged] == []
