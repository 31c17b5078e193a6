"""Wrong-typed arguments of the Python API are refused in Python with a typed error (issue 31, item 9):
``InvalidOption`` (``INVALID_OPTION``, also a ``TypeError``) naming the argument, before anything reaches the JVM
or the server, and nothing is committed. Classic and Spark Connect sessions."""

from __future__ import annotations

from typing import Any, Callable, List, Tuple

import pytest
from pyspark.sql import SparkSession

import versioned
from versioned import InvalidOption, Repository
from conftest import frame, refs_state

SESSIONS = ("classic", "connect")


def bad_calls(spark: SparkSession, repo: Repository) -> List[Tuple[str, Callable[[], Any]]]:
    df = frame(spark, [(9, "z")])
    return [
        ("df", lambda: repo.upsert(None, "t")),  # type: ignore[arg-type]
        ("df", lambda: repo.upsert([(9, "z")], "t")),  # type: ignore[arg-type]
        ("message", lambda: repo.upsert(df, "t", message=123)),  # type: ignore[arg-type]
        ("table", lambda: repo.upsert(df, 7)),  # type: ignore[arg-type]
        ("branch", lambda: repo.upsert(df, "t", branch=1)),  # type: ignore[arg-type]
        ("author", lambda: repo.upsert(df, "t", author=b"me")),  # type: ignore[arg-type]
        ("primary_key", lambda: repo.upsert(df, "t", primary_key=5)),  # type: ignore[arg-type]
        ("delete_column", lambda: repo.upsert(df, "t", delete_column=True)),  # type: ignore[arg-type]
        ("before_images", lambda: repo.upsert(df, "t", before_images="yes")),  # type: ignore[arg-type]
        ("condition", lambda: repo.delete_where("t", None)),  # type: ignore[arg-type]
        ("message", lambda: repo.delete_where("t", "id = 1", message=1.5)),  # type: ignore[arg-type]
        ("name", lambda: repo.create_branch(None)),  # type: ignore[arg-type]
        ("from_ref", lambda: repo.create_branch("dev", 3)),  # type: ignore[arg-type]
        ("ref", lambda: repo.create_tag("v9", ["main"])),  # type: ignore[arg-type]
        ("limit", lambda: repo.log(limit="5")),  # type: ignore[arg-type]
        ("source", lambda: repo.merge(None)),  # type: ignore[arg-type]
        ("dry_run", lambda: repo.merge("main", dry_run="no")),  # type: ignore[arg-type]
        ("resolutions['t']", lambda: repo.merge("main", resolutions={"t": [(1, "x")]})),  # type: ignore[dict-item]
        ("message", lambda: repo.revert("main", message=42)),  # type: ignore[arg-type]
        ("message", lambda: df.write.versioned("r.t", message=123)),
        ("branch", lambda: df.write.versioned("r.t", branch=0)),
        ("primary_key", lambda: df.write.versioned("r.t", primary_key=1)),
        ("upsert", lambda: df.write.versioned("r.t", upsert="true")),
        ("message", lambda: repo.transaction(message=5)),  # type: ignore[arg-type]
        ("limit", lambda: repo.log(limit=-1)),
        # the remote API: a string flag is not a flag ("false" is truthy: push(force="false") once force-pushed)
        ("force", lambda: repo.push(force="false")),  # type: ignore[arg-type]
        ("tags", lambda: repo.push(tags="no")),  # type: ignore[arg-type]
        ("branch", lambda: repo.push(branch=1)),  # type: ignore[arg-type]
        ("remote", lambda: repo.fetch(1)),  # type: ignore[arg-type]
        ("download", lambda: repo.fetch(download="some")),
        ("branch", lambda: repo.pull(branch=1)),  # type: ignore[arg-type]
        ("name", lambda: repo.add_remote(1, "/tmp/x", "jdbc:sqlite:/tmp/x/m.db")),  # type: ignore[arg-type]
        ("metastore_url", lambda: repo.add_remote("o", "/tmp/x", None)),  # type: ignore[arg-type]
        ("name", lambda: repo.remove_remote(1)),  # type: ignore[arg-type]
        ("remote", lambda: repo.remote_refs(1)),  # type: ignore[arg-type]
        ("table", lambda: repo.import_table("r", 1)),  # type: ignore[arg-type]
        ("repository", lambda: versioned.clone(spark, 1, warehouse="/tmp/x",  # type: ignore[arg-type]
                                               metastore_url="jdbc:sqlite:/tmp/x/m.db")),
        ("force", lambda: repo.gc(older_than_seconds=1, force="false", dry_run=True)),  # type: ignore[arg-type]
        ("dry_run", lambda: repo.gc(dry_run="false")),  # type: ignore[arg-type]
        ("older_than_seconds", lambda: repo.gc(older_than_seconds="1")),  # type: ignore[arg-type]
        ("dry_run", lambda: versioned.collect_garbage(spark, dry_run=1)),  # type: ignore[arg-type]
    ]


def test_wrong_typed_arguments_are_typed_errors_and_commit_nothing(spark: SparkSession, repo: Repository) -> None:
    before = refs_state(repo)
    commits = repo.log().count()
    for name, call in bad_calls(spark, repo):
        with pytest.raises(InvalidOption) as info:
            call()
        e = info.value
        assert isinstance(e, TypeError) and e.error_class == "INVALID_OPTION", name
        assert e.message.startswith(f"{name} must be"), (name, e.message)
    assert repo.log().count() == commits
    assert refs_state(repo) == before


def test_transaction_arguments(spark: SparkSession, repo: Repository) -> None:
    with repo.transaction() as tx:
        with pytest.raises(InvalidOption):
            tx.upsert(None, "t")  # type: ignore[arg-type]
        with pytest.raises(InvalidOption):
            tx.delete_where("t", 1)  # type: ignore[arg-type]
        with pytest.raises(InvalidOption):
            tx.write(frame(spark, [(9, "z")]), "t", primary_key=[1])  # type: ignore[list-item]
        assert tx.is_open and tx.changed_tables == []
    assert tx.commit_hash is None
