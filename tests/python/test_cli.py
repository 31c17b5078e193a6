"""The ``versioned`` command line, run in-process with Click's test runner on the tests' session (the CLI reuses
an active session, so no second JVM is started)."""

from __future__ import annotations

import json
import os
from typing import Any, List

import pytest
from click.testing import CliRunner, Result
from pyspark.sql import SparkSession

from conftest import frame, refs_state, rows_of
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


def cells(out: str) -> List[List[str]]:
    """The rows of the Rich tables in ``out``, each as its stripped cells."""
    return [[c.strip() for c in line.split("│")] for line in out.splitlines() if "│" in line]


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
    assert info["committed"] is False  # the same rows again: nothing to commit


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


def test_export_to_an_unwritable_path_is_refused_before_any_work(spark: SparkSession, imported: str,
                                                                 tmp_path: Any) -> None:
    missing = run("export", "r.t", str(tmp_path / "no-such-dir" / "t.csv"))
    assert missing.exit_code == EXIT_ERROR and missing.stderr.startswith("[FILE_NOT_WRITABLE]"), missing.stderr
    assert "does not exist" in missing.stderr
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(str(locked), os.W_OK):  # root ignores permissions: nothing to check here
            return
        denied = run("export", "r.t", str(locked / "t.csv"))
        assert denied.exit_code == EXIT_ERROR and denied.stderr.startswith("[FILE_NOT_WRITABLE]"), denied.stderr
        assert not list(locked.iterdir())
    finally:
        locked.chmod(0o700)


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
    assert ok("log", "r", "-f", "csv").stdout.splitlines()[0] == \
        "hash,parents,author,created,message,tables_changed,refs,committer,app_id,client"
    full = ok("log", "r").stdout
    assert "Author:" in full and "Committer: " in full and "Tables: t" in full


def test_log_shows_one_line_per_commit_for_multi_line_messages(spark: SparkSession, imported: str) -> None:
    # a stream's commits carry a trailer line with their query and batch ids (docs/STREAMING.md)
    message = "append to t\nversioned-stream: query=q-1 batch=4 table=t branch=b"
    frame(spark, [(9, "z")], "id int, name string").write.versioned("r.t", mode="append", message=message)
    frame(spark, [(10, "y")], "id int, name string").write.versioned("r.t", message="subject\n\nbody line")
    oneline = ok("log", "r", "--oneline").stdout.splitlines()
    assert len(oneline) == 4, oneline
    assert oneline[0].endswith(" subject") and oneline[1].endswith(" append to t (batch 4)"), oneline
    graph = ok("log", "r", "--graph", "--oneline").stdout.splitlines()
    assert len(graph) == 4 and all(line.startswith("* ") for line in graph), graph
    full = ok("log", "r", "--limit", "2").stdout
    assert "    subject\n\n    body line\n" in full, full
    assert "    append to t\n    versioned-stream: query=q-1 batch=4 table=t branch=b\n" in full, full
    # the message itself is unchanged (JSON)
    assert as_json("log", "r", "--limit", "2")[1]["message"] == message


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
    assert csv_out[0] == "name,image,created,default" and csv_out[1].startswith(f"main,{repo.resolve('main')},")
    assert csv_out[1].endswith(",True")


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
    assert planned and all(set(p) == {"kind", "name", "path", "reason"} for p in planned)
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
    (["merge", "r", "nope"], "REF_NOT_FOUND"),
    (["merge", "r", "main", "--into", "v1"], "IMMUTABLE_REF"),
    (["merge", "r", "main", "--into", "main"], "INVALID_OPTION"),
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


def test_an_import_that_changes_nothing_says_so_and_commits_nothing(spark: SparkSession, imported: str,
                                                                   tmp_path: Any) -> None:
    repo = Repository(spark, "r")
    before = refs_state(repo)
    same = write_csv(tmp_path / "same.csv", "id,name\n2,B\n3,c\n")
    result = ok("import", same, "r.t", "--mode", "upsert")
    assert "nothing to commit" in result.stdout and "Imported" not in result.stdout, result.stdout
    info = as_json("import", same, "r.t", "--mode", "upsert")
    assert info["committed"] is False and info["commit"] == repo.resolve(repo.default_branch)
    assert refs_state(repo) == before


