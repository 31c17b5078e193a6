"""The Spark-free reader (versioned.reader) against the Spark read: histories built through Spark with a seeded
random generator (keyed and key-less tables, a schema change, many commits so compaction runs, deletes, upserts,
a merge, a branch and a tag), every version read both ways must hold the same rows, and every revision must name
the same image. The bad inputs are in test_reader_bad_input.py."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import time
from typing import Any, Dict, Iterator, List, Tuple

import pytest
from pyspark.sql import SparkSession

import versioned
from versioned import Repository
from versioned.errors import ObjectCorrupt, ObjectMissing
from versioned.reader import open_warehouse

from reader_support import _object_files, _root, _small

KEYED = "id long, name string, qty int, price double"


def _spark_rows(spark: SparkSession, table: str, ref: str, columns: List[str]) -> List[Tuple[Any, ...]]:
    df = spark.read.versioned(table, ref=ref).select(*columns)
    return sorted((tuple(r) for r in df.collect()), key=repr)


def _reader_rows(repo: Any, table: str, ref: str, columns: List[str]) -> List[Tuple[Any, ...]]:
    t = repo.table(table, ref).to_arrow(columns=columns)
    return sorted((tuple(r[c] for c in columns) for r in t.to_pylist()), key=repr)


def _random_rows(rng: random.Random, ids: List[int]) -> List[Tuple[Any, ...]]:
    return [(i, rng.choice(["a", "b", "ü", None, "zz"]), rng.randint(-5, 50), rng.choice([0.5, -1.0, 2.25, None]))
            for i in ids]


def _build_history(spark: SparkSession, seed: int) -> Tuple[Repository, List[str]]:
    """Commits through Spark; returns the repository and every image hash of its default branch and branch dev."""
    rng = random.Random(seed)
    spark.createDataFrame(_random_rows(rng, list(range(200))), KEYED).write.versioned(
        "c.items", primary_key="id", message="load items")
    spark.createDataFrame([(rng.randint(0, 3), rng.choice(["x", "y"])) for _ in range(30)], "k int, v string") \
        .write.versioned("c.bag", message="load bag")
    repo = Repository(spark, "c")
    main = repo.default_branch
    for step in range(8):
        choice = rng.randrange(4)
        if choice == 0:
            ids = rng.sample(range(400), 25)
            repo.upsert(spark.createDataFrame(_random_rows(rng, ids), KEYED), "items", message=f"upsert {step}")
        elif choice == 1:
            lo = rng.randrange(200)
            repo.delete_where("items", f"id BETWEEN {lo} AND {lo + 7}", message=f"delete {step}")
        elif choice == 2:
            fresh = [1000 + step * 10 + i for i in range(5)]
            spark.createDataFrame(_random_rows(rng, fresh), KEYED).write.versioned(
                "c.items", mode="append", message=f"append {step}")
        else:
            spark.createDataFrame([(rng.randint(0, 3), rng.choice(["x", "y", None])) for _ in range(4)],
                                  "k int, v string").write.versioned("c.bag", mode="append", message=f"bag {step}")
    repo.create_tag("before-dev")
    repo.create_branch("dev")
    repo.upsert(spark.createDataFrame(_random_rows(rng, [1, 2, 3, 5000]), KEYED), "items", branch="dev",
                message="dev edit")
    repo.delete_where("bag", "k = 0", message="bag delete on main")
    repo.merge("dev", main, message="merge dev")
    # a schema change: overwrite with a new column
    spark.createDataFrame([(i, f"n{i}", i % 3 == 0) for i in range(50)], "id long, name string, flag boolean") \
        .write.versioned("c.shape", primary_key="id", message="shape v1")
    spark.createDataFrame([(i, f"m{i}", i * 2) for i in range(40)], "id long, name string, twice long") \
        .write.versioned("c.shape", mode="overwrite", message="shape v2")
    jvm = getattr(getattr(spark, "_sc", None), "_jvm", None)
    if jvm is not None:  # let background compaction record its compacted forms
        getattr(jvm, "versioned.spark.api.VersionedApi").awaitCompactions(0)
    hashes = [r["hash"] for r in repo.log(main).collect()]
    return repo, hashes


def _assert_same_diff(reader: Any, repo: Repository, table: str, a: str, b: str) -> None:
    """The reader's row diff of ``table`` from ``a`` to ``b`` has the connector's columns and rows."""
    got_diff = reader.diff(table, a, b)
    want_diff = repo.diff(table, a, b)
    assert got_diff.column_names == want_diff.columns
    assert sorted(map(repr, (tuple(r.values()) for r in got_diff.to_pylist()))) == \
        sorted(map(repr, (tuple(r) for r in want_diff.collect()))), (table, a, b)


def _check_same(spark: SparkSession, wh: str, metastore_url: Any = None, seed: int = 36) -> None:
    repo, hashes = _build_history(spark, seed)
    reader = open_warehouse(wh, metastore_url).repository("c")
    assert [c.hash for c in reader.log()] == hashes
    compared = 0
    for h in hashes:
        for table in reader.tables(h):
            cols = reader.table(table, h).schema.names
            assert _reader_rows(reader, table, h, cols) == _spark_rows(spark, f"c.{table}", h, cols), (table, h)
            compared += 1
    assert compared >= 20
    # a filtered read and a projection agree with Spark's
    head = reader.resolve().hash
    got = reader.table("items", head).to_arrow(columns=["id", "qty"], filters=[("id", ">=", 50), ("id", "<", 120)])
    want = spark.read.versioned("c.items", ref=head).where("id >= 50 AND id < 120").select("id", "qty").collect()
    assert sorted(tuple(r.values()) for r in got.to_pylist()) == sorted(tuple(r) for r in want)
    # revisions resolve to the same image on both sides
    main = repo.default_branch
    merge = reader.resolve(f"{main}~2")
    assert len(merge.parents) == 2 and merge.message == "merge dev"
    specs = [main, "dev", "before-dev", "before-dev~1", f"{main}~2", f"{main}~2^2", f"{main}~2^2~1", f"{main}~2^1",
             f"{main}~2^", hashes[3][:7], hashes[-1], "heads/dev", "tags/before-dev^", f" {main}~1 "]
    for spec in specs:
        assert reader.resolve(spec).hash == repo.resolve(spec), spec
    # row diffs equal the connector's, keyed and key-less, across several commits
    for table, a, b in (("items", "before-dev", main), ("items", hashes[-1], main), ("bag", hashes[-2], main),
                        ("items", f"{main}~2^2", f"{main}~3")):
        _assert_same_diff(reader, repo, table, a, b)
    oldest = reader.image(hashes[-1])
    assert reader.as_of(oldest.created_ms).hash == hashes[-1]
    assert [b.name for b in reader.branches()] == sorted(r["name"] for r in repo.branches().collect())
    assert [t.name for t in reader.tags()] == ["before-dev"]
    # verify: the same objects, all sound, needed by the same versions
    checked = reader.verify()
    assert checked and {r["status"] for r in checked} == {"ok"}
    assert [(r["object"], r["needed_by"]) for r in checked] == \
        sorted((r["object"], list(r["needed_by"])) for r in repo.verify().collect())


def test_every_version_reads_as_spark_reads_it(spark: SparkSession, warehouse: str) -> None:
    _check_same(spark, warehouse)


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh database on the PostgreSQL of VERSIONED_TEST_POSTGRES_URL (dropped afterwards)."""
    admin = os.environ.get("VERSIONED_TEST_POSTGRES_URL")
    if not admin:
        pytest.skip("PostgreSQL unavailable: set VERSIONED_TEST_POSTGRES_URL (bin/setup-postgres prints it)")
    pytest.importorskip("psycopg")
    m = re.match(r"jdbc:postgresql://([^:/]+):?(\d*)/([^?]+)\?(.*)$", admin)
    assert m, f"unexpected VERSIONED_TEST_POSTGRES_URL {admin}"
    import psycopg

    host, port, _, query = m.groups()
    params = dict(p.split("=", 1) for p in query.split("&"))
    db = f"versioned_reader_{os.getpid()}_{int(time.time())}"
    admin_info = dict(host=host, port=int(port or 5432), user=params["user"], password=params.get("password", ""),
                      dbname="postgres", autocommit=True)
    with psycopg.connect(**admin_info) as c:
        c.execute(f"CREATE DATABASE {db}")
    try:
        yield f"jdbc:postgresql://{host}:{port or 5432}/{db}?{query}"
    finally:
        with psycopg.connect(**admin_info) as c:
            c.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")


