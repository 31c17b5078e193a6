"""The ``versioned`` command line, run in-process with Click's test runner on the tests' session (the CLI reuses
an active session, so no second JVM is started)."""

from __future__ import annotations

import json
import os
from typing import Any, List

import pytest
from click.testing import CliRunner, Result
from pyspark.sql import SparkSession

from conftest import frame, rows_of
from versioned import Repository
from versioned._cli_graph import graph_lines, topo_order
from versioned.cli import EXIT_ERROR, EXIT_OK, EXIT_USAGE, app


def run(*args: str) -> Result:
    return CliRunner(env={"COLUMNS": "200", "NO_COLOR": "1"}).invoke(app, list(args), catch_exceptions=False)


def ok(*args: str) -> Result:
    result = run(*args)
    assert result.exit_code == EXIT_OK, (result.stdout, result.stderr)
    return result


def as_json(*args: str) -> Any:
    return json.loads(ok(*args, "--format", "json").stdout)


def write_csv(path: Any, text: str) -> str:
    path.write_text(text)
    return str(path)


@pytest.fixture
def imported(tmp_path: Any) -> str:
    """r.t imported from CSV (key id), tagged v1, then upserted: {1:a, 2:B, 3:c}."""
    first = write_csv(tmp_path / "first.csv", "id,name\n1,a\n2,b\n")
    second = write_csv(tmp_path / "second.csv", "id,name\n2,B\n3,c\n")
    ok("import", first, "r.t", "--key", "id", "-m", "first load")
    ok("tag", "r", "v1")
    ok("import", second, "r.t", "--mode", "upsert", "-m", "second load")
    return "r.t"


def test_import_csv_and_cat_at_ref(spark: SparkSession, imported: str) -> None:
    assert as_json("cat", "r.t@v1") == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
    assert sorted(r["name"] for r in as_json("cat", "r.t")) == ["B", "a", "c"]
    assert len(as_json("cat", "r.t@main~1", "--limit", "1")) == 1
    # the CSV's inferred int column was cast to the table's type on the second import; one commit per import
    assert [r["message"] for r in as_json("log", "r")] == ["second load", "first load"]
    table = ok("cat", "r.t@v1").stdout
    assert "a" in table and "B" not in table


def test_import_parquet_directory(spark: SparkSession, tmp_path: Any) -> None:
    src = str(tmp_path / "src.parquet")
    frame(spark, [(1, "x"), (2, "y")]).write.parquet(src)
    out = ok("import", src, "p.items", "--key", "id").stdout
    head = Repository(spark, "p").resolve("main")
    assert head[:12] in out and head not in out  # short hashes for people
    assert rows_of(spark.read.versioned("p.items")) == [(1, "x"), (2, "y")]
    info = as_json("import", src, "p.items", "--mode", "overwrite", "-m", "same again")
    assert info["commit"] == Repository(spark, "p").resolve("main") and info["mode"] == "overwrite"


def test_export_round_trip_csv_and_parquet(spark: SparkSession, imported: str, tmp_path: Any) -> None:
    for ext in ("csv", "parquet"):
        out = str(tmp_path / f"t.{ext}")
        ok("export", "r.t@v1", out)
        assert os.path.isfile(out)
        ok("import", out, f"r.copy_{ext}", "--key", "id")
        assert rows_of(spark.read.versioned(f"r.copy_{ext}")) == [(1, "a"), (2, "b")]
    again = run("export", "r.t", str(tmp_path / "t.csv"))
    assert again.exit_code == EXIT_ERROR and again.stderr.startswith("[FILE_EXISTS]")
    ok("export", "r.t", str(tmp_path / "t.csv"), "--force")
    assert (tmp_path / "t.csv").read_text().splitlines() == ["id,name", "1,a", "2,B", "3,c"]


def test_log_oneline_graph_and_all(spark: SparkSession, imported: str) -> None:
    repo = Repository(spark, "r")
    ok("branch", "r", "dev", "v1")
    frame(spark, [(9, "z")], "id int, name string").write.versioned("r.t", branch="dev", message="on dev")
    oneline = ok("log", "r", "--oneline").stdout.splitlines()
    assert oneline[0] == f"{repo.resolve('main')[:12]} (main) second load"
    assert oneline[1] == f"{repo.resolve('v1')[:12]} (tag: v1) first load"
    graph = ok("log", "r", "--all", "--graph", "--oneline").stdout
    lines = graph.splitlines()
    assert any(line.startswith("*") and "on dev" in line for line in lines)
    assert any(line.startswith("| *") for line in lines) and "|/" in graph
    assert lines[-1].startswith("* ") and "first load" in lines[-1] and "tag: v1" in lines[-1]
    assert len(as_json("log", "r", "dev", "--limit", "1")) == 1
    assert ok("log", "r", "-f", "csv").stdout.splitlines()[0] == "hash,parents,author,created,message,tables_changed,refs"
    full = ok("log", "r").stdout
    assert "Author:" in full and "Tables: t" in full