def test_import_upsert_into_a_table_without_primary_key_exits_1(spark: SparkSession, tmp_path: Any) -> None:
    ok("import", write_csv(tmp_path / "a.csv", "day,n\n2026-01-01,1\n"), "r.events")  # no --key: key-less
    repo = Repository(spark, "r")
    before = refs_state(repo)
    result = run("import", write_csv(tmp_path / "b.csv", "day,n\n2026-01-02,2\n"), "r.events", "--mode", "upsert")
    assert result.exit_code == EXIT_ERROR and result.stderr.startswith("[INVALID_OPTION] ")
    assert "needs a primary key" in result.stderr
    assert refs_state(repo) == before


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
    ["merge", "r"],
    ["merge", "r", "dev", "--strategy", "mine"],
    ["merge", "r", "dev", "--ff", "sometimes"],
    ["cherry-pick", "r", "dev", "--parent", "0"],
    ["revert", "r"],
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



def draw(commits: List[Any]) -> List[str]:
    """graph_lines of (hash, parents) in the given order, as printed (graph, then the hash)."""
    return [f"{g} {h or ''}".rstrip() for g, h in graph_lines(commits)]


def test_graph_draws_every_parent_of_a_merge() -> None:
    # the merged side's head is newer than the merge (dev moved on): the edge joins dev's lane at once
    assert draw([("e", ["d"]), ("m", ["c", "d"]), ("d", ["b"]), ("c", ["b"]), ("b", ["a"]), ("a", [])]) == \
        ["* e", "| * m", "|/|", "* | d", "| * c", "|/", "* b", "* a"]
    # merged twice from the same branch: the first merge's second parent is already in the lane on its right
    assert draw([("m2", ["m", "d2"]), ("d2", ["d"]), ("m", ["c", "d"]), ("d", ["b"]), ("c", ["b"]), ("b", [])]) \
        == ["* m2", "|\\", "| * d2", "* | m", "|\\|", "| * d", "* | c", "|/", "* b"]
    # both parents already have lanes: the edge to the far one crosses the near one
    assert draw([("x", ["c"]), ("e", ["d"]), ("m", ["c", "d"]), ("d", ["b"]), ("c", ["b"]), ("b", [])]) == \
        ["* x", "| * e", "| | * m", "| |/", "|/|", "| * d", "* | c", "|/", "* b"]


def _diverge(spark: SparkSession, branch: str = "dev") -> Repository:
    """``branch`` (from main) renames 1 and adds 4; main renames 3 (no conflict)."""
    repo = Repository(spark, "r")
    repo.create_branch(branch)
    repo.upsert(frame(spark, [(1, "A"), (4, "d")], "id int, name string"), "t", branch=branch)
    repo.upsert(frame(spark, [(3, "C")], "id int, name string"), "t")
    return repo


def test_merge_fast_forward_and_dry_run(spark: SparkSession, imported: str) -> None:
    repo = Repository(spark, "r")
    ok("branch", "r", "dev")
    repo.upsert(frame(spark, [(9, "z")], "id int, name string"), "t", branch="dev")
    before = refs_state(repo)
    dry = as_json("merge", "r", "dev", "--dry-run")
    assert (dry["status"], dry["fast_forward"], dry["dry_run"], dry["conflicts"]) == ("fast_forward", True, True, [])
    assert refs_state(repo) == before  # a dry run commits nothing
    out = ok("merge", "r", "dev", "--into", "main").stdout
    head = repo.resolve("main")
    assert head == repo.resolve("dev") and f"Merged dev into main: {head[:12]} (fast-forward)" in out
    assert head not in out
    assert ok("merge", "r", "dev").stdout.strip() == "Already up to date"


def test_merge_commit_with_two_parents_in_log(spark: SparkSession, imported: str) -> None:
    repo = _diverge(spark)
    ours, theirs = repo.resolve("main"), repo.resolve("dev")
    before = refs_state(repo)
    dry = ok("merge", "r", "dev", "--ff", "never", "--dry-run").stdout
    assert f"Would merge dev into {repo.default_branch}" in dry and refs_state(repo) == before
    out = ok("merge", "r", "dev", "-m", "bring dev", "--author", "alice").stdout
    merged = repo.resolve("main")
    assert f"Merged dev into {repo.default_branch}: {merged[:12]}" in out and "fast-forward" not in out
    assert ["t", "merge", "2", "0"] in cells(out)  # the per-table table: table, action, upserts, deletes
    [top] = as_json("log", "r", "--limit", "1")
    assert (top["hash"], top["parents"], top["message"], top["author"]) == (merged, [ours, theirs], "bring dev",
                                                                              "alice")
    assert f"Merge:  {ours[:12]} {theirs[:12]}" in ok("log", "r", "-n", "1").stdout
    graph = ok("log", "r", "--graph", "--oneline").stdout.splitlines()
    assert graph[0].startswith(f"* {merged[:12]} (main) bring dev") and graph[1] == "|\\"
    assert any(g.startswith(f"* | {ours[:12]}") for g in graph)
    assert any(g.startswith(f"| * {theirs[:12]}") for g in graph)
    assert "|/" in graph
    assert rows_of(spark.read.versioned("r.t")) == [(1, "A"), (2, "B"), (3, "C"), (4, "d")]