def test_every_version_reads_as_spark_reads_it_on_postgres(spark: SparkSession, warehouse: str,
                                                           postgres_url: str) -> None:
    spark.conf.set("spark.versioned.metastore.url", postgres_url)
    try:
        _check_same(spark, warehouse, postgres_url, seed=7)
    finally:
        spark.conf.unset("spark.versioned.metastore.url")


def test_importing_the_reader_imports_no_pyspark() -> None:
    code = ("import sys; import versioned.reader; from versioned.reader import open_warehouse; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')]; print(bad); "
            "sys.exit(1 if bad else 0)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(_root(), "python"), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_pandas_and_duckdb_and_diff(spark: SparkSession, warehouse: str) -> None:
    repo = _small(spark)
    repo.delete_where("t", "id < 3", message="drop")
    repo.upsert(spark.createDataFrame([(5, "five"), (99, "new")], "id long, name string"), "t", message="edit")
    reader = open_warehouse(warehouse).repository("b")
    main = reader.default_branch
    pdf = reader.table("t").to_pandas()
    assert list(pdf["id"]) == sorted(set(range(3, 20)) | {99})
    changes = {(r["_change"], r["id"], r["name_before"], r["name_after"])
               for r in reader.diff("t", f"{main}~2", main).to_pylist()}
    assert changes == {("delete", 0, "n0", None), ("delete", 1, "n1", None), ("delete", 2, "n2", None),
                       ("update", 5, "n5", "five"), ("insert", 99, None, "new")}
    duckdb = pytest.importorskip("duckdb")
    rel = reader.table("t").to_reader(columns=["id"])
    assert duckdb.sql("SELECT count(*), max(id) FROM rel").fetchall() == [(18, 99)]
    assert reader.table("t", f"{main}~2").to_duckdb().aggregate("count(*)").fetchall() == [(20,)]
    polars = pytest.importorskip("polars")
    frame = reader.table("t").to_polars(columns=["id", "name"], filters=[("id", "in", [5, 99, 1000])])
    assert isinstance(frame, polars.DataFrame) and frame.rows() == [(5, "five"), (99, "new")]


def test_read_only_commands_start_no_jvm(spark: SparkSession, warehouse: str) -> None:
    """log (--graph), show and the ref listings answer from the reader: the process never imports PySpark."""
    repo = _small(spark)
    repo.create_tag("v1")
    repo.create_lock("etl", "run-1")
    repo.upsert(spark.createDataFrame([(1, "one")], "id long, name string"), "t", message="edit one")
    code = ("import sys\nfrom versioned.cli import app\n"
            "for args in (['log', 'b', '-n', '5'], ['log', 'b', '--graph', '--oneline'], ['show', 'b', 'v1'], "
            "['branch', 'b'], ['tag', 'b', '-f', 'json'], ['lock', 'b', '-f', 'csv'], ['cat', 'b.t@v1', '-n', '3'], "
            "['diff', 'b.t', 'v1', sys.argv[2], '--stat'], ['diff', 'b.t', 'v1', sys.argv[2], '-f', 'csv']):\n"
            "    app(args=['-w', sys.argv[1], '--no-color'] + args, standalone_mode=False)\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')]\n"
            "print('IMPORTED', bad)\nsys.exit(3 if bad else 0)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(_root(), "python"), os.environ.get("PYTHONPATH", "")]),
               COLUMNS="200")
    out = subprocess.run([sys.executable, "-c", code, warehouse, repo.default_branch], env=env, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "edit one" in out.stdout and "tag: v1" in out.stdout and "etl:run-1" in out.stdout
    assert "0 inserted" in out.stdout and "1 updated" in out.stdout and "update,1,n1,one" in out.stdout
    assert "n2" in out.stdout and "n3" not in out.stdout  # cat -n 3: ids 0, 1, 2
    assert "IMPORTED []" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "versioned.cli", "-w", warehouse, "log", "b", "nope"], env=env,
                         capture_output=True, text=True)
    assert bad.returncode == 1 and bad.stderr.startswith("[REF_NOT_FOUND]"), bad.stderr


