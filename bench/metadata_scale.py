"""Metadata at scale (issue 35, "Metadata at scale"), on the embedded SQLite metastore and on PostgreSQL:

* a repository of 1,000,000 commits: ``log(limit=100)`` (goal <= 1 s) and resolving ``<default>~1000`` (<= 20 ms);
* 10,000 branches: creating one more (<= 20 ms) and listing them all (<= 1 s);
* a repository of 1,000 tables: a one-row commit to one of them (<= 0.3 s);
* ref moves per second from 8 concurrent writers, each committing to its own branch (reported; the field's
  reference is Nessie's "over 2,000 commits/s").

    python3 bench/metadata_scale.py [--commits 1000000] [--branches 10000] [--tables 1000] [--writers 8]
                                    [--metastores sqlite,postgresql] [--results bench/results] [--reuse DIR]

The long history is fabricated in the metastore as a second writer would write it (``_metastore.fabricate_history``:
FORMAT.md's rows, correct image hashes, then one compare-and-swap of the branch); everything measured runs through
the Python package (``Repository``) on a classic session, as users call it, except the concurrent writers, which
call the engine's commit through py4j from Python threads (engine commits that change no table: the ref move
and its reflog entry, the cost this row is about). PostgreSQL: ``bin/setup-postgres`` (run first; its URL, or
``$VERSIONED_TEST_POSTGRES_URL``); each run uses a database of its own, dropped afterwards.
``--reuse DIR`` (with ``--only history``) keeps the history's warehouse under DIR and its PostgreSQL database
(named after DIR) instead of dropping them, and a later run with the same DIR and ``--commits`` measures that
repository again without building it (building 1,000,000 commits takes minutes); remove DIR and drop the database
``bench_meta_reuse_<hash>`` it prints when done.
Writes ``metadata-scale.md`` and ``metadata-scale.json`` in the results directory, with the host's load average.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import _metastore as MS  # noqa: E402
from _jvm_bridge import Bridge  # noqa: E402


def timed(fn: Callable[[], Any]) -> Tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def pct(xs: List[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p * (len(s) - 1))))]


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


class Run:
    """One metastore's measurements; rows are appended to ``self.rows``."""

    def __init__(self, spark: Any, kind: str, warehouse: str, jdbc: Optional[str], conninfo: Optional[str],
                 built: Optional[str] = None) -> None:
        self.spark, self.kind, self.wh, self.jdbc, self.conninfo = spark, kind, warehouse, jdbc, conninfo
        self.built = built  # reuse: a marker file that says the history is built in this warehouse
        self.rows: List[Dict[str, Any]] = []
        spark.conf.set("spark.versioned.warehouse", warehouse)
        if jdbc:
            spark.conf.set("spark.versioned.metastore.url", jdbc)
        else:
            spark.conf.unset("spark.versioned.metastore.url")

    def add(self, row: str, what: str, value: float, goal: Optional[float], unit: str, note: str, **raw: Any) -> None:
        ok = None if goal is None else value <= goal
        self.rows.append({"metastore": self.kind, "row": row, "what": what, "value": value, "unit": unit,
                          "goal": goal, "pass": ok, "note": note, "load": load(), **raw})
        shown = f"{value:.4f} {unit}" if unit == "s" else f"{value:,.0f} {unit}"
        print(f"[{self.kind}] {row}: {shown} (goal {goal}) {note} | load {load()}", flush=True)

    def frame(self, rows: List[Tuple[int, str]]) -> Any:
        return self.spark.createDataFrame(rows, "id BIGINT, v STRING")

    def history(self, commits: int) -> None:
        from versioned import Repository

        fabricated = max(0, commits - 2)
        reused = self.built is not None and os.path.exists(self.built)
        if not reused:
            self.frame([(i, "a") for i in range(100)]).write.versioned("hist.t", primary_key="id", message="load")
        repo = Repository(self.spark, "hist")
        main = repo.default_branch
        if reused:
            print(f"[{self.kind}] reusing the history built in {self.wh}", flush=True)
        else:
            if self.conninfo:
                t_fab, _ = timed(lambda: MS.fabricate_history_postgres(self.conninfo, "hist", main, fabricated))
            else:
                t_fab, _ = timed(lambda: MS.fabricate_history(self.wh, "hist", main, fabricated))
            repo.upsert(self.frame([(1, "b")]), "t", message="a real commit on top")
            print(f"[{self.kind}] {commits:,} commits ({fabricated:,} fabricated in {t_fab:.0f} s)", flush=True)
            if self.built is not None:
                with open(self.built, "w") as f:
                    f.write(f"{commits}\n")
        n = commits
        repo.log(limit=100).collect()
        logs = [timed(lambda: repo.log(limit=100).collect())[0] for _ in range(5)]
        self.add("log_100", f"log(limit=100) of a repository of {n:,} commits", statistics.median(logs), 1.0, "s",
                 f"median of 5 (`Repository.log(limit=100).collect()`)", samples=logs)
        spec = f"{main}~1000"
        repo.resolve(spec)
        res = [timed(lambda: repo.resolve(spec))[0] for _ in range(20)]
        heads = [timed(lambda: repo.resolve(main))[0] for _ in range(20)]  # the same call without a walk
        self.add("resolve_1000", f"resolve `{main}~1000` in {n:,} commits", statistics.median(res), 0.020, "s",
                 f"median of 20 (`Repository.resolve`), p90 {pct(res, 0.9) * 1000:.1f} ms; resolving `{main}` "
                 f"itself (no walk) {statistics.median(heads) * 1000:.1f} ms", samples=res, head_samples=heads)

    def branches(self, count: int, bridge: Bridge) -> None:
        from versioned import Repository

        self.frame([(1, "a")]).write.versioned("br.t", primary_key="id")
        repo = Repository(self.spark, "br")
        main = repo.default_branch
        sample = min(100, count)
        t_bulk, _ = timed(lambda: [bridge.create_branch(self.wh, "br", f"bulk{i}", main) for i in range(count - sample)])
        creates = [timed(lambda: repo.create_branch(f"b{i}", from_ref=main))[0] for i in range(sample)]
        self.add("create_branch", f"create a branch in a repository of {count:,} branches", statistics.median(creates),
                 0.020, "s", f"median of the last {sample} creates through `Repository.create_branch`, p99 "
                 f"{pct(creates, 0.99) * 1000:.1f} ms; the first {count - sample:,} through the engine in {t_bulk:.0f} s",
                 samples=creates)
        total = repo.branches().count()
        lists = [timed(lambda: repo.branches().collect())[0] for _ in range(3)]
        self.add("list_branches", f"list {total:,} branches", statistics.median(lists), 1.0, "s",
                 "median of 3 (`Repository.branches().collect()`)", samples=lists)

    def tables(self, count: int) -> None:
        from versioned import Repository

        repo = Repository(self.spark, "many")
        one = self.frame([(1, "a")])
        t_make, _ = timed(lambda: self._make_tables(repo, one, count))
        target = f"t{count // 2}"
        commits = []
        for i in range(6):
            commits.append(timed(lambda: repo.upsert(self.frame([(i + 2, "x")]), target))[0])
        commits = commits[1:]
        self.add("commit_1_of_many", f"one-row commit to one table of a repository of {count:,} tables",
                 statistics.median(commits), 0.3, "s", f"median of 5 after one untimed (`Repository.upsert`); the "
                 f"tables were made in one transaction in {t_make:.0f} s", samples=commits)

    @staticmethod
    def _make_tables(repo: Any, one: Any, count: int) -> None:
        with repo.transaction(message=f"{count} tables") as tx:
            for i in range(count):
                tx.write(one, f"t{i}", mode="append", primary_key="id")

    def writers(self, count: int, seconds: float, bridge: Bridge) -> None:
        from versioned import Repository

        self.frame([(1, "a")]).write.versioned("w.t", primary_key="id")
        repo = Repository(self.spark, "w")
        heads = {f"w{i}": repo.create_branch(f"w{i}") for i in range(count)}
        done = [0] * count
        errors: List[str] = []
        stop = time.perf_counter() + seconds

        def writer(i: int) -> None:
            branch = f"w{i}"
            head = heads[branch]
            try:
                while time.perf_counter() < stop:
                    head = bridge.empty_commit(self.wh, "w", branch, head, f"move {done[i]}")
                    done[i] += 1
            except Exception as e:  # noqa: BLE001: reported in the results
                errors.append(f"{type(e).__name__}: {str(e)[:200]}")

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(count)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t0
        total = sum(done)
        self.add("ref_moves", f"ref moves per second, {count} concurrent writers (one branch each)",
                 total / elapsed, None, "moves/s", f"{total:,} engine commits in {elapsed:.1f} s through py4j from "
                 f"{count} Python threads" + (f"; errors: {errors[:3]}" if errors else ""), moves=total,
                 per_writer=done, errors=errors)


