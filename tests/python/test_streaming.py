"""The streaming sink and idempotent foreachBatch writes, on a classic and on a Spark Connect session
(docs/STREAMING.md): a file source into ``writeStream.format("versioned")``, one commit per micro-batch, a batch
replayed after a lost checkpoint commit committing nothing, and ``Repository.write_batch``."""

from __future__ import annotations

import json
import os
from typing import Any, List, Tuple

import pytest
from conftest import frame, rows_of
from pyspark.sql import SparkSession

from versioned import InvalidOption, Repository, StreamCheckpointMismatch

SESSIONS = ("classic", "connect")


def _land(directory: str, name: str, rows: List[Tuple[int, str]]) -> None:
    with open(os.path.join(directory, name), "w") as f:
        for i, n in rows:
            f.write(json.dumps({"id": i, "name": n}) + "\n")


def _run(spark: SparkSession, source: str, checkpoint: str, table: str, **options: str) -> None:
    """Runs a stream over every file in ``source`` into ``table`` until it has them all."""
    writer = (spark.readStream.schema("id long, name string").json(source).writeStream.format("versioned")
              .option("checkpointLocation", checkpoint).trigger(availableNow=True))
    for k, v in options.items():
        writer = writer.option(k, v)
    writer.start(table).awaitTermination()


def _commits(repo: Repository) -> int:
    return repo.log(repo.default_branch).count()


def test_stream_into_a_table_exactly_once(spark: SparkSession, tmp_path: Any) -> None:
    source, checkpoint = str(tmp_path / "in"), str(tmp_path / "ckpt")
    os.makedirs(source)
    _land(source, "a.json", [(1, "a"), (2, "b")])
    _run(spark, source, checkpoint, "r.t", primaryKey="id", upsert="true")
    repo = Repository(spark, "r")
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b")] and _commits(repo) == 1
    _land(source, "b.json", [(2, "b2"), (3, "c")])
    _run(spark, source, checkpoint, "r.t", primaryKey="id", upsert="true")
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b2"), (3, "c")] and _commits(repo) == 2
    head = repo.resolve()
    assert "batch=1 table=t" in repo.log(repo.default_branch).first()["message"]
    # the checkpoint loses batch 1's commit entry (a driver that died after the table's commit): run again
    for lost in ("1", ".1.crc"):
        if os.path.exists(os.path.join(checkpoint, "commits", lost)):
            os.remove(os.path.join(checkpoint, "commits", lost))
    _run(spark, source, checkpoint, "r.t", primaryKey="id", upsert="true")
    assert repo.resolve() == head and _commits(repo) == 2
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b2"), (3, "c")]


def test_checkpoint_of_another_table_is_refused(spark: SparkSession, tmp_path: Any) -> None:
    source, checkpoint = str(tmp_path / "in"), str(tmp_path / "ckpt")
    os.makedirs(source)
    _land(source, "a.json", [(1, "a")])
    _run(spark, source, checkpoint, "r.t")
    frame(spark, [(9, "z")]).write.versioned("r.other", primary_key="id")
    repo = Repository(spark, "r")
    head = repo.resolve()
    _land(source, "b.json", [(2, "b")])
    with pytest.raises(Exception) as failure:
        _run(spark, source, checkpoint, "r.other")
    assert "STREAM_CHECKPOINT_MISMATCH" in str(failure.value) or isinstance(failure.value, StreamCheckpointMismatch)
    assert repo.resolve() == head


def test_write_batch_is_idempotent(spark: SparkSession) -> None:
    repo = Repository(spark, "r")
    first = repo.write_batch(frame(spark, [(1, "a"), (2, "b")]), "t", "query-7", 0, primary_key="id")
    again = repo.write_batch(frame(spark, [(1, "a"), (2, "b")]), "t", "query-7", 0)
    assert again == first and _commits(repo) == 1
    second = repo.write_batch(frame(spark, [(2, "b2")]), "t", "query-7", 1, upsert=True, message="batch 1")
    assert second != first and repo.resolve() == second
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b2")]
    for bad in (lambda: repo.write_batch(frame(spark, [(5, "e")]), "t", "query-7", -1),
                lambda: repo.write_batch(frame(spark, [(5, "e")]), "t", "query-7", 2, mode="update"),
                lambda: repo.write_batch(frame(spark, [(5, "e")]), "t", "has space", 2)):
        with pytest.raises(InvalidOption):
            bad()
    assert repo.resolve() == second and _commits(repo) == 2
