"""Concurrent upserts on one session each return their own commit, on a classic and on a Spark Connect
session (a Connect client learns its commit from the server by its write's id: issue 32, item 2)."""

from __future__ import annotations

import threading
from typing import Dict, List

from conftest import frame, rows_of
from pyspark.sql import SparkSession

from versioned import Repository

SESSIONS = ("classic", "connect")


def test_concurrent_upserts_return_their_own_commits(spark: SparkSession) -> None:
    frame(spark, [(0, "base")]).write.versioned("r.t", primary_key="id")
    repo = Repository(spark, "r")
    default = repo.default_branch
    for round_ in range(3):
        branches = [f"w{round_}_{i}" for i in range(3)]
        for b in branches:
            repo.create_branch(b, default)
        results: Dict[str, str] = {}
        errors: List[BaseException] = []
        start = threading.Barrier(len(branches))

        def write(b: str) -> None:
            try:
                start.wait()
                results[b] = repo.upsert(frame(spark, [(1, b)]), "t", branch=b, message=f"upsert on {b}")
            except BaseException as e:  # surfaced below
                errors.append(e)

        threads = [threading.Thread(target=write, args=(b,)) for b in branches]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        for b in branches:
            # the commit returned is the one this write made: the head of its own branch, with its row
            assert results[b] == repo.resolve(b), f"{b}: got {results[b]}"
            assert rows_of(spark.read.format("versioned").option("ref", results[b]).load("r.t")) == [(0, "base"), (1, b)]
