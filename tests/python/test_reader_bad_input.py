"""The Spark-free reader (versioned.reader) on bad input and faults: unknown revisions, tables and repositories,
bad columns and filters, damaged and missing objects, an unreachable store or metastore, missing, foreign and newer
metastores, a table of an unknown format version. Each is its typed error class, and nothing is written or
changed."""

from __future__ import annotations

import os
import shutil
from typing import Any, List

import pytest
from pyspark.sql import SparkSession

from versioned.errors import (ImageNotFound, InvalidOption, InvalidRevision, MetastoreError, ObjectCorrupt,
                              ObjectMissing, RefNotFound, RepositoryNotFound, TableNotFound, WarehouseMismatch)
from versioned.reader import open_warehouse

from reader_support import _object_files, _small


def test_unknown_revision_table_and_repository(spark: SparkSession, warehouse: str) -> None:
    _small(spark)
    repo = open_warehouse(warehouse).repository("b")
    with pytest.raises(RefNotFound):
        repo.resolve("nope")
    with pytest.raises(InvalidRevision):
        repo.resolve("  ")
    with pytest.raises(ImageNotFound):
        repo.resolve("HEAD~1".replace("HEAD", repo.default_branch))
    with pytest.raises(TableNotFound):
        repo.table("nope")
    with pytest.raises(RepositoryNotFound):
        open_warehouse(warehouse).repository("nope")
    with pytest.raises(InvalidRevision):
        repo.as_of("yesterday")


def test_bad_columns_and_filters_are_invalid_options_before_any_read(spark: SparkSession, warehouse: str) -> None:
    spark.createDataFrame([(1, "a"), (2, "b")], "id long, v string").write.versioned("f.t", primary_key="id")
    spark.createDataFrame([], "id long, v string").write.versioned("f.empty", primary_key="id")
    before = sorted(os.listdir(warehouse))
    repo = open_warehouse(warehouse).repository("f")
    for table in ("t", "empty"):  # an empty table checks its filters too
        t = repo.table(table)
        for kwargs, words in ((dict(columns=["nocol"]), "no column nocol"),
                              (dict(filters=[("nocol", "==", 1)]), "no column 'nocol'"),
                              (dict(filters=[("id", "like", 1)]), "operator 'like'"),
                              (dict(filters=[("id", "==", "1")]), "column 'id' is int64"),
                              (dict(filters=[("id", "in", 1)]), "not a collection of values"),
                              (dict(filters=[("id", "in", ["x"])]), "not a collection of values"),
                              (dict(filters=[("id", "<")]), "not a (column, operator, value) triple")):
            with pytest.raises(InvalidOption) as e:
                t.to_arrow(**kwargs)
            assert words in str(e.value), (kwargs, str(e.value))
    assert repo.table("t").to_arrow(filters=[("id", "in", [2]), ("v", "==", None)]).num_rows == 0
    assert repo.table("t").to_arrow(filters=[("id", "in", (2,))]).to_pylist() == [{"id": 2, "v": "b"}]
    assert sorted(os.listdir(warehouse)) == before