def test_merge_conflicts_exit_1_and_commit_nothing(spark: SparkSession, imported: str) -> None:
    repo = Repository(spark, "r")
    ok("branch", "r", "dev")
    base = repo.resolve("dev")
    repo.upsert(frame(spark, [(1, "dev")], "id int, name string"), "t", branch="dev")
    repo.upsert(frame(spark, [(1, "main")], "id int, name string"), "t")
    before = refs_state(repo)
    for extra in ([], ["--dry-run"]):
        result = run("merge", "r", "dev", *extra)
        assert result.exit_code == EXIT_ERROR, (result.stdout, result.stderr)
        assert result.stderr.startswith("[MERGE_CONFLICT] 1 conflict(s); nothing was committed")
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
        assert ["t", "id=1", "name", "a", "main", "dev", "update"] in cells(result.stdout)
    doc = run("merge", "r", "dev", "--format", "json")
    assert doc.exit_code == EXIT_ERROR and doc.stderr.startswith("[MERGE_CONFLICT] ")
    info = json.loads(doc.stdout)
    assert (info["status"], info["commit"], info["conflict_count"], info["base"]) == ("conflicts", None, 1, base)
    assert info["conflicts"] == [{"table": "t", "key": {"id": 1}, "column": "name", "base": "a", "ours": "main",
                                  "theirs": "dev", "kind": "update"}]
    assert info["tables"] == [{"table": "t", "action": "merge", "upserts": 0, "deletes": 0}]
    csv_out = run("merge", "r", "dev", "-f", "csv").stdout.splitlines()
    assert csv_out == ["status,commit,fast_forward,base,conflict_count,dry_run", f"conflicts,,False,{base},1,False"]
    assert refs_state(repo) == before  # nothing committed
    fast = run("merge", "r", "dev", "--ff", "only")
    assert fast.exit_code == EXIT_ERROR and fast.stderr.startswith("[MERGE_CONFLICT] ")
    settled = ok("merge", "r", "dev", "--strategy", "theirs").stdout
    assert f"Merged dev into {repo.default_branch}" in settled and "settled conflicts" in settled
    # a scan returns a fragment's unchanged SNAP rows before the rows its DIFFs changed: find the row by key
    assert {"id": 1, "name": "dev"} in as_json("cat", "r.t")
    assert repo.log(limit=1).collect()[0]["parents"] == [before["history"]["main"][0], repo.resolve("dev")]


def test_cherry_pick_and_revert(spark: SparkSession, imported: str) -> None:
    repo = Repository(spark, "r")
    ok("branch", "r", "dev")
    repo.upsert(frame(spark, [(7, "g")], "id int, name string"), "t", branch="dev")
    before = rows_of(spark.read.versioned("r.t"))
    refs_before = refs_state(repo)
    assert "Would cherry-pick dev onto main" in ok("cherry-pick", "r", "dev", "--onto", "main", "--dry-run").stdout
    assert refs_state(repo) == refs_before
    out = ok("cherry-pick", "r", "dev", "--onto", "main").stdout
    picked = repo.resolve("main")
    assert f"Cherry-picked dev onto main: {picked[:12]}" in out
    assert rows_of(spark.read.versioned("r.t")) == before + [(7, "g")]
    assert as_json("log", "r", "-n", "1")[0]["message"].startswith(f"cherry-pick {repo.resolve('dev')[:12]}")
    info = as_json("revert", "r", picked[:12], "-m", "undo 7")
    assert (info["status"], info["commit"], info["fast_forward"]) == ("merged", repo.resolve("main"), False)
    assert rows_of(spark.read.versioned("r.t")) == before
    assert as_json("log", "r", "-n", "1")[0]["message"] == "undo 7"
    # a merge commit names its parent
    _diverge(spark, "dev2")
    ok("merge", "r", "dev2", "--into", "main")
    bare = run("revert", "r", "main", "--on", "main")
    assert bare.exit_code == EXIT_ERROR and bare.stderr.startswith("[INVALID_OPTION] ")
    assert "Reverted main on main: " in ok("revert", "r", "main", "--on", "main", "--parent", "1").stdout
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "B"), (3, "C")]