def postgres_database(url: Optional[str], reuse: Optional[str] = None) -> Tuple[str, str, Callable[[], None]]:
    """A fresh database on the local PostgreSQL: its JDBC URL, libpq URI and a function that drops it. With ``reuse``
    (a directory), the database named after it, made if missing and never dropped."""
    import psycopg

    from versioned.reader._metastore import _postgres_conninfo  # the reader's JDBC -> libpq translation

    if url is None:
        url = os.environ.get("VERSIONED_TEST_POSTGRES_URL") or subprocess.check_output(
            [os.path.join(os.path.dirname(HERE), "bin", "setup-postgres")], text=True).strip()
    base = _postgres_conninfo(url)
    name = f"bench_meta_{os.getpid()}"
    if reuse is not None:
        import hashlib

        name = "bench_meta_reuse_" + hashlib.sha256(os.path.abspath(reuse).encode()).hexdigest()[:12]
    with psycopg.connect(base, autocommit=True) as c:
        if c.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            c.execute(f"CREATE DATABASE {name}")
    head, _, query = url.partition("?")
    jdbc = head.rsplit("/", 1)[0] + f"/{name}" + (f"?{query}" if query else "")

    def drop() -> None:
        if reuse is not None:
            print(f"kept database {name} (--reuse)", flush=True)
            return
        with psycopg.connect(base, autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    return jdbc, _postgres_conninfo(jdbc), drop


def write_results(path: str, rows: List[Dict[str, Any]], args: argparse.Namespace, wall: float) -> None:
    os.makedirs(path, exist_ok=True)
    meta = {"args": vars(args), "wall_s": round(wall, 1), "cores": os.cpu_count(), "end_load": load()}
    with open(os.path.join(path, "metadata-scale.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    lines = ["# Metadata at scale", "",
             f"`python3 bench/metadata_scale.py` ({', '.join(f'--{k} {v}' for k, v in vars(args).items() if k != 'results')}); "
             f"{os.cpu_count()} cores, wall {wall:.0f} s. Load average (1, 5, 15 min) at each row.", "",
             "| metastore | row | value | goal | pass | load | note |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        v = f"{r['value'] * 1000:.1f} ms" if r["unit"] == "s" else f"{r['value']:,.0f} {r['unit']}"
        goal = "—" if r["goal"] is None else (f"≤ {r['goal'] * 1000:.0f} ms" if r["unit"] == "s" else str(r["goal"]))
        ok = "—" if r["pass"] is None else ("yes" if r["pass"] else "**no**")
        lines.append(f"| {r['metastore']} | {r['what']} | {v} | {goal} | {ok} | {r['load']} | {r['note']} |")
    with open(os.path.join(path, "metadata-scale.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--commits", type=int, default=1_000_000)
    ap.add_argument("--branches", type=int, default=10_000)
    ap.add_argument("--tables", type=int, default=1000)
    ap.add_argument("--writers", type=int, default=8)
    ap.add_argument("--writer-seconds", type=float, default=20.0)
    ap.add_argument("--metastores", default="sqlite,postgresql")
    ap.add_argument("--postgres-url", default=None, help="JDBC URL of the server (default: bin/setup-postgres)")
    ap.add_argument("--only", default="history,branches,tables,writers")
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("--reuse", default=None, metavar="DIR",
                    help="keep the history's warehouse and database in DIR and reuse them when built (--only history)")
    args = ap.parse_args()
    if args.reuse is not None and args.only != "history":
        ap.error("--reuse keeps only the history's repository: use it with --only history")

    from pyspark.sql import SparkSession

    import versioned

    builder = SparkSession.builder.master("local[2]").appName("versioned-metadata-scale")
    for key, value in {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4",
                       "spark.driver.memory": "4g"}.items():
        builder = builder.config(key, value)
    spark = versioned.configure_spark_with_versioned(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    versioned.install()
    bridge = Bridge(spark)
    only = set(args.only.split(","))
    rows: List[Dict[str, Any]] = []
    t0 = time.perf_counter()
    for kind in args.metastores.split(","):
        if args.reuse is not None:
            scratch = os.path.join(os.path.abspath(args.reuse), kind)
            os.makedirs(scratch, exist_ok=True)
        else:
            scratch = tempfile.mkdtemp(prefix=f"versioned-meta-{kind}-")
        drop: Callable[[], None] = lambda: None
        jdbc = conninfo = None
        if kind == "postgresql":
            jdbc, conninfo, drop = postgres_database(args.postgres_url, args.reuse)
        built = None if args.reuse is None else os.path.join(scratch, f"history-{args.commits}.built")
        try:
            run = Run(spark, kind, os.path.join(scratch, "wh"), jdbc, conninfo, built)
            bridge.engine(run.wh, jdbc)  # the bridge's engine of this warehouse, on this run's metastore
            steps = [("history", lambda: run.history(args.commits)), ("branches", lambda: run.branches(args.branches, bridge)),
                     ("tables", lambda: run.tables(args.tables)),
                     ("writers", lambda: run.writers(args.writers, args.writer_seconds, bridge))]
            for name, step in steps:
                if name in only:
                    step()
                    rows.extend(run.rows)
                    run.rows.clear()
                    write_results(args.results, rows, args, time.perf_counter() - t0)
        finally:
            drop()
            if args.reuse is None:
                shutil.rmtree(scratch, ignore_errors=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