def test_branch_tag_lock(spark: SparkSession, imported: str) -> None:
    repo = Repository(spark, "r")
    ok("branch", "r", "dev")
    assert [b["name"] for b in as_json("branch", "r")] == ["dev", "main"]
    ok("branch", "r", "-d", "dev")
    assert [b["name"] for b in as_json("branch", "r")] == ["main"]
    ok("tag", "r", "v0", "main~1")
    tags = {t["name"]: t["image"] for t in as_json("tag", "r")}
    assert tags == {"v0": repo.resolve("v1"), "v1": repo.resolve("main~1")}
    ok("tag", "r", "-d", "v0")
    ok("lock", "r", "reports:q3", "v1")
    assert as_json("lock", "r")[0]["name"] == "reports:q3"
    assert as_json("lock", "r", "--namespace", "other") == []
    assert as_json("cat", "r.t@reports:q3") == as_json("cat", "r.t@v1")
    ok("lock", "r", "--release", "reports:q3")
    assert as_json("lock", "r") == []
    csv_out = ok("branch", "r", "--format", "csv").stdout.splitlines()
    assert csv_out[0] == "name,image,created" and csv_out[1].startswith(f"main,{repo.resolve('main')},")


def test_diff_cells_and_stat(spark: SparkSession, imported: str) -> None:
    Repository(spark, "r").delete_where("t", "id = 1", message="drop 1")
    records = as_json("diff", "r.t", "v1", "main")
    by_key = {r["key"]["id"]: r for r in records}
    assert by_key[1]["change"] == "delete" and by_key[1]["after"] is None
    assert by_key[2]["change"] == "update" and by_key[2]["changed"] == ["name"]
    assert (by_key[2]["before"], by_key[2]["after"]) == ({"name": "b"}, {"name": "B"})
    assert by_key[3]["change"] == "insert"
    assert as_json("diff", "r.t", "v1", "main", "--stat") == {
        "table": "r.t", "from": "v1", "to": "main", "inserted": 1, "updated": 1, "deleted": 1}
    text = ok("diff", "r.t", "v1", "main").stdout
    assert "b -> B" in text
    assert "1 inserted, 1 updated, 1 deleted" in ok("diff", "r.t", "v1", "main", "--stat").stdout
    assert "no changes" in ok("diff", "r.t", "main", "main").stdout


def test_show_init_verify_sql(spark: SparkSession, imported: str, warehouse: str) -> None:
    info = as_json("show", "r", "v1")
    assert info["image"] == Repository(spark, "r").resolve("v1") and info["tables"][0]["primary_key"] == ["id"]
    assert "first load" in ok("show", "r", "v1").stdout
    init = as_json("init")
    assert init["repositories"] == ["r"] and init["warehouse"] == os.path.abspath(warehouse)
    assert all(o["status"] == "ok" for o in as_json("verify", "r", "main", "v1"))
    assert "ok" in ok("verify", "r").stdout
    assert as_json("sql", "SELECT count(*) AS n FROM vc.r.t VERSION AS OF 'v1'") == [{"n": 2}]
    assert "v2" in ok("sql", "CALL vc.system.create_tag(repository => 'r', tag => 'v2', ref => 'main')").stdout
    assert "v2" in [t["name"] for t in as_json("tag", "r")]
    assert "OK" in ok("sql", "CREATE TABLE vc.r.u (id INT, name STRING, PRIMARY KEY (id))").stdout
    assert as_json("sql", "SHOW TABLES IN vc.r") != []