@pytest.fixture
def origin(spark: SparkSession, tmp_path: Any) -> List[str]:
    """A second warehouse (its own SQLite metastore) with repository 'r', table 't' (key id) = {1:a, 2:b};
    returns [warehouse, metastore_url]."""
    path = str(tmp_path / "origin")
    (frame(spark, [(1, "a"), (2, "b")]).write.format("versioned").option("primaryKey", "id")
     .option("warehouse", path).mode("append").save("r.t"))
    return [path, f"jdbc:sqlite:{path}/metastore.db"]


def _theirs(spark: SparkSession, origin: List[str]) -> Repository:
    return Repository(spark, "r", warehouse=origin[0], metastore_url=origin[1])


def test_remote_clone_fetch_pull_push_round_trip(spark: SparkSession, origin: List[str]) -> None:
    theirs = _theirs(spark, origin)
    out = ok("clone", *origin, "r").stdout
    head = theirs.resolve("main")
    assert "Cloned r into r: 1 image(s)" in out and ["remotes/origin/main", "(none)", head[:12], "new"] in cells(out)
    assert head not in out
    repo = Repository(spark, "r")
    assert repo.resolve("main") == head
    # a second remote: add, list (both spellings), remove
    ok("remote", "add", "r", "backup", "--warehouse", origin[0], "--metastore-url", origin[1], "--repository", "r")
    assert as_json("remote", "list", "r") == [
        {"name": "backup", "warehouse": origin[0], "metastore_url": origin[1], "repository": "r"},
        {"name": "origin", "warehouse": origin[0], "metastore_url": origin[1], "repository": "r"}]
    listed = ok("remotes", "r").stdout
    assert "backup" in listed and "origin" in listed
    assert ok("remotes", "r", "-f", "csv").stdout.splitlines()[0] == "name,warehouse,metastore_url,repository"
    assert "Removed remote backup" in ok("remote", "remove", "r", "backup").stdout
    assert [r["name"] for r in as_json("remotes", "r")] == ["origin"]
    # both sides move on: fetch moves only origin/main, pull merges, push sends it back
    theirs.upsert(frame(spark, [(3, "c")]), "t", message="origin adds 3")
    repo.upsert(frame(spark, [(4, "d")]), "t", message="clone adds 4")
    local_head = repo.resolve("main")
    fetched = as_json("fetch", "r")
    assert (fetched["repository"], fetched["remote"], fetched["images"]) == ("r", "origin", 1)
    assert fetched["refs"] == [{"ref": "remotes/origin/main", "old": head, "new": theirs.resolve("main"),
                                "status": "fast_forward"}]
    assert repo.resolve("main") == local_head
    assert ok("fetch", "r", "origin").stdout.strip() == "Already up to date with origin"
    assert ok("fetch", "r", "-f", "csv").stdout.splitlines()[0] == "repository,remote,images,objects,downloaded"
    # download: the fetched head's objects come here, then the rest
    got = as_json("download", "r", "origin/main")
    assert (got["repository"], got["image"]) == ("r", theirs.resolve("main")) and got["downloaded"] == got["objects"] >= 1
    assert "Downloaded r (every version): " in ok("download", "r").stdout
    assert as_json("download", "r") == {"repository": "r", "image": None, "objects": 0, "downloaded": 0}
    pulled = ok("pull", "r", "origin", "--branch", "main", "-m", "pull origin").stdout
    merged = repo.resolve("main")
    assert f"Pulled origin/main into main: {merged[:12]}" in pulled and "fast-forward" not in pulled
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    old = theirs.resolve("main")
    pushed = ok("push", "r").stdout
    assert "Pushed main to origin: " in pushed and ["main", old[:12], merged[:12], "fast_forward"] in cells(pushed)
    assert theirs.resolve("main") == merged
    assert "Everything up to date: origin/main is " in ok("push", "r", "origin", "--branch", "main").stdout
    info = as_json("push", "r")
    assert (info["status"], info["head"], info["refs"]) == ("up_to_date", merged, [])
    # pull of nothing new
    assert ok("pull", "r").stdout.strip() == "Already up to date"