def test_damaged_and_missing_objects_are_typed_errors(spark: SparkSession, warehouse: str) -> None:
    _small(spark)
    files = _object_files(warehouse)
    assert files
    before = {f: open(f, "rb").read() for f in files}
    repo = open_warehouse(warehouse).repository("b")
    assert repo.table("t").to_arrow().num_rows == 20
    for f, data in before.items():  # a flipped byte in the data pages, same size
        damaged = bytearray(data)
        damaged[10] ^= 0xFF
        damaged[len(data) // 3] ^= 0xFF
        with open(f, "wb") as out:
            out.write(bytes(damaged))
    with pytest.raises(ObjectCorrupt):
        repo.table("t").to_arrow()
    assert repo.verify_objects() and all(c == "OBJECT_CORRUPT" for _, c in repo.verify_objects())
    for f, data in before.items():  # a truncated file
        with open(f, "wb") as out:
            out.write(data[:-5])
    with pytest.raises(ObjectCorrupt):
        repo.table("t").to_arrow()
    for f in files:
        os.remove(f)
    with pytest.raises(ObjectMissing):
        repo.table("t").to_arrow()
    for f, data in before.items():
        with open(f, "wb") as out:
            out.write(data)
    assert repo.table("t").to_arrow().num_rows == 20
    assert _object_files(warehouse) == files  # the reader wrote nothing


def _refusing_handler() -> Any:
    import pyarrow.fs as pafs

    class _Refusing(pafs.FileSystemHandler):  # type: ignore[misc]
        """The local disk, except that while ``down`` it refuses to open or list anything under ``objects/`` as an
        object store that cannot be reached does: the refusal names the object it was asked for (a ``.parquet``
        path) and holds none of the words of damaged bytes."""

        def __init__(self) -> None:
            self.local = pafs.LocalFileSystem()
            self.down = False

        def _gate(self, path: str) -> None:
            if self.down and "/objects/" in path:
                raise OSError(f"AWS Error NETWORK_CONNECTION during GetObject operation: curlCode: 7, Couldn't "
                              f"connect to server (s3a://bucket{path})")

        def get_type_name(self) -> str:
            return "refusing"

        def normalize_path(self, path: str) -> str:
            return path

        def get_file_info(self, paths: List[str]) -> Any:
            for p in paths:
                self._gate(p)
            return self.local.get_file_info(paths)

        def get_file_info_selector(self, selector: Any) -> Any:
            self._gate(selector.base_dir + "/")
            return self.local.get_file_info(selector)

        def open_input_file(self, path: str) -> Any:
            self._gate(path)
            return self.local.open_input_file(path)

        def open_input_stream(self, path: str) -> Any:
            self._gate(path)
            return self.local.open_input_stream(path)

        def _never(self, *args: Any, **kwargs: Any) -> Any:  # writes are never asked of a reader
            raise AssertionError("the reader wrote to the object store")

        create_dir = delete_dir = delete_dir_contents = delete_root_dir_contents = delete_file = _never
        move = copy_file = open_output_stream = open_append_stream = _never

    return _Refusing()


def test_an_unreachable_store_is_a_storage_error_not_corruption(spark: SparkSession, warehouse: str) -> None:
    import pyarrow.fs as pafs

    from versioned.errors import StorageError
    from versioned.reader._errors import looks_corrupt

    _small(spark)
    files = _object_files(warehouse)
    before = {f: open(f, "rb").read() for f in files}
    repo = open_warehouse(warehouse).repository("b")
    handler = _refusing_handler()
    repo.warehouse.store._fs = pafs.PyFileSystem(handler)
    assert repo.table("t").to_arrow().num_rows == 20
    handler.down = True
    for attempt in (lambda: repo.table("t").to_arrow(), repo.verify, repo.verify_objects):
        with pytest.raises(StorageError) as e:
            attempt()
        assert e.value.error_class == "STORAGE_ERROR" and not isinstance(e.value, (ObjectCorrupt, ObjectMissing))
        assert "Couldn't connect" in str(e.value)
    with pytest.raises(StorageError, match="were not checked"):
        repo.verify()
    handler.down = False  # the store is back: the same reads succeed and every object is sound
    assert repo.table("t").to_arrow().num_rows == 20
    assert repo.verify_objects() == []
    assert all(r["status"] == "ok" for r in repo.verify())
    assert {f: open(f, "rb").read() for f in _object_files(warehouse)} == before  # nothing written or changed
    # the classifier: a store's error naming a .parquet object is not damage; pyarrow's words for damage are
    assert not looks_corrupt(OSError("Connection refused: s3a://b/wh/objects/ab/ab12.parquet"))
    assert not looks_corrupt(PermissionError(13, "Permission denied", "/wh/objects/ab/ab12.parquet"))
    assert looks_corrupt(OSError("Parquet magic bytes not found in footer. Either the file is corrupted or this is "
                                 "not a parquet file."))
    assert looks_corrupt(OSError("Couldn't deserialize thrift: TProtocolException: Invalid data"))
    assert looks_corrupt(OSError("CRC checksum verification failed for page"))
    assert looks_corrupt(EOFError("unexpected end of file"))
    assert looks_corrupt(ValueError("Invalid: bad dictionary index"))


def test_missing_and_foreign_metastores_are_refused(spark: SparkSession, warehouse: str, tmp_path: Any) -> None:
    _small(spark)
    with pytest.raises(WarehouseMismatch):  # no warehouse at all: nothing is created
        open_warehouse(str(tmp_path / "nowhere"))
    assert not os.path.exists(tmp_path / "nowhere")
    other = str(tmp_path / "other")
    spark.conf.set("spark.versioned.warehouse", other)
    _small(spark)
    spark.conf.set("spark.versioned.warehouse", warehouse)
    with pytest.raises(WarehouseMismatch):  # another warehouse's metastore
        open_warehouse(warehouse, f"jdbc:sqlite:{other}/metastore.db")
    moved = str(tmp_path / "moved.db")
    shutil.move(os.path.join(warehouse, "metastore.db"), moved)
    try:
        with pytest.raises(WarehouseMismatch):  # the metastore file is gone while the store holds data
            open_warehouse(warehouse)
        assert not os.path.exists(os.path.join(warehouse, "metastore.db"))
    finally:
        shutil.move(moved, os.path.join(warehouse, "metastore.db"))
    empty = str(tmp_path / "empty.db")
    import sqlite3

    sqlite3.connect(empty).close()
    with pytest.raises(WarehouseMismatch):
        open_warehouse(warehouse, f"jdbc:sqlite:{empty}")


def test_newer_metastore_format_is_refused_naming_the_version(spark: SparkSession, warehouse: str,
                                                              tmp_path: Any) -> None:
    _small(spark)
    import sqlite3

    copy = str(tmp_path / "copy")
    shutil.copytree(warehouse, copy)
    c = sqlite3.connect(os.path.join(copy, "metastore.db"))
    c.execute("UPDATE vc_meta SET value = '99' WHERE key = 'schema_version'")
    c.commit()
    c.close()
    with pytest.raises(MetastoreError, match="99"):
        open_warehouse(copy)
    assert open_warehouse(warehouse).repository("b").table("t").to_arrow().num_rows == 20


def test_unreachable_postgres_is_a_metastore_error(tmp_path: Any) -> None:
    pytest.importorskip("psycopg")
    with pytest.raises(MetastoreError):
        open_warehouse(str(tmp_path), "jdbc:postgresql://127.0.0.1:1/none?user=u&password=p")


def test_a_table_of_an_unknown_format_version_is_refused_by_both_readers(spark: SparkSession, warehouse: str) -> None:
    """``vc_tables.format_version`` newer than the reader knows: ``TABLE_FORMAT_UNSUPPORTED`` from the Spark read and
    the Spark-free reader alike, never rows; nothing is changed, and the table reads again once the row is back."""
    from versioned.errors import TableFormatUnsupported
    import sqlite3

    repo = _small(spark)
    db = os.path.join(warehouse, "metastore.db")
    with sqlite3.connect(db) as c:
        c.execute("UPDATE vc_tables SET format_version = 3 WHERE repo = 'b' AND name = 't'")
    with pytest.raises(TableFormatUnsupported, match="format version 3"):
        open_warehouse(warehouse).repository("b").table("t").to_arrow()
    with pytest.raises(TableFormatUnsupported, match="format version 3"):
        spark.read.versioned("b.t").collect()
    assert repo.log().count() == 1
    with sqlite3.connect(db) as c:
        c.execute("UPDATE vc_tables SET format_version = NULL WHERE repo = 'b' AND name = 't'")
    assert open_warehouse(warehouse).repository("b").table("t").to_arrow().num_rows == 20