def test_gc_dry_run_then_gc(spark: SparkSession, tmp_path: Any) -> None:
    spark.conf.set("spark.versioned.compaction.maxDiffRatio", "1000")  # only materialize() compacts
    try:
        ok("import", write_csv(tmp_path / "a.csv", "id,name\n1,a\n2,b\n"), "r.t", "--key", "id")
        ok("import", write_csv(tmp_path / "b.csv", "id,name\n3,c\n"), "r.t")
        ok("lock", "r", "reports:q3")
        ok("import", write_csv(tmp_path / "c.csv", "id,name\n1,A\n"), "r.t", "--mode", "upsert")
        repo = Repository(spark, "r")
        repo.materialize()  # compacts the head and the lock
        ok("lock", "r", "--release", "reports:q3")
        repo.materialize()  # evicts the lock's compacted form: garbage
    finally:
        spark.conf.unset("spark.versioned.compaction.maxDiffRatio")
    assert "nothing to delete" in ok("gc", "r", "--dry-run").stdout  # default retention: a day
    assert as_json("gc", "--dry-run") == []  # the whole warehouse
    planned = as_json("gc", "r", "--older-than", "0", "--force", "--dry-run")
    assert planned and all(set(p) == {"kind", "name", "path"} for p in planned)
    assert "would delete" in ok("gc", "r", "--older-than", "0", "--force", "--dry-run").stdout
    assert as_json("gc", "r", "--older-than", "0", "--force") == planned
    assert as_json("gc", "r", "--older-than", "0", "--force", "--dry-run") == []
    assert rows_of(spark.read.versioned("r.t", ref="main~1")) == [(1, "a"), (2, "b"), (3, "c")]
    low = run("gc", "r", "--older-than", "10")
    assert low.exit_code == EXIT_ERROR and low.stderr.startswith("[INVALID_OPTION]")


def test_warehouse_option_is_restored(spark: SparkSession, imported: str, tmp_path: Any, warehouse: str) -> None:
    other = str(tmp_path / "other")
    assert as_json("-w", other, "init")["repositories"] == []
    assert spark.conf.get("spark.versioned.warehouse") == warehouse
    assert as_json("init")["repositories"] == ["r"]


def test_verify_reports_a_missing_object(spark: SparkSession, imported: str, warehouse: str) -> None:
    objects = [o["id"] for f in as_json("show", "r", "v1")["tables"][0]["fragments"] for o in f["objects"]]
    os.remove(os.path.join(warehouse, "objects", objects[0][:2], f"{objects[0]}.parquet"))
    result = run("verify", "r", "v1", "--format", "json")
    assert result.exit_code == EXIT_ERROR and result.stderr.startswith("[VERIFY_FAILED] 1 object(s)")
    assert [o["status"] for o in json.loads(result.stdout) if o["object"] == objects[0]] == ["missing"]


@pytest.mark.parametrize("args, error_class", [
    (["cat", "r.t@nope"], "REF_NOT_FOUND"),
    (["cat", "r.missing"], "TABLE_NOT_FOUND"),
    (["log", "r", "no-such-branch"], "REF_NOT_FOUND"),
    (["diff", "r.t", "v1", "nope"], "REF_NOT_FOUND"),
    (["tag", "r", "v1"], "REF_EXISTS"),
    (["branch", "r", "-d", "main"], "PROTECTED_REF"),
    (["log", "nobody"], "REPOSITORY_NOT_FOUND"),
])
def test_versioned_errors_exit_1(imported: str, args: List[str], error_class: str) -> None:
    result = run(*args)
    assert result.exit_code == EXIT_ERROR
    assert result.stderr.startswith(f"[{error_class}] ") and len(result.stderr.strip().splitlines()) == 1
    assert "\tat " not in result.stderr and "Traceback" not in result.stderr and result.stdout == ""


def test_import_errors_exit_1(imported: str, tmp_path: Any) -> None:
    again = write_csv(tmp_path / "again.csv", "id,name\n1,x\n")
    result = run("import", again, "r.t")  # append of an existing key
    assert result.exit_code == EXIT_ERROR and result.stderr.startswith("[KEY_EXISTS] ")


@pytest.mark.parametrize("args", [
    [],
    ["frobnicate"],
    ["log"],
    ["log", "r", "--format", "xml"],
    ["log", "r", "--limit", "0"],
    ["cat", "no-dot"],
    ["diff", "r.t@v1", "v1", "main"],
    ["import", "/no/such/file.csv", "r.t"],
    ["import", "data.txt", "r.t", "--mode", "merge"],
    ["branch", "r", "x", "-d", "y"],
    ["lock", "r", "no-namespace"],
])
def test_usage_errors_exit_2(args: List[str]) -> None:
    result = run(*args)
    assert result.exit_code == EXIT_USAGE, (result.stdout, result.stderr)


def test_graph_drawing() -> None:
    commits = [("m", ["c", "d"], 5.0), ("d", ["b"], 4.0), ("c", ["b"], 3.0), ("b", ["a"], 2.0), ("a", [], 1.0)]
    order = topo_order(commits)
    assert order == ["m", "d", "c", "b", "a"]
    parents = {h: p for h, p, _ in commits}
    drawn = [f"{g} {h or ''}".rstrip() for g, h in graph_lines([(h, parents[h]) for h in order])]
    assert drawn == ["* m", "|\\", "| * d", "* | c", "|/", "* b", "* a"]