def test_rejected_push_exits_1_and_moves_nothing(spark: SparkSession, origin: List[str]) -> None:
    theirs = _theirs(spark, origin)
    ok("clone", *origin, "r", "--into", "mine")
    repo = Repository(spark, "mine")
    theirs.upsert(frame(spark, [(5, "e")]), "t", message="origin adds 5")
    repo.upsert(frame(spark, [(6, "f")]), "t", message="clone adds 6")
    before, mine = refs_state(theirs), refs_state(repo)
    result = run("push", "mine")
    assert result.exit_code == EXIT_ERROR, (result.stdout, result.stderr)
    assert result.stderr.startswith("[NON_FAST_FORWARD] ") and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert refs_state(theirs) == before and refs_state(repo) == mine
    forced = as_json("push", "mine", "--force")
    assert forced["status"] == "forced" and theirs.resolve("main") == repo.resolve("main")


@pytest.mark.parametrize("args, error_class", [
    (["fetch", "r", "upstream"], "REMOTE_NOT_FOUND"),
    (["download", "r", "nope"], "REF_NOT_FOUND"),
    (["push", "r", "upstream"], "REMOTE_NOT_FOUND"),
    (["pull", "r", "upstream"], "REMOTE_NOT_FOUND"),
    (["remote", "remove", "r", "upstream"], "REMOTE_NOT_FOUND"),
    (["remote", "add", "r", "origin", "--warehouse", "/x", "--metastore-url", "jdbc:sqlite:/x/m.db"], "REMOTE_EXISTS"),
    (["clone", "{wh}", "{url}", "r"], "REPOSITORY_EXISTS"),
])
def test_remote_errors_exit_1(spark: SparkSession, origin: List[str], args: List[str], error_class: str) -> None:
    ok("clone", *origin, "r")
    result = run(*(a.format(wh=origin[0], url=origin[1]) for a in args))
    assert result.exit_code == EXIT_ERROR, (result.stdout, result.stderr)
    assert result.stderr.startswith(f"[{error_class}] ") and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_import_table_and_clone_download(spark: SparkSession, origin: List[str]) -> None:
    frame(spark, [(7, "g")]).write.versioned("ref.countries", primary_key="id")
    out = ok("import-table", "dest", "ref", "countries", "--as", "places", "-m", "link places").stdout
    dest = Repository(spark, "dest")
    assert f"Imported ref.countries as dest.places: {dest.resolve('main')[:12]}" in out
    assert rows_of(spark.read.versioned("dest.places")) == [(7, "g")]
    ok("remote", "add", "dest", "origin", "--warehouse", origin[0], "--metastore-url", origin[1], "--repository", "r")
    info = as_json("import-table", "dest", "r", "t", "--ref", "main", "--remote", "origin")
    assert info["commit"] == dest.resolve("main") and info["table"] == "t"
    assert rows_of(spark.read.versioned("dest.t")) == [(1, "a"), (2, "b")]
    copy = as_json("clone", *origin, "r", "--into", "r_full", "--download")
    assert copy["repository"] == "r_full" and copy["downloaded"] >= 1
    assert rows_of(spark.read.versioned("r_full.t")) == [(1, "a"), (2, "b")]


@pytest.mark.parametrize("args", [
    ["clone", "/x", "jdbc:sqlite:/x/m.db"],
    ["remote", "add", "r", "origin", "--warehouse", "/x"],
    ["remote", "frobnicate", "r"],
    ["push", "r", "origin", "--force=yes"],
    ["pull", "r", "--strategy", "mine"],
    ["import-table", "r", "ref"],
])
def test_remote_usage_errors_exit_2(args: List[str]) -> None:
    result = run(*args)
    assert result.exit_code == EXIT_USAGE, (result.stdout, result.stderr)


def test_blame(spark: SparkSession, imported: str) -> None:
    first, second = Repository(spark, "r").resolve("v1"), Repository(spark, "r").resolve()
    rows = as_json("blame", "r.t")
    assert [(r["id"], r["_commit_hash"], r["_commit_message"]) for r in rows] == [
        (1, first, "first load"), (2, second, "second load"), (3, second, "second load")]
    assert [r["id"] for r in as_json("blame", "r.t@v1", "--limit", "1")] == [1]
    text = ok("blame", "r.t").stdout
    assert second[:12] in text and "second load" in text
    before = refs_state(Repository(spark, "r"))
    result = run("blame", "r.nope")
    assert result.exit_code == EXIT_ERROR and "TABLE_NOT_FOUND" in result.stderr
    assert refs_state(Repository(spark, "r")) == before