def test_lazy_clone_reads_objects_in_place(spark: SparkSession, warehouse: str, tmp_path: Any) -> None:
    """A clone that copied no objects: the reader reads them at the remote's location, verified, as Spark does."""
    source = str(tmp_path / "source")
    spark.conf.set("spark.versioned.warehouse", source)
    repo = _small(spark)
    repo.upsert(spark.createDataFrame([(3, "three"), (40, "forty")], "id long, name string"), "t", message="edit")
    spark.conf.set("spark.versioned.warehouse", warehouse)
    versioned.clone(spark, "b", warehouse=source, metastore_url=f"jdbc:sqlite:{source}/metastore.db")
    assert not _object_files(warehouse)  # nothing downloaded: every object is read at its location
    reader = open_warehouse(warehouse).repository("b")
    main = reader.default_branch
    for ref in (main, f"{main}~1", "origin/" + main):
        assert _reader_rows(reader, "t", ref, ["id", "name"]) == _spark_rows(spark, "b.t", ref, ["id", "name"])
    assert reader.remote_refs() and reader.remotes()["origin"]["repository"] == "b"
    for f in _object_files(source):  # damage at the remote is caught as well
        data = bytearray(open(f, "rb").read())
        data[len(data) // 2] ^= 0xFF
        open(f, "wb").write(bytes(data))
    with pytest.raises(ObjectCorrupt):
        reader.table("t").to_arrow()


def test_objects_two_remotes_hold_are_read_at_the_second_when_the_first_loses_them(spark: SparkSession, warehouse: str,
                                                                                    tmp_path: Any) -> None:
    """Identical objects of two remotes are recorded at both, in order; the reader, like Spark, reads them at the
    second place once the first lost them, and verify finds them intact there."""
    import shutil
    import sqlite3

    source, mirror = str(tmp_path / "source"), str(tmp_path / "mirror")
    spark.conf.set("spark.versioned.warehouse", source)
    repo = _small(spark)
    repo.upsert(spark.createDataFrame([(3, "three"), (40, "forty")], "id long, name string"), "t", message="edit")
    spark.conf.set("spark.versioned.warehouse", warehouse)
    with sqlite3.connect(f"{source}/metastore.db") as db:  # the copy below holds every committed page
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copytree(source, mirror)  # a second warehouse with the same objects
    versioned.clone(spark, "b", warehouse=source, metastore_url=f"jdbc:sqlite:{source}/metastore.db")
    versioned.clone(spark, "b", warehouse=mirror, metastore_url=f"jdbc:sqlite:{mirror}/metastore.db", into="m")
    assert not _object_files(warehouse)
    main = Repository(spark, "m").default_branch
    expected = _spark_rows(spark, "m.t", main, ["id", "name"])
    shutil.move(f"{source}/objects", f"{source}-objects-aside")  # the first remote lost its objects
    reader = open_warehouse(warehouse)
    for name in ("b", "m"):
        assert _reader_rows(reader.repository(name), "t", main, ["id", "name"]) == expected
        assert _spark_rows(spark, f"{name}.t", main, ["id", "name"]) == expected
        assert reader.repository(name).verify_objects(main) == []
    shutil.move(f"{mirror}/objects", f"{mirror}-objects-aside")  # no place holds them
    with pytest.raises(ObjectMissing):
        reader.repository("m").table("t", main).to_arrow()


def test_verify_finds_a_changed_reflog_entry_as_the_connector_does(spark: SparkSession, warehouse: str) -> None:
    import sqlite3

    spark.createDataFrame([(1, "a")], "id long, name string").write.versioned("rl.t", primary_key="id")
    repo = Repository(spark, "rl")
    repo.create_branch("dev", repo.default_branch)
    repo.create_tag("v1", "dev")
    reader = open_warehouse(warehouse).repository("rl")

    def reflog_rows(rows: List[Dict[str, Any]]) -> List[Tuple[Any, ...]]:
        return sorted((r["object"], r["status"], r["detail"]) for r in rows if r["kind"] == "reflog")

    intact = reflog_rows(reader.verify())
    assert intact == reflog_rows([r.asDict() for r in repo.verify().collect()])
    assert [status for _, status, _ in intact] == ["ok"]
    with sqlite3.connect(os.path.join(warehouse, "metastore.db")) as db:
        db.execute("UPDATE vc_reflog SET who = 'mallory' WHERE repo = 'rl' AND seq = 2")
    tampered = reflog_rows(reader.verify())
    assert tampered == reflog_rows([r.asDict() for r in repo.verify().collect()])
    assert [(o, s) for o, s, _ in tampered] == [("reflog@{2}", "changed")]


def test_the_read_rule_reads_objects_listed_by_several_fragments_within_each(spark: SparkSession,
                                                                             warehouse: str) -> None:
    """An upsert's per-fragment DIFFs appended to every chain of the version before it (as a shared DIFF is): the
    reader reads each within its fragment's bounds, so the rows, filtered reads and diffs are the upsert's."""
    spark.conf.set("spark.versioned.fragment.targetRows", "40")
    try:
        spark.createDataFrame([(i, f"n{i}") for i in range(200)], "id long, name string").write.versioned(
            "s.t", primary_key="id", message="load")
    finally:
        spark.conf.unset("spark.versioned.fragment.targetRows")
    repo = Repository(spark, "s")
    spark.conf.set("spark.versioned.write.sharedDiffMaxRows", "0")  # one DIFF per fragment, shared here by hand
    try:
        repo.upsert(spark.createDataFrame([(3, "u3"), (77, "u77"), (150, "u150"), (199, "u199"), (500, "i500")],
                                          "id long, name string"), "t", message="scattered")
    finally:
        spark.conf.unset("spark.versioned.write.sharedDiffMaxRows")
    reader = open_warehouse(warehouse).repository("s")
    before, after = reader.table("t", f"{repo.default_branch}~1"), reader.table("t")
    assert len(before.fragments) >= 4
    added = [o for a, b in zip(after.fragments, before.fragments) for o in a["objects"][len(b["objects"]):]]
    assert len(added) >= 4, added
    import sqlite3

    with sqlite3.connect(os.path.join(warehouse, "metastore.db")) as c:  # recorded as shared objects
        c.execute(f"UPDATE vc_objects SET shared = 1 WHERE id IN ({','.join('?' * len(added))})", added)
    reader = open_warehouse(warehouse).repository("s")
    before, after = reader.table("t", f"{repo.default_branch}~1"), reader.table("t")
    shared = before.with_fragments([dict(f, objects=f["objects"] + added) for f in before.fragments])
    shared.objects.update(after.objects)
    expected = after.to_arrow().to_pylist()
    assert shared.to_arrow().to_pylist() == expected
    assert len(expected) == 201
    for flt in ([("id", ">=", 100)], [("id", "in", [3, 77, 500])], [("name", "==", "u150")]):
        assert shared.to_arrow(filters=flt).to_pylist() == after.to_arrow(filters=flt).to_pylist(), flt
    from versioned.reader._diff import diff_versions

    assert diff_versions("s.t", before, shared).to_pylist() == diff_versions("s.t", before, after).to_pylist()


def test_shared_diffs_written_by_spark_tasks_read_alike(spark: SparkSession, warehouse: str) -> None:
    """A change set over localCommitMaxRows is written by Spark tasks, each writing one DIFF shared by the fragments
    whose changes it holds: the reader reads every version, filtered reads and diffs as Spark does."""
    spark.conf.set("spark.versioned.fragment.targetRows", "40")
    try:
        spark.createDataFrame([(i, f"n{i}") for i in range(400)], "id long, name string").write.versioned(
            "w.t", primary_key="id", message="load")
    finally:
        spark.conf.unset("spark.versioned.fragment.targetRows")
    repo = Repository(spark, "w")
    rng = random.Random(37)
    changes = [(i, f"u{i}", False) for i in rng.sample(range(400), 120)] + [(i, None, True) for i in range(0, 400, 9)]
    changes = list({c[0]: c for c in changes}.values()) + [(1000 + i, f"i{i}", False) for i in range(5)]
    spark.conf.set("spark.versioned.write.localCommitMaxRows", "0")  # the tasks write the DIFFs
    try:
        repo.upsert(spark.createDataFrame(changes, "id long, name string, gone boolean"), "t", delete_column="gone",
                    message="scattered")
    finally:
        spark.conf.unset("spark.versioned.write.localCommitMaxRows")
    reader = open_warehouse(warehouse).repository("w")
    after = reader.table("t")
    listed: Dict[str, int] = {}
    for f in after.fragments:
        for o in f["objects"][1:]:
            listed[o] = listed.get(o, 0) + 1
    assert len(after.fragments) >= 10 and max(listed.values()) > 1, listed  # shared by several fragments
    assert len(listed) < len(after.fragments)
    for ref in (f"{repo.default_branch}~1", repo.default_branch):
        assert _reader_rows(reader, "t", ref, ["id", "name"]) == _spark_rows(spark, "w.t", ref, ["id", "name"]), ref
    for flt, cond in (([("id", ">=", 100), ("id", "<", 260)], "id >= 100 AND id < 260"),
                      ([("id", "in", [0, 9, 10, 1003])], "id IN (0, 9, 10, 1003)")):
        got = sorted(tuple(r.values()) for r in after.to_arrow(filters=flt).to_pylist())
        assert got == sorted(tuple(r) for r in spark.read.versioned("w.t").where(cond).collect()), flt
    _assert_same_diff(reader, repo, "t", f"{repo.default_branch}~1", repo.default_branch)
    assert {r["status"] for r in reader.verify()} == {"ok"}


def test_appends_past_the_last_key_are_new_fragments_read_alike(spark: SparkSession, warehouse: str,
                                                                tmp_path: Any) -> None:
    """Appends whose keys are above every stored key (a batch insert, an upsert of new keys, a stream of ascending
    ids) become new last fragments (docs/FORMAT.md, "Appends past the last key"); the Spark-free reader reads every
    version as Spark does, before and after compaction."""
    import json

    spark.conf.set("spark.versioned.fragment.targetRows", "40")
    try:
        spark.createDataFrame([(i, f"n{i}") for i in range(120)], "id long, name string").write.versioned(
            "a.t", primary_key="id", message="load")
        repo = Repository(spark, "a")
        spark.createDataFrame([(i, f"i{i}") for i in range(200, 230)], "id long, name string").write.versioned(
            "a.t", mode="append", message="insert past the last key")
        repo.upsert(spark.createDataFrame([(i, f"u{i}") for i in range(230, 260)], "id long, name string"), "t",
                    message="upsert past the last key")
        source, checkpoint = str(tmp_path / "in"), str(tmp_path / "ckpt")
        os.makedirs(source)
        for n, (lo, hi) in enumerate([(300, 325), (325, 330), (330, 360)]):
            with open(os.path.join(source, f"{n}.json"), "w") as f:
                for i in range(lo, hi):
                    f.write(json.dumps({"id": i, "name": f"s{i}"}) + "\n")
            (spark.readStream.schema("id long, name string").json(source).writeStream.format("versioned")
             .option("checkpointLocation", checkpoint).trigger(availableNow=True).start("a.t").awaitTermination())
    finally:
        spark.conf.unset("spark.versioned.fragment.targetRows")
    reader = open_warehouse(warehouse).repository("a")
    lowers = [f["lower"] for f in reader.table("t").fragments]
    assert lowers[-4:] == [[200], [230], [300], [330]], lowers  # the 5-row batch is a DIFF on the fragment of 300
    expected = [(i, f"n{i}") for i in range(120)] + [(i, f"i{i}") for i in range(200, 230)] + \
        [(i, f"u{i}") for i in range(230, 260)] + [(i, f"s{i}") for i in range(300, 360)]
    columns = ["id", "name"]
    main = repo.default_branch
    for back in range(6):
        ref = f"{main}~{back}"
        assert _reader_rows(reader, "t", ref, columns) == _spark_rows(spark, "a.t", ref, columns), ref
    assert _reader_rows(reader, "t", main, columns) == sorted(expected, key=repr)
    assert reader.table("t").to_arrow(filters=[("id", ">=", 231)]).num_rows == 29 + 60
    spark.conf.set("spark.versioned.compaction.maxDiffRatio", "0.0001")
    try:
        repo.upsert(spark.createDataFrame([(5, "c5"), (201, "c201"), (301, "c301"), (900, "c900")],
                                          "id long, name string"), "t", message="changes")
        repo.compact("t").collect()
    finally:
        spark.conf.unset("spark.versioned.compaction.maxDiffRatio")
    getattr(getattr(getattr(spark, "_sc"), "_jvm"), "versioned.spark.api.VersionedApi").awaitCompactions(0)
    reader = open_warehouse(warehouse).repository("a")
    assert reader.table("t").compacted is not None
    assert _reader_rows(reader, "t", main, columns) == _spark_rows(spark, "a.t", main, columns)
    assert len(_reader_rows(reader, "t", main, columns)) == len(expected) + 1
