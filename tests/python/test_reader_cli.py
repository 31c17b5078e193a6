"""The reader's row diff across schema changes (added, dropped and widened columns, a changed key, an incomparable
type change) against the connector's, and the command line's export and verify on the reader: same results as the
Spark path, no JVM started, bad input refused with its typed error and nothing written."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any, List

import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from versioned import Repository
from versioned.errors import RefNotFound, SchemaMismatch
from versioned.reader import open_warehouse


def _root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(_root(), "python"), os.environ.get("PYTHONPATH", "")]),
           COLUMNS="200")


def _same_diff(reader: Any, repo: Repository, table: str, a: str, b: str) -> int:
    got = reader.diff(table, a, b)
    want = repo.diff(table, a, b)
    assert got.column_names == want.columns, (table, a, b)
    assert [str(f.type) for f in got.schema][1:] and len(got.schema) == len(want.schema)
    rows = sorted(map(repr, (tuple(r.values()) for r in got.to_pylist())))
    assert rows == sorted(map(repr, (tuple(r) for r in want.collect()))), (table, a, b)
    return len(rows)


def test_diff_across_schema_changes_equals_the_connectors(spark: SparkSession, warehouse: str) -> None:
    spark.createDataFrame([(1, "a", 3, "x"), (2, "b", 5, "y"), (3, "c", 7, None)],
                          "id long, name string, qty int, gone string").write.versioned(
        "s.t", primary_key="id", message="v1")
    repo = Repository(spark, "s")
    repo.create_tag("v1")
    # a dropped column (gone), a widened one (qty int -> bigint), an added one (price)
    spark.createDataFrame([(1, "a", 3, None), (2, "B", 5, 1.5), (4, "d", 9, 2.0)],
                          "id long, name string, qty long, price double").write.versioned(
        "s.t", mode="overwrite", message="reshape")
    main = repo.default_branch
    reader = open_warehouse(warehouse).repository("s")
    assert _same_diff(reader, repo, "t", "v1", main) == 4  # every row: gone is null after, qty compared as bigint
    assert _same_diff(reader, repo, "t", main, "v1") == 4
    cols = reader.diff("t", "v1", main).column_names
    assert cols == ["_change", "id", "name_before", "name_after", "qty_before", "qty_after", "price_before",
                    "price_after", "gone_before", "gone_after"]
    # a key-less table that gains a key: rows matched whole over the columns both versions have
    spark.createDataFrame([(1, "p"), (1, "p"), (2, "q")], "k int, v string").write.versioned("s.bag", message="bag")
    repo.create_tag("bag1")
    spark.createDataFrame([(1, "p", True), (3, "r", False)], "k int, v string, f boolean").write.versioned(
        "s.bag", mode="overwrite", primary_key="k", message="keyed")
    assert _same_diff(reader, repo, "bag", "bag1", main) == 3
    # a table created between the two revisions: every row inserted
    spark.createDataFrame([(7, "n")], "id long, name string").write.versioned("s.fresh", primary_key="id",
                                                                              message="fresh")
    assert _same_diff(reader, repo, "fresh", "bag1", main) == 1
    # a type change with no common wider type is the same typed error on both sides
    spark.createDataFrame([(1, "a", True)], "id long, name string, qty boolean").write.versioned(
        "s.t", mode="overwrite", message="qty is a flag now")
    with pytest.raises(SchemaMismatch, match="qty"):
        reader.diff("t", "v1", main)
    with pytest.raises(SchemaMismatch):
        repo.diff("t", "v1", main).collect()


def test_export_and_verify_and_schema_diff_start_no_jvm(spark: SparkSession, warehouse: str, tmp_path: Any) -> None:
    spark.createDataFrame([(1, 'say "hi", then go', True, 1.5), (2, None, False, None), (3, "plain", None, -2.0)],
                          "id long, note string, ok boolean, x double").write.versioned(
        "e.t", primary_key="id", message="load")
    repo = Repository(spark, "e")
    repo.create_tag("v1")
    repo.upsert(spark.createDataFrame([(2, "two", True, 0.0)], "id long, note string, ok boolean, x double"), "t",
                message="edit")
    spark.createDataFrame([(1, "a", 2)], "id long, note string, n long").write.versioned(
        "e.t", mode="overwrite", message="reshape")
    csv, parquet = str(tmp_path / "t.csv"), str(tmp_path / "t.parquet")
    code = ("import sys\nfrom versioned.cli import app\n"
            "for args in (['export', 'e.t@v1', sys.argv[2]], ['export', 'e.t@v1', sys.argv[3]], ['verify', 'e'], "
            "['verify', 'e', 'v1', '-f', 'json'], ['diff', 'e.t', 'v1', sys.argv[4], '-f', 'csv']):\n"
            "    app(args=['-w', sys.argv[1], '--no-color'] + args, standalone_mode=False)\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')]\n"
            "print('IMPORTED', bad)\nsys.exit(3 if bad else 0)\n")
    out = subprocess.run([sys.executable, "-c", code, warehouse, csv, parquet, repo.default_branch], env=ENV,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "IMPORTED []" in out.stdout and "object(s) ok" in out.stdout and '"status": "ok"' in out.stdout
    assert "_change,id,note_before,note_after" in out.stdout and "n_before,n_after" in out.stdout
    # what Spark reads back from the exported files is the version exported
    want = sorted(tuple(r) for r in spark.read.versioned("e.t", ref="v1").collect())
    assert sorted(tuple(r) for r in spark.read.parquet(parquet).collect()) == want
    back = spark.read.options(header=True, inferSchema=True).csv(csv)
    assert back.columns == ["id", "note", "ok", "x"]
    assert sorted(tuple(r) for r in back.collect()) == want
    assert pq.read_table(parquet).column("id").to_pylist() == [1, 2, 3]


def _objects(warehouse: str) -> List[str]:
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(os.path.join(warehouse, "objects")) for f in fs
                  if f.endswith(".parquet"))


def test_verify_reports_corrupt_and_missing_objects_and_export_refuses_bad_input(spark: SparkSession,
                                                                                warehouse: str, tmp_path: Any) -> None:
    spark.createDataFrame([(i, f"n{i}") for i in range(10)], "id long, name string").write.versioned(
        "g.t", primary_key="id", message="load")
    repo = Repository(spark, "g")
    repo.upsert(spark.createDataFrame([(3, "three")], "id long, name string"), "t", message="edit")
    reader = open_warehouse(warehouse).repository("g")
    rows = reader.verify()
    assert [r["kind"] for r in rows].count("reflog") == 1  # the reflog's hash chain, intact
    assert len(rows) == 3 and {r["status"] for r in rows} == {"ok"}
    assert {tuple(sorted((r["object"], r["status"]) for r in rows))} == \
        {tuple(sorted((r["object"], r["status"]) for r in repo.verify().collect()))}
    files = _objects(warehouse)
    first, second = files[0], files[1]
    data = bytearray(open(first, "rb").read())
    data[len(data) // 2] ^= 0xFF  # same size, one byte changed: only the whole-file checksum sees it
    open(first, "wb").write(bytes(data))
    os.rename(second, second + ".away")
    try:
        got = {os.path.basename(r["object"]): r["status"] for r in reader.verify([repo.default_branch])
               if r["kind"] != "reflog"}
        assert sorted(got.values()) == ["corrupt", "missing"]
        want = {r["object"]: r["status"] for r in repo.verify([repo.default_branch]).collect() if r["kind"] != "reflog"}
        assert got == want
        cli = subprocess.run([sys.executable, "-m", "versioned.cli", "-w", warehouse, "verify", "g"], env=ENV,
                             capture_output=True, text=True)
        assert cli.returncode == 1 and cli.stderr.startswith("[VERIFY_FAILED] 2 object(s)"), cli.stderr
    finally:
        os.rename(second + ".away", second)
    assert _objects(warehouse) == files  # verify wrote nothing
    with pytest.raises(RefNotFound):
        reader.verify(["nope"])
    exports = tmp_path / "exports"
    exports.mkdir()
    out = str(exports / "t.csv")
    bad = subprocess.run([sys.executable, "-m", "versioned.cli", "-w", warehouse, "export", "g.t@nope", out], env=ENV,
                         capture_output=True, text=True)
    assert bad.returncode == 1 and bad.stderr.startswith("[REF_NOT_FOUND]"), bad.stderr
    corrupt = subprocess.run([sys.executable, "-m", "versioned.cli", "-w", warehouse, "export", "g.t", out], env=ENV,
                             capture_output=True, text=True)
    assert corrupt.returncode == 1 and corrupt.stderr.startswith("[OBJECT_CORRUPT]"), corrupt.stderr
    assert os.listdir(exports) == []  # neither the file nor its temporary file
