"""History is never lost and damaged data is never returned: gc, verify, warehouse identity, typed errors."""

from __future__ import annotations

import glob
import os

import pytest
from pyspark.sql import SparkSession

import versioned
from versioned import Repository
from versioned.errors import (InvalidOption, ObjectCorrupt, ObjectMissing, RepositoryNotFound, TableNotFound,
                              WarehouseMismatch)

from conftest import frame, rows_of


# Every test runs on a classic and on a Spark Connect session (conftest.py).
SESSIONS = ("classic", "connect")


def _object_files(warehouse: str) -> list:
    return sorted(glob.glob(os.path.join(warehouse, "objects", "*", "*.parquet")))


def test_plain_dataframe_and_sql_calls_raise_versioned_types(spark: SparkSession, repo: Repository) -> None:
    with pytest.raises(TableNotFound):
        spark.read.format("versioned").load("r.nope").collect()
    with pytest.raises(RepositoryNotFound):
        spark.read.format("versioned").load("nope.t").collect()


def test_gc_needs_force_below_an_hour_and_lists_in_a_dry_run(spark: SparkSession, repo: Repository) -> None:
    before = repo.resolve("main")
    with pytest.raises(InvalidOption):
        repo.gc(older_than_seconds=0)
    with pytest.raises(InvalidOption):
        repo.gc(older_than_seconds=-1, force=True)
    with pytest.raises(RepositoryNotFound):
        Repository(spark, "nope").gc(dry_run=True)
    assert repo.gc(dry_run=True).count() == 0  # everything is referenced
    spark.sql  # the warehouse-wide form refuses the same way
    with pytest.raises(InvalidOption):
        versioned.collect_garbage(spark, older_than_seconds=10)
    assert versioned.collect_garbage(spark, older_than_seconds=0, force=True, dry_run=True).columns == ["kind", "name", "path", "reason"]
    assert repo.resolve("main") == before
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b"), (3, "c")]


def test_verify_reports_and_reads_refuse_a_damaged_object(spark: SparkSession, repo: Repository,
                                                          warehouse: str) -> None:
    assert repo.verify().filter("status != 'ok'").count() == 0
    files = _object_files(warehouse)
    assert files
    originals = {}
    for path in files:  # damage every object: the head's and those only history needs
        crc = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".crc")
        if os.path.exists(crc):
            os.remove(crc)  # object stores keep no checksum side files
        with open(path, "rb") as f:
            originals[path] = f.read()
        damaged = bytearray(originals[path])
        damaged[len(damaged) - 12] ^= 0xFF  # inside the footer
        with open(path, "wb") as f:
            f.write(bytes(damaged))
    with pytest.raises(ObjectCorrupt):
        spark.read.format("versioned").load("r.t").collect()
    bad = repo.verify().filter("status != 'ok'").collect()
    assert sorted(r["status"] for r in bad) == ["corrupt"] * len(files) and all(r["needed_by"] for r in bad)
    for path in files:
        os.remove(path)
    with pytest.raises(ObjectMissing):
        spark.read.versioned("r.t").collect()
    assert {r["status"] for r in repo.verify(["main"]).filter("status != 'ok'").collect()} == {"missing"}


def test_an_empty_metastore_for_a_warehouse_with_data_is_refused(spark: SparkSession, repo: Repository,
                                                                 tmp_path) -> None:
    other = f"jdbc:sqlite:{tmp_path / 'elsewhere.db'}"
    with pytest.raises(WarehouseMismatch):
        Repository(spark, "r", metastore_url=other).branches()
    with pytest.raises(WarehouseMismatch):
        versioned.collect_garbage(spark, metastore_url=other, older_than_seconds=0, force=True)
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b"), (3, "c")]


def test_gc_removes_what_a_dropped_repository_left(spark: SparkSession, repo: Repository, warehouse: str) -> None:
    frame(spark, [(7, "x")]).write.versioned("tmp.t", primary_key="id")
    spark.conf.set("spark.sql.catalog.vcx", "versioned.spark.catalog.VersionedCatalog")
    spark.sql("DROP NAMESPACE vcx.tmp CASCADE")
    gone = versioned.collect_garbage(spark, older_than_seconds=0, force=True)
    assert gone.filter("kind = 'object'").count() >= 1
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b"), (3, "c")]
    assert repo.verify().filter("status != 'ok'").count() == 0
