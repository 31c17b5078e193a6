"""Versioned errors stay in PySpark's hierarchy (issue 31, item 10): a bad ref raises RefNotFound, which is also
the session's own AnalysisException (classic: ``captured``, Connect: ``connect``), so ``except AnalysisException``
handlers keep working, and getCondition()/getErrorClass()/getSqlState() give the stable class and its SQLSTATE."""

from __future__ import annotations

import os
import re
import warnings
from typing import Any, Callable, Dict, List, Tuple

import pytest
from pyspark.errors import AnalysisException, PySparkException, SparkRuntimeException, UnsupportedOperationException
from pyspark.sql import SparkSession

import versioned
from versioned import errors
from versioned._connect import is_connect
from conftest import frame, refs_state

SESSIONS = ("classic", "connect")
CATALOG = "vc_errors"
ERRORS_SCALA = os.path.join(os.path.dirname(__file__), "..", "..", "connector-scala", "core", "src", "main",
                            "scala", "versioned", "core", "Errors.scala")


def scala_sql_states() -> Dict[str, str]:
    """error class -> SQLSTATE, as the engine declares them (ErrorClass.sqlStates)."""
    with open(ERRORS_SCALA) as f:
        text = f.read()
    names = dict(re.findall(r'^\s*val (\w+) = "([A-Z_]+)"', text, re.M))
    return {names[n]: state for n, state in re.findall(r'(\w+) -> "([0-9A-Z]{5})"', text)}


def variant_module(spark: SparkSession) -> Any:
    if is_connect(spark):
        from pyspark.errors.exceptions import connect

        return connect
    from pyspark.errors.exceptions import captured

    return captured


def bad_ref_calls(spark: SparkSession, repo: versioned.Repository) -> List[Tuple[str, Callable[[], Any]]]:
    spark.conf.set(f"spark.sql.catalog.{CATALOG}", "versioned.spark.catalog.VersionedCatalog")
    return [
        ("Repository.resolve", lambda: repo.resolve("nope")),
        ("Repository.log", lambda: repo.log("nope").collect()),
        ("read.versioned", lambda: spark.read.versioned("r.t", ref="nope").collect()),
        ("plain reader", lambda: spark.read.format("versioned").option("ref", "nope").load("r.t").collect()),
        ("spark.sql", lambda: spark.sql(f"SELECT * FROM {CATALOG}.r.t VERSION AS OF 'nope'").collect()),
    ]


def test_a_bad_ref_is_an_analysis_exception_with_condition_and_sqlstate(spark: SparkSession, repo: Any) -> None:
    own = variant_module(spark).AnalysisException
    for what, call in bad_ref_calls(spark, repo):
        with pytest.raises(AnalysisException) as info:  # an existing PySpark handler catches it
            call()
        e = info.value
        assert isinstance(e, versioned.RefNotFound), what
        assert isinstance(e, own) and isinstance(e, PySparkException), (what, type(e).__mro__)
        assert isinstance(e, LookupError) and isinstance(e, versioned.NotFoundError), what
        assert e.getCondition() == "REF_NOT_FOUND" and e.getSqlState() == "42704", what
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            assert e.getErrorClass() == "REF_NOT_FOUND", what
        assert e.error_class == "REF_NOT_FOUND" and str(e).startswith("[REF_NOT_FOUND] "), what
        assert "nope" in e.message and "JVM stacktrace" not in str(e), what


def test_a_data_error_is_caught_as_pyspark_exception(spark: SparkSession, repo: Any) -> None:
    before = refs_state(repo)
    with pytest.raises(PySparkException) as info:
        frame(spark, [(1, "again")]).write.versioned("r.t")
    e = info.value
    assert isinstance(e, versioned.KeyExists) and isinstance(e, variant_module(spark).AnalysisException)
    assert (e.getCondition(), e.getSqlState()) == ("KEY_EXISTS", "23505")
    assert refs_state(repo) == before


def test_an_immutable_ref_error_keeps_the_hierarchy(spark: SparkSession, repo: Any) -> None:
    repo.create_tag("v1")
    with pytest.raises(AnalysisException) as info:
        frame(spark, [(9, "z")]).write.versioned("r.t", branch="v1")
    assert isinstance(info.value, versioned.ImmutableRef) and info.value.getSqlState() == "55000"


@pytest.mark.parametrize("error_class", sorted(errors.known_error_classes()))
def test_every_class_is_the_pyspark_exception_of_its_kind(error_class: str) -> None:
    e = errors.error_for_class(error_class, f"[{error_class}] what to do")
    assert isinstance(e, PySparkException) and isinstance(e, versioned.VersionedError)
    assert e.getCondition() == error_class and e.getSqlState() == scala_sql_states()[error_class]
    assert e.getMessageParameters() == {"message": "what to do"} and e.getMessage() == str(e)
    kinds = [k for k in (AnalysisException, SparkRuntimeException, UnsupportedOperationException) if isinstance(e, k)]
    assert len(kinds) == 1, (error_class, kinds)
    if isinstance(e, (versioned.NotFoundError, versioned.InvalidInputError, versioned.RefStateError)):
        assert kinds == [AnalysisException]
    if isinstance(e, (versioned.StorageError, versioned.MetastoreError)):
        assert kinds == [SparkRuntimeException]


def test_python_sql_states_are_the_engines() -> None:
    assert scala_sql_states() == {c: errors.sql_state_of(c) for c in scala_sql_states()}
    assert set(scala_sql_states()) == set(errors.known_error_classes())
