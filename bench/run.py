#!/usr/bin/env python3
"""Benchmark suite of the versioned connector against plain Parquet, in one SparkSession.

    python3 bench/run.py              # N = 10,000,000 rows (< 20 min on 2 cores)
    python3 bench/run.py --quick      # N = 200,000 rows, shorter histories (smoke run)
    python3 bench/run.py --rows 2000000 --hist-commits 50

Writes bench/results/results.json and bench/results/results.md (see bench/README.md for the method).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(ROOT, "python"))

import _metastore as MS  # noqa: E402
import datagen as G  # noqa: E402
import remotes_bench  # noqa: E402

T0 = time.perf_counter()


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - T0:7.1f}s] {msg}", flush=True)


# ----------------------------------------------------------------------------------------- helpers
def parquet_bytes(path: str) -> Tuple[int, int]:
    """(bytes, files) of the Parquet files under ``path`` (checksum and marker files excluded)."""
    total = files = 0
    for d, _, names in os.walk(path):
        for n in names:
            if n.endswith(".parquet") and not n.startswith("."):
                total += os.path.getsize(os.path.join(d, n))
                files += 1
    return total, files


def timed(fn: Callable[[], Any]) -> Tuple[float, Any]:
    t = time.perf_counter()
    r = fn()
    return time.perf_counter() - t, r


def median(xs: List[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def noop(df) -> None:
    """Forces full execution of every column of ``df`` without writing anything."""
    df.write.format("noop").mode("overwrite").save()


def fmt_s(x: Optional[float]) -> str:
    if x is None:
        return "—"
    if x < 0.1:
        return f"{x * 1000:.1f} ms"
    return f"{x:.2f} s"


def fmt_b(x: Optional[float]) -> str:
    if x is None:
        return "—"
    for unit in ("B", "KB", "MB", "GB"):
        if abs(x) < 1024 or unit == "GB":
            return f"{x:.0f} {unit}" if unit == "B" else f"{x:.1f} {unit}"
        x /= 1024.0
    return str(x)


def find_jar() -> str:
    cands = [os.environ.get("VERSIONED_JAR"),
             os.path.join(ROOT, "python", "versioned", "jars", "versioned-spark-assembly.jar"),
             os.path.join(ROOT, "connector-scala", "spark", "target", "scala-2.13", "versioned-spark-assembly.jar")]
    for c in cands:
        if c and os.path.isfile(c):
            return c
    raise SystemExit("No connector jar: run bin/build-jar (or bin/sbt spark/assembly), or use bin/bench.")


def sha256_file(path: str) -> str:
    md = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            md.update(chunk)
    return md.hexdigest()


def git_head() -> str:
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except Exception:  # noqa: BLE001
        return "unknown"


# ----------------------------------------------------------------------------------------- suite
class Suite:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.n = args.rows
        self.work = os.path.abspath(args.work)
        self.results_dir = os.path.abspath(args.results)
        self.rows: List[Dict[str, Any]] = []
        self.meta: Dict[str, Any] = {}
        self.wh = os.path.join(self.work, "wh")          # main warehouse: repos bench (N) and hist (N_h)
        self.wh_log = os.path.join(self.work, "wh-log")  # long history for refs/log
        self.pq = os.path.join(self.work, "parquet")
        self.objects = os.path.join(self.wh, "objects")
        self.scan_reps = args.scan_reps or (3 if self.n <= 2_000_000 else 2)
        self.full_verify = self.n <= 2_000_000
        self.state: Dict[str, Any] = {}

    # ---- session
    def start(self) -> None:
        if os.path.exists(self.work):
            shutil.rmtree(self.work)
        os.makedirs(self.work)
        os.makedirs(self.results_dir, exist_ok=True)
        src = find_jar()
        jar = os.path.join(self.work, "versioned-spark-assembly.jar")
        shutil.copyfile(src, jar)  # a private copy: the jar may be rebuilt while the benchmark runs
        from pyspark.sql import SparkSession
        import pyspark

        self.spark = (SparkSession.builder.master(f"local[{self.args.cores}]")
                      .appName("versioned-bench")
                      .config("spark.driver.memory", self.args.driver_memory)
                      .config("spark.jars", jar)
                      .config("spark.ui.enabled", "false")
                      .config("spark.ui.showConsoleProgress", "false")
                      .config("spark.sql.shuffle.partitions", str(self.args.shuffle_partitions))
                      .config("spark.versioned.warehouse", self.wh)
                      .config("spark.sql.catalog.vc", "versioned.spark.catalog.VersionedCatalog")
                      .config("spark.versioned.author", "bench")
                      .config("spark.local.dir", os.path.join(self.work, "spark-local"))
                      .getOrCreate())
        self.spark.sparkContext.setLogLevel("ERROR")
        from _jvm_bridge import Bridge
        self.bridge = Bridge(self.spark)
        try:
            import versioned  # the package under python/ (being written concurrently)
            self.vpkg = versioned
            self.vpkg.Repository  # noqa: B018
        except Exception as e:  # noqa: BLE001
            log(f"python package 'versioned' not usable ({e}); using the format API and the JVM bridge")
            self.vpkg = None
        n_h = self.args.hist_rows
        self.meta.update({
            "started": _dt.datetime.now().isoformat(timespec="seconds"),
            "loadavg_1m_at_start": round(os.getloadavg()[0], 1),
            "git_head": git_head(),
            "jar": os.path.relpath(src, ROOT) if src.startswith(ROOT) else src,
            "jar_sha256": sha256_file(jar)[:16],
            "jar_mtime": _dt.datetime.fromtimestamp(os.path.getmtime(src)).isoformat(timespec="seconds"),
            "spark": pyspark.__version__,
            "python": platform.python_version(),
            "master": f"local[{self.args.cores}]",
            "driver_memory": self.args.driver_memory,
            "host_cpus": os.cpu_count(),
            "rows": self.n,
            "hist_rows": n_h,
            "hist_commits": self.args.hist_commits,
            "log_commits": self.args.log_commits,
            "k": self.args.k,
            "main_fragment_target_rows": self.frag_rows(self.n),
            "hist_fragment_target_rows": self.frag_rows(n_h),
            "scan_reps": self.scan_reps,
            "python_package": self.vpkg is not None,
        })
        log(f"Spark {pyspark.__version__} local[{self.args.cores}], N={self.n:,}, N_h={n_h:,}, jar {self.meta['jar']}")

    @staticmethod
    def frag_rows(n: int) -> int:
        """Fragment size: ~10 fragments per table, 1,000,000 rows (the connector default) at N = 10M."""
        return max(1000, n // 10)

    def set_fragment_rows(self, n: int) -> None:
        self.spark.conf.set("spark.versioned.fragment.targetRows", str(self.frag_rows(n)))

    def objects_bytes(self) -> Tuple[int, int]:
        return parquet_bytes(self.objects)

    # ---- API adapter: the Python package when present, else the engine through the bridge
    def repo_api(self, repo: str, warehouse: Optional[str] = None):
        if self.vpkg is None:
            return None
        return self.vpkg.Repository(self.spark, repo, warehouse=warehouse)

    def create_branch(self, repo: str, name: str, from_ref: str, warehouse: Optional[str] = None) -> str:
        r = self.repo_api(repo, warehouse)
        if r is not None:
            return r.create_branch(name, from_ref=from_ref)
        return self.bridge.create_branch(warehouse or self.wh, repo, name, from_ref)

    def read(self, table: str, ref: Optional[str] = None, warehouse: Optional[str] = None):
        r = self.spark.read.format("versioned")
        if ref:
            r = r.option("ref", ref)
        if warehouse:
            r = r.option("warehouse", warehouse)
        return r.load(table)

    def write_versioned(self, df, table: str, mode: str = "append", upsert: bool = False, pk: Optional[str] = None,
                        branch: Optional[str] = None, warehouse: Optional[str] = None, message: Optional[str] = None):
        w = df.write.format("versioned").option("upsert", "true" if upsert else "false")
        if pk:
            w = w.option("primaryKey", pk)
        if branch:
            w = w.option("branch", branch)
        if warehouse:
            w = w.option("warehouse", warehouse)
        if message:
            w = w.option("message", message)
        w.mode(mode).save(table)

    def delete_where(self, repo: str, table: str, condition: str, branch: Optional[str] = None) -> int:
        r = self.repo_api(repo)
        if r is None or not hasattr(r, "delete_where"):
            raise RuntimeError("no delete function in the python package")
        return r.delete_where(table, condition, branch=branch)

    def upsert_feed(self, changes, table: str, branch: Optional[str] = None, message: Optional[str] = None) -> None:
        """Public API, one commit, no table read: ``upsert=true`` with ``deleteColumn`` (a boolean column;
        true deletes the key). ``changes`` has the table columns and ``_vchange`` (1 = delete)."""
        feed = changes.withColumn("_del", G.F.col("_vchange") == G.DELETE).drop("_vchange")
        w = feed.write.format("versioned").option("upsert", "true").option("deleteColumn", "_del")
        if branch:
            w = w.option("branch", branch)
        if message:
            w = w.option("message", message)
        w.mode("append").save(table)

    def apply_changes(self, changes, table: str, branch: str = "main", message: str = "changes") -> str:
        """One commit of mixed upserts and deletes: the public change-feed write when the connector has it,
        else one DIFF commit through the engine (bridge)."""
        if self.state.get("feed_public"):
            self.upsert_feed(changes, table, branch=branch, message=message)
            return "public"
        self.bridge.commit_changes(self.wh, table, changes, branch=branch, message=message)
        return "engine"

    def merge_changes(self, changes, repo: str, table: str, branch: str) -> None:
        """One SQL MERGE (through the catalog) applying upserts and deletes: one commit, public API."""
        changes.createOrReplaceTempView("bench_changes")
        self.spark.sql(
            f"MERGE INTO vc.{repo}.`{table}@{branch}` AS t USING bench_changes AS s ON t.id = s.id "
            "WHEN MATCHED AND s._vchange = 1 THEN DELETE "
            "WHEN MATCHED THEN UPDATE SET a = s.a, b = s.b, s = s.s, d = s.d "
            "WHEN NOT MATCHED AND s._vchange = 3 THEN INSERT (id, a, b, s, d) VALUES (s.id, s.a, s.b, s.s, s.d)")

    # ---- results
    def add(self, wid: str, workload: str, connector_s: Optional[float], parquet_s: Optional[float],
            ratio: Optional[float], target: str, passed: Optional[bool], notes: str, **details: Any) -> None:
        row = {"id": wid, "workload": workload, "connector_s": connector_s, "parquet_s": parquet_s,
               "ratio": ratio, "target": target, "pass": passed, "notes": notes, "details": details}
        self.rows.append(row)
        verdict = {True: "PASS", False: "FAIL", None: "info"}[passed]
        log(f"RESULT {wid}: connector {fmt_s(connector_s)}, parquet {fmt_s(parquet_s)}, ratio "
            f"{'—' if ratio is None else f'{ratio:.2f}'} [{verdict}] {notes}")
        self.save()

    def save(self) -> None:
        self.meta["elapsed_s"] = round(time.perf_counter() - T0, 1)
        with open(os.path.join(self.results_dir, "results.json"), "w") as f:
            json.dump({"meta": self.meta, "workloads": self.rows}, f, indent=2, default=str)
        with open(os.path.join(self.results_dir, "results.md"), "w") as f:
            f.write(self.markdown())

    def markdown(self) -> str:
        m = self.meta
        lines = [
            "# versioned benchmark results",
            "",
            f"N = {m.get('rows', 0):,} rows (history table N_h = {m.get('hist_rows', 0):,}, "
            f"{m.get('hist_commits')} commits; log on {m.get('log_commits', 0):,} commits), "
            f"{m.get('master')}, driver memory {m.get('driver_memory')}, Spark {m.get('spark')}, "
            f"git {m.get('git_head')}, jar sha256 {m.get('jar_sha256')}, started {m.get('started')}, "
            f"wall time {m.get('elapsed_s', 0):.0f} s.",
            "",
            "Connector and Parquet run in the same SparkSession; times are wall clock (`time.perf_counter`) around "
            "actions that materialize every column (`write.format(\"noop\")` for scans). Ratio is connector ÷ "
            "Parquet unless the notes say otherwise. Bytes count `.parquet` files only (no `.crc`).",
            "",
            "| workload | connector | parquet baseline | ratio | target | result | notes |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in self.rows:
            verdict = {True: "pass", False: "**FAIL**", None: "info"}[r["pass"]]
            ratio = "—" if r["ratio"] is None else f"{r['ratio']:.2f}"
            notes = r["notes"].replace("|", "\\|")
            lines.append(f"| {r['workload']} | {fmt_s(r['connector_s'])} | {fmt_s(r['parquet_s'])} | {ratio} | "
                         f"{r['target']} | {verdict} | {notes} |")
        fails = [r["workload"] for r in self.rows if r["pass"] is False]
        lines += ["", f"Failing targets: {len(fails)} of {sum(1 for r in self.rows if r['pass'] is not None)}."]
        if m.get("step_s"):
            load = m.get("loadavg_1m_after_step", {})
            lines += ["", "Wall time per step (1-minute load average of the host after it): " + ", ".join(
                f"{k} {v:.0f} s ({load.get(k, '?')})" for k, v in m["step_s"].items())
                + f". Load average at start: {m.get('loadavg_1m_at_start')} on {m.get('host_cpus')} CPUs "
                "(other processes share the host; absolute times vary with it, ratios less so)."]
        if m.get("errors"):
            lines += ["", "Errors:", ""] + [f"* {e}" for e in m["errors"]]
        return "\n".join(lines) + "\n"

    def run_step(self, name: str, fn: Callable[[], None]) -> None:
        log(f"== {name}")
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - keep going, report the error
            traceback.print_exc()
            self.meta.setdefault("errors", []).append(f"{name}: {type(e).__name__}: {str(e).splitlines()[0][:300]}")
            self.save()

    # ---- measurement helpers
    def scan_pair(self, dv, dp, reps: Optional[int] = None) -> Dict[str, Any]:
        """Checks equality (count + checksum, which also warms both paths up), then times noop scans,
        alternating connector and Parquet. Returns medians, checksums and the connector's scan metrics."""
        reps = reps or self.scan_reps
        if not self.args.scan_reps:
            rows = self.state.get("scan_rows", self.n)
            reps = max(reps, 5 if rows <= 500_000 else 3 if rows <= 2_000_000 else 2)
        tv_w, cv = timed(lambda: G.checksum(dv))
        tp_w, cp = timed(lambda: G.checksum(dp))
        tv, tp = [], []
        for _ in range(reps):
            tv.append(timed(lambda: noop(dv))[0])
            tp.append(timed(lambda: noop(dp))[0])
        return {"v": median(tv), "p": median(tp), "v_all": tv, "p_all": tp, "ok": cv == cp,
                "best": f"best-of-{reps} ratio {min(tv) / min(tp):.2f}" if reps > 1 else "single run",
                "checksum_v": cv, "checksum_p": cp, "warm_v": tv_w, "warm_p": tp_w,
                "metrics": self.bridge.scan_metrics(dv)}

    def write_expected(self, df, path: str, n: int) -> Tuple[float, int]:
        """Writes an independent Parquet copy sorted by key in ~10 files (like the connector's fragments)."""
        frags = max(1, round(n / self.frag_rows(n)))
        t, _ = timed(lambda: df.repartitionByRange(frags, "id").sortWithinPartitions("id").write.mode("overwrite")
                     .parquet(path))
        return t, parquet_bytes(path)[0]

    def per_file_overhead(self) -> int:
        """Bytes of a one-row Parquet file in the DIFF layout: the fixed cost of one more object."""
        p = os.path.join(self.pq, "one-row")
        G.Stream(1000, 10).changes(self.spark, 0).limit(1).coalesce(1).write.mode("overwrite").parquet(p)
        return parquet_bytes(p)[0]

    # ================================================================================== workloads
    def warmup(self) -> None:
        """Exercises every code path once on a small table (JIT, codegen, metastore, class loading)."""
        n = 20000
        self.set_fragment_rows(n)
        sp = self.spark
        st = G.Stream(n, 100)
        t, _ = timed(lambda: self.write_versioned(G.base(sp, n), "warm.t", pk="id"))
        self.meta["warmup_first_write_s"] = round(t, 2)
        self.write_versioned(st.upserts(sp, 0), "warm.t", upsert=True)
        if self.vpkg is not None:
            self.delete_where("warm", "t", "id IN (" + ",".join(map(str, st.deleted_keys(0))) + ")")
            r = self.repo_api("warm")
            r.create_branch("w1", from_ref="main"); r.create_tag("w1t", "main"); r.resolve("main")
            r.log("main").count()
        try:
            self.upsert_feed(st.changes(sp, 3), "warm.t", message="feed")
            self.state["feed_public"] = True
        except Exception as e:  # noqa: BLE001 - older connector: no deleteColumn option
            log(f"no public change-feed write (upsert + deleteColumn): {str(e).splitlines()[0][:200]}")
            self.state["feed_public"] = False
        self.meta["public_change_feed"] = self.state["feed_public"]
        self.bridge.commit_changes(self.wh, "warm.t", st.changes(sp, 1))
        self.create_branch("warm", "wm", "main")
        self.merge_changes(st.changes(sp, 2), "warm", "t", "wm")
        self.write_versioned(self.read("warm.t").withColumn("a", G.F.col("a") + 1), "warm.t", mode="overwrite")
        p = os.path.join(self.pq, "warm")
        G.base(sp, n).write.mode("overwrite").parquet(p)
        for df in (self.read("warm.t"), sp.read.parquet(p)):
            G.checksum(df); noop(df); noop(df.filter("id = 5")); noop(df.filter("a < 1000"))
        self.bridge.scan_metrics(self.read("warm.t").filter("id = 5"))
        self.per_file_overhead()

    def main_load(self) -> None:
        n = self.n
        self.set_fragment_rows(n)
        before = self.objects_bytes()
        t, _ = timed(lambda: self.write_versioned(G.base(self.spark, n), "bench.t", pk="id", message="load"))
        after = self.objects_bytes()
        self.state["main_load"] = {"s": t, "bytes": after[0] - before[0], "objects": after[1] - before[1]}
        self.state["main_base"] = MS_resolve(self, "bench", "main")
        log(f"main table loaded: {n:,} rows in {t:.1f} s, {fmt_b(after[0] - before[0])} in {after[1] - before[1]} objects")

    def k_commit(self) -> None:
        """k changed rows (60% updates, 20% inserts, 20% deletes) into the N-row table, on branches from the
        loaded version: once through the public API (upsert write + delete_where = 2 commits) and once as one
        DIFF commit of mixed changes through the engine."""
        sp, n, k = self.spark, self.n, self.args.k
        ks = G.Stream(n, k)
        footer = self.per_file_overhead()
        # Parquet baseline: write the k rows (deletes as key-only rows), warm once, median of 3.
        rows_df = ks.changes(sp, 0, with_op=False).coalesce(1)
        rows_df.write.mode("overwrite").parquet(os.path.join(self.pq, "k-warm"))
        tps = []
        for i in range(3):
            path = os.path.join(self.pq, f"k-{i}")
            tps.append(timed(lambda: rows_df.write.mode("overwrite").parquet(path))[0])
        t_pq = median(tps)
        pk_bytes = parquet_bytes(os.path.join(self.pq, "k-0"))[0]
        meta_before = MS.sizes(self.wh)

        time_target = 1.5 * t_pq + 0.3
        target = "time ≤ 1.5× Parquet + 0.3 s; bytes ≤ 1.5× Parquet(k rows) + metadata"

        def verdict(t: float, written: int, objs: int, ref: str, first: int) -> Tuple[Optional[bool], float, bool]:
            """(content check or None, allowed bytes, pass) of one way of committing the k rows on branch ``ref``."""
            verified = (G.checksum(self.read("bench.t", ref=ref)) == G.checksum(ks.expected(sp, 1, first=first))
                        if self.full_verify else None)
            allow = 1.5 * pk_bytes + objs * footer
            return verified, allow, t <= time_target and written <= allow

        def content(verified: Optional[bool]) -> str:
            return "" if verified is None else f"; content {'verified' if verified else 'MISMATCH'}"

        if self.state.get("feed_public"):
            # Like the baseline: the input DataFrame is built before the timer, one untimed warm-up commit,
            # then the median of 3 commits (each on its own branch from the loaded version).
            feed_df = ks.changes(sp, 0)
            # Objects are content-addressed: the warm-up writes them, the timed commits write the same files again.
            self.create_branch("bench", "kcw", "main")
            f0 = self.objects_bytes()
            self.upsert_feed(feed_df, "bench.t", branch="kcw", message="k feed warm-up")
            f1 = self.objects_bytes()
            bytes_f, objs_f = f1[0] - f0[0], f1[1] - f0[1]
            t_feeds = []
            for br in ["kc0", "kc0b", "kc0c"]:
                self.create_branch("bench", br, "main")
                t_feeds.append(timed(lambda: self.upsert_feed(feed_df, "bench.t", branch=br, message="k feed"))[0])
            t_feed = median(t_feeds)
            verified, allow, ok = verdict(t_feed, bytes_f, objs_f, "kc0", 0)
            self.add("k_commit_feed", f"commit k={k:,} changed rows (upserts + deletes) into N rows — public API, "
                     "one commit: upsert write with deleteColumn (no table read)", t_feed, t_pq, t_feed / t_pq,
                     target, ok,
                     f"time target {fmt_s(time_target)}; wrote {fmt_b(bytes_f)} in {objs_f} objects vs Parquet(k rows) "
                     f"{fmt_b(pk_bytes)} → allowed {fmt_b(allow)} (1.5× + {objs_f} × {fmt_b(footer)} per-object "
                     f"Parquet footer); bytes ratio {bytes_f / pk_bytes:.2f}×"
                     + f"; median of 3 commits (all: {', '.join(fmt_s(x) for x in t_feeds)})" + content(verified),
                     bytes=bytes_f, objects=objs_f, parquet_k_bytes=pk_bytes, parquet_write_all=tps, commit_all=t_feeds,
                     footer_bytes=footer, verified=verified)

        # Public API: upserts (no table read) then delete_where (scans the table to find the rows).
        self.create_branch("bench", "kc", "main")
        b0 = self.objects_bytes()
        t_up, _ = timed(lambda: self.write_versioned(ks.upserts(sp, 1), "bench.t", upsert=True, branch="kc",
                                                     message="k upserts"))
        b1 = self.objects_bytes()
        cond = "id IN (" + ",".join(map(str, ks.deleted_keys(1))) + ")"
        t_del, deleted = timed(lambda: self.delete_where("bench", "t", cond, branch="kc"))
        b2 = self.objects_bytes()
        meta_after = MS.sizes(self.wh)
        t_pub = t_up + t_del
        bytes_pub, objs_pub = b2[0] - b0[0], b2[1] - b0[1]
        verified, allow, ok = verdict(t_pub, bytes_pub, objs_pub, "kc", 1)
        self.add("k_commit_public", f"commit k={k:,} changed rows (upserts + deletes) into N rows — public API "
                 "(upsert write + delete_where: 2 commits)", t_pub, t_pq, t_pub / t_pq, target, ok,
                 f"upsert commit {fmt_s(t_up)} + delete_where {fmt_s(t_del)} ({deleted} rows); time target "
                 f"{fmt_s(time_target)}; wrote {fmt_b(bytes_pub)} in {objs_pub} objects vs Parquet(k rows) "
                 f"{fmt_b(pk_bytes)} → allowed {fmt_b(allow)} (1.5× + {objs_pub} × {fmt_b(footer)} per-object "
                 f"Parquet footer); bytes ratio {bytes_pub / pk_bytes:.2f}×; metastore +{fmt_b(meta_after - meta_before)}"
                 + content(verified),
                 upsert_s=t_up, delete_s=t_del, bytes=bytes_pub, objects=objs_pub, upsert_bytes=b1[0] - b0[0],
                 delete_bytes=b2[0] - b1[0], parquet_k_bytes=pk_bytes, parquet_write_all=tps,
                 footer_bytes=footer, verified=verified, metastore_growth=meta_after - meta_before)

        # SQL MERGE through the catalog: one commit, public API (joins the changes with the table).
        self.create_branch("bench", "kc3", "main")
        m0 = self.objects_bytes()
        t_merge, _ = timed(lambda: self.merge_changes(ks.changes(sp, 2), "bench", "t", "kc3"))
        m1 = self.objects_bytes()
        bytes_m, objs_m = m1[0] - m0[0], m1[1] - m0[1]
        verified, allow, ok = verdict(t_merge, bytes_m, objs_m, "kc3", 2)
        self.add("k_commit_merge", f"commit k={k:,} changed rows (upserts + deletes) into N rows — SQL MERGE "
                 "through the catalog (1 commit)", t_merge, t_pq, t_merge / t_pq, target, ok,
                 f"wrote {fmt_b(bytes_m)} in {objs_m} objects (allowed {fmt_b(allow)}); bytes ratio "
                 f"{bytes_m / pk_bytes:.2f}×; time target {fmt_s(time_target)}" + content(verified),
                 bytes=bytes_m, objects=objs_m, parquet_k_bytes=pk_bytes, verified=verified)

        # Engine: the same changes as one DIFF commit (deletes carry only the key).
        self.create_branch("bench", "kc2", "main")
        c0 = self.objects_bytes()
        t_eng, _ = timed(lambda: self.bridge.commit_changes(self.wh, "bench.t", ks.changes(sp, 3), branch="kc2",
                                                            message="k changes"))
        c1 = self.objects_bytes()
        bytes_eng, objs_eng = c1[0] - c0[0], c1[1] - c0[1]
        verified, allow, ok = verdict(t_eng, bytes_eng, objs_eng, "kc2", 3)
        self.add("k_commit_engine", f"commit k={k:,} changed rows (upserts + deletes) into N rows — one DIFF "
                 "commit via the engine (internal API, no table read)", t_eng, t_pq, t_eng / t_pq, target, ok,
                 f"wrote {fmt_b(bytes_eng)} in {objs_eng} objects (allowed {fmt_b(allow)}); bytes ratio "
                 f"{bytes_eng / pk_bytes:.2f}×; time target {fmt_s(time_target)}" + content(verified),
                 bytes=bytes_eng, objects=objs_eng, parquet_k_bytes=pk_bytes, verified=verified)

    def merge_step(self) -> None:
        """Merge of a branch with k changed rows into a diverged branch of the N-row table (the target also
        has k changes of its own, on other keys, so it is a real three-way merge) vs committing the same k
        changes directly. Goal: merge ≤ 2× the direct commit. Median of 3, each on fresh branches."""
        sp, n, k = self.spark, self.n, self.args.k
        r = self.repo_api("bench")
        if r is None or not hasattr(r, "merge"):
            self.add("merge_k", "merge", None, None, None, "n/a", None, "no merge in the python package")
            return
        ks = G.Stream(n, k)
        ours_df, theirs_df = ks.changes(sp, 4), ks.changes(sp, 5)
        t_direct, t_merge = [], []
        for i in range(3):
            for b in (f"mt{i}", f"ms{i}", f"md{i}"):
                self.create_branch("bench", b, "main")
            self.upsert_feed(ours_df, "bench.t", branch=f"mt{i}", message="target side")
            self.upsert_feed(theirs_df, "bench.t", branch=f"ms{i}", message="source side")
            self.upsert_feed(ours_df, "bench.t", branch=f"md{i}", message="target side")
            t_direct.append(timed(lambda: self.upsert_feed(theirs_df, "bench.t", branch=f"md{i}", message="direct"))[0])
            t, res = timed(lambda: r.merge(f"ms{i}", into=f"mt{i}"))
            if res.status != "merged":
                raise RuntimeError(f"merge bench: expected a merge commit, got {res.status}")
            t_merge.append(t)
        same = (G.checksum(self.read("bench.t", ref="mt0")) == G.checksum(self.read("bench.t", ref="md0"))
                if self.full_verify else None)
        tm, td = median(t_merge), median(t_direct)
        self.add("merge_k", f"merge a branch with k={k:,} changed rows into a diverged branch (k changes of its own) "
                 f"of N rows vs committing the same k changes directly", tm, td, tm / td, "≤ 2× the direct commit",
                 tm <= 2 * td, f"merge all {', '.join(fmt_s(x) for x in t_merge)}; direct all "
                 f"{', '.join(fmt_s(x) for x in t_direct)}" + ("" if same is None else
                                                               f"; content {'equal' if same else 'MISMATCH'}"),
                 merge_all=t_merge, direct_all=t_direct, content_equal=same)

    def remotes_step(self) -> None:
        """Remotes (docs/REMOTES.md) between two warehouses on this disk, from the N-row repository as the other
        steps left it: a lazy clone (history only), a scan of the clone's head read in place, a clone that
        downloads every object (vs a plain copy of the same files), a push of k changed rows committed on the
        clone (as a new branch of the origin, vs the commit itself) and a fetch of k rows committed on the
        origin. Runs last: it adds branches to the origin."""
        sp, n, k, v = self.spark, self.n, self.args.k, self.vpkg
        if v is None or not hasattr(v, "clone"):
            self.add("clone_lazy", "remotes", None, None, None, "n/a", None, "no remotes in the python package")
            return
        origin_url = f"jdbc:sqlite:{self.wh}/metastore.db"
        lazy_wh, full_wh = os.path.join(self.work, "wh-clone"), os.path.join(self.work, "wh-clone-full")
        origin = v.Repository(sp, "bench")
        t_lazy, clone = timed(lambda: v.clone(sp, "bench", warehouse=self.wh, metastore_url=origin_url,
                                              local_warehouse=lazy_wh))
        commits, refs = clone.log("main").count(), clone.remote_refs().count()
        lazy_bytes = parquet_bytes(os.path.join(lazy_wh, "objects"))[0]
        self.add("clone_lazy", f"lazy clone of the N-row repository ({refs} branches and tags): history and object "
                 "metadata, no data", t_lazy, None, None, "info", None,
                 f"{commits} commits on main; {fmt_b(lazy_bytes)} of objects copied (they are read in place)",
                 commits=commits, refs=refs, object_bytes=lazy_bytes)
        same = G.checksum(self.read("bench.t", warehouse=lazy_wh)) == G.checksum(self.read("bench.t"))
        t_origin = median([timed(lambda: noop(self.read("bench.t")))[0] for _ in range(self.scan_reps)])
        t_clone = median([timed(lambda: noop(self.read("bench.t", warehouse=lazy_wh)))[0] for _ in range(self.scan_reps)])
        self.add("scan_lazy_clone", "full scan of the lazy clone's head (objects read in place at the origin) vs the "
                 "same scan in the origin", t_clone, t_origin, t_clone / t_origin, "info", None,
                 f"content {'equal' if same else 'MISMATCH'}; median of {self.scan_reps}", content_equal=same)
        t_full, _ = timed(lambda: v.clone(sp, "bench", warehouse=self.wh, metastore_url=origin_url,
                                          local_warehouse=full_wh, download="all"))
        full_bytes, full_files = parquet_bytes(os.path.join(full_wh, "objects"))
        t_copy, _ = timed(lambda: shutil.copytree(self.objects, os.path.join(self.work, "objects-copy")))
        self.add("clone_download", "clone downloading every object (Spark tasks, each object verified against its "
                 "checksum) vs a plain copy of the origin's object files", t_full, t_copy, t_full / t_copy, "info", None,
                 f"downloaded {fmt_b(full_bytes)} in {full_files} objects; the copy holds every object of the "
                 "warehouse", bytes=full_bytes, objects=full_files)
        ks = G.Stream(n, k)
        feed = ks.changes(sp, 6).withColumn("_del", G.F.col("_vchange") == G.DELETE).drop("_vchange")
        clone.create_branch("rp", from_ref="main")

        def commit_on_clone() -> None:
            (feed.write.format("versioned").option("upsert", "true").option("deleteColumn", "_del")
             .option("warehouse", lazy_wh).option("branch", "rp").option("message", "k on the clone")
             .mode("append").save("bench.t"))
        t_commit, _ = timed(commit_on_clone)
        t_push, pushed = timed(lambda: clone.push(branch="rp"))
        same = G.checksum(self.read("bench.t", ref="rp")) == G.checksum(self.read("bench.t", ref="rp", warehouse=lazy_wh))
        self.add("push_k", f"push of a branch with one commit of k={k:,} changed rows to the origin (uploads what it "
                 "lacks, then compare-and-swap) vs making that commit", t_push, t_commit, t_push / t_commit,
                 "≤ 2× the k-row commit", t_push <= 2 * t_commit,
                 f"{pushed.status}: {pushed.images} image, {pushed.uploaded} objects uploaded; content "
                 f"{'equal' if same else 'MISMATCH'}", uploaded=pushed.uploaded, content_equal=same)
        origin.create_branch("rf", from_ref="main")
        self.upsert_feed(ks.changes(sp, 7), "bench.t", branch="rf", message="k on the origin")
        t_fetch, fetched = timed(lambda: clone.fetch())
        same = G.checksum(self.read("bench.t", ref="origin/rf", warehouse=lazy_wh)) == \
            G.checksum(self.read("bench.t", ref="rf"))
        self.add("fetch_k", f"fetch of one new commit of k={k:,} changed rows (metadata only)", t_fetch, None, None,
                 "info", None, f"{fetched.images} image, {fetched.objects} object rows, "
                 f"{len(fetched.refs)} refs moved; content {'equal' if same else 'MISMATCH'}", content_equal=same)
        remotes_bench.history_rows(self)  # fetch of 1,000 and 10,000 small commits, lazy clone of 1,000 commits

    def main_churn(self) -> None:
        """10 DIFF commits of 1% churn on the N-row table. The compaction threshold is raised for this table
        so the head really has 10 DIFFs per fragment to merge (with the defaults the 10th commit
        re-snapshots or consolidates; that default behaviour is measured on the history table)."""
        sp, n = self.spark, self.n
        cs = G.Stream(n, max(10, n // 100))
        commits = self.args.churn_commits
        # keep every DIFF: raise every trigger of the compaction policy (chain length, DIFF/SNAP row ratio,
        # DIFF consolidation)
        self.spark.conf.set("spark.versioned.compaction.maxChainLength", "1000")
        self.spark.conf.set("spark.versioned.compaction.maxDiffRatio", "1000000")
        self.spark.conf.set("spark.versioned.compaction.consolidateDiffs", "1000")
        times, sizes, how = [], [], "engine"
        try:
            for i in range(commits):
                b0 = self.objects_bytes()
                t, how = timed(lambda: self.apply_changes(cs.changes(sp, i), "bench.t", message=f"churn {i}"))
                b1 = self.objects_bytes()
                times.append(t)
                sizes.append(b1[0] - b0[0])
                log(f"churn commit {i + 1}/{commits}: {t:.2f} s, {fmt_b(b1[0] - b0[0])}")
        finally:
            self.spark.conf.unset("spark.versioned.compaction.maxChainLength")
            self.spark.conf.unset("spark.versioned.compaction.maxDiffRatio")
            self.spark.conf.unset("spark.versioned.compaction.consolidateDiffs")
        rows = cs.changes(sp, 0, with_op=False)
        p = os.path.join(self.pq, "churn-rows")
        rows.coalesce(1).write.mode("overwrite").parquet(p)
        t_pq = median([timed(lambda: rows.coalesce(1).write.mode("overwrite").parquet(p))[0] for _ in range(2)])
        pq_b = parquet_bytes(p)[0]
        self.state["churn"] = cs
        via = "upsert write with deleteColumn" if how == "public" else "the engine (internal API)"
        self.add("churn_commit", f"churn commit of 1% ({cs.c:,} rows: upserts + deletes) into N rows, one commit via "
                 f"{via}", median(times), t_pq, median(times) / t_pq, "— (context)", None,
                 f"median of {commits} commits (min {fmt_s(min(times))}, max {fmt_s(max(times))}); "
                 f"{fmt_b(median(sizes))} written per commit vs Parquet(changed rows) {fmt_b(pq_b)}",
                 commit_s=times, bytes=sizes, parquet_rows_bytes=pq_b)

    def main_scans(self) -> None:
        sp, n = self.spark, self.n
        cs: G.Stream = self.state["churn"]
        commits = self.args.churn_commits
        path = os.path.join(self.pq, "main-head")
        t_w, size_p = self.write_expected(cs.expected(sp, commits), path, n)
        log(f"expected head written independently as Parquet in {t_w:.1f} s ({fmt_b(size_p)})")
        dv, dp = self.read("bench.t"), sp.read.parquet(path)
        r = self.scan_pair(dv, dp)
        m = r["metrics"] or {}
        head = MS_resolve(self, "bench", "main")
        objs = MS.head_objects(self.wh, "bench", head, "t")
        st = MS.object_stats(self.wh, objs["compacted"] or objs["fragments"])
        self.state["main_full_scan"] = r["v"]
        self.state["main_head_stats"] = st
        self.state["main_head_metrics"] = m
        ratio = r["v"] / r["p"]
        self.add("scan_head_10", f"scan the head after {commits} DIFF commits of 1% churn each", r["v"], r["p"], ratio,
                 "≤ 1.2×", ratio <= 1.2 and r["ok"],
                 f"compaction thresholds raised for this table so all {commits} DIFFs are merged at read time; "
                 f"{m.get('versionedFragmentsScanned', '?')} fragments, {m.get('versionedObjectsScanned', '?')} objects "
                 f"({st.get('SNAP', {}).get('objects', 0)} SNAP + {st.get('DIFF', {}).get('objects', 0)} DIFF), "
                 f"{fmt_b(m.get('versionedBytesScanned'))} read vs Parquet {fmt_b(size_p)}; result "
                 f"{'= independent Parquet copy' if r['ok'] else 'MISMATCH'} ({r['checksum_v'][0]:,} rows); {r['best']}",
                 **{k: r[k] for k in ("v_all", "p_all", "ok", "warm_v", "warm_p")}, metrics=m, object_stats=st)

    def main_base_scan(self) -> None:
        """Context: the loaded version of the N-row table (SNAP only, main~10) against a Parquet copy, to
        separate the SNAP reader's cost from the cost of merging DIFFs at full size."""
        sp, n, commits = self.spark, self.n, self.args.churn_commits
        path = os.path.join(self.pq, "main-base")
        self.write_expected(G.base(sp, n), path, n)
        r = self.scan_pair(self.read("bench.t", ref=f"main~{commits}"), sp.read.parquet(path))
        m = r["metrics"] or {}
        self.add("scan_base_snap", f"context: scan of the loaded N-row version (main~{commits}, SNAP only)", r["v"],
                 r["p"], r["v"] / r["p"], "— (context)", None,
                 f"{m.get('versionedObjectsScanned', '?')} objects, {fmt_b(m.get('versionedBytesScanned'))}; result "
                 f"{'= independent Parquet copy' if r['ok'] else 'MISMATCH'}; compare with the head row above "
                 f"(same table + 10 DIFFs per fragment); {r['best']}", metrics=m, v_all=r["v_all"], p_all=r["p_all"])

    def lookups(self) -> None:
        sp, n = self.spark, self.n
        dv_all, dp_all = self.read("bench.t"), sp.read.parquet(os.path.join(self.pq, "main-head"))
        full = self.state["main_full_scan"]
        total_objs = (self.state.get("main_head_metrics") or {}).get("versionedObjectsScanned")
        # point lookups: 5 keys spread over the key space
        keys = [int(n * f) + 17 for f in (0.05, 0.27, 0.5, 0.73, 0.95)]
        ok = True
        for key in keys[:2]:
            a = sorted(map(tuple, dv_all.filter(f"id = {key}").collect()))
            b = sorted(map(tuple, dp_all.filter(f"id = {key}").collect()))
            ok = ok and a == b
        tv = [timed(lambda: noop(dv_all.filter(f"id = {key}")))[0] for key in keys]
        tp = [timed(lambda: noop(dp_all.filter(f"id = {key}")))[0] for key in keys]
        m = self.bridge.scan_metrics(dv_all.filter(f"id = {keys[2]}")) or {}
        v = median(tv)
        self.add("point_lookup", "primary-key point lookup (id = x) on the head with DIFFs", v, median(tp), v / full,
                 "only overlapping fragments; ≤ 10% of full scan", v / full <= 0.10 and ok,
                 f"ratio = lookup ÷ connector full scan ({fmt_s(full)}); read "
                 f"{m.get('versionedFragmentsScanned', '?')}/{m.get('versionedFragmentsTotal', '?')} fragments, "
                 f"{m.get('versionedObjectsScanned', '?')}/{total_objs} objects, {fmt_b(m.get('versionedBytesScanned'))}; "
                 f"median of {len(keys)} keys; vs Parquet lookup {v / median(tp):.1f}×; rows "
                 f"{'match' if ok else 'MISMATCH'}", v_all=tv, p_all=tp, metrics=m)
        # 0.1% key range
        lo = n // 3
        hi = lo + max(1, n // 1000) - 1
        cond = f"id BETWEEN {lo} AND {hi}"
        fv, fp = dv_all.filter(cond), dp_all.filter(cond)
        r = self.scan_pair(fv, fp, reps=max(3, self.scan_reps))
        m = r["metrics"] or {}
        v = r["v"]
        self.add("range_lookup", "0.1% primary-key range filter on the head with DIFFs", v, r["p"], v / full,
                 "only overlapping fragments; ≤ 10% of full scan", v / full <= 0.10 and r["ok"],
                 f"ratio = range scan ÷ connector full scan; read {m.get('versionedFragmentsScanned', '?')}/"
                 f"{m.get('versionedFragmentsTotal', '?')} fragments, {m.get('versionedObjectsScanned', '?')}/"
                 f"{total_objs} objects, {fmt_b(m.get('versionedBytesScanned'))}; {r['checksum_v'][0]:,} rows "
                 f"{'match' if r['ok'] else 'MISMATCH'}; vs Parquet range {v / r['p']:.1f}× ({r['best']})",
                 v_all=r["v_all"], p_all=r["p_all"], metrics=m)

    def nonkey_filters(self) -> None:
        sp, n = self.spark, self.n
        dv_all, dp_all = self.read("bench.t"), sp.read.parquet(os.path.join(self.pq, "main-head"))
        st = self.state.get("main_head_stats", {})
        snaps, diffs = st.get("SNAP", {}).get("objects", 0), st.get("DIFF", {}).get("objects", 0)
        lo = n // 2
        cases = [
            ("filter_b", f"b BETWEEN {10 * lo} AND {10 * (lo + n // 100)}",
             "non-key filter on b (correlated with the key, ~1% of rows) with DIFFs present"),
            ("filter_a", "a < 10000", "non-key filter on a (uncorrelated, ~1% of rows) with DIFFs present"),
        ]
        for wid, cond, label in cases:
            r = self.scan_pair(dv_all.filter(cond), dp_all.filter(cond), reps=1)
            m = r["metrics"] or {}
            scanned = m.get("versionedObjectsScanned")
            snap_read = None if scanned is None else max(0, scanned - diffs)
            self.add(wid, f"{label}: `{cond}`", r["v"], r["p"], r["v"] / r["p"], "correct results; report pruning",
                     r["ok"], f"{r['checksum_v'][0]:,} rows, {'= Parquet result' if r['ok'] else 'MISMATCH vs Parquet'}; "
                     f"min/max pruning: {snap_read}/{snaps} SNAPs read (DIFFs are never value-pruned: {diffs} read), "
                     f"{m.get('versionedFragmentsScanned', '?')}/{m.get('versionedFragmentsTotal', '?')} fragments, "
                     f"{fmt_b(m.get('versionedBytesScanned'))} read",
                     metrics=m, checksum_v=r["checksum_v"], checksum_p=r["checksum_p"])

    def diffs(self) -> None:
        """Diff of k (1,000) changes as a share of one full scan of the changed version: changes at scattered
        keys (k-row change stream: 60% updates, 20% deletes, 20% inserts) and in one key range (80% updates, 20%
        deletes) on the N-row table, each on its own branch from the loaded version; the key range also on a
        1M-row table, since that diff must not grow with N. Context: the same diffs compared whole (the path
        every diff took before it followed the change), once each."""
        sp, n, k = self.spark, self.n, self.args.k
        if "main_base" not in self.state:
            self.main_load()
        self.set_fragment_rows(n)
        base = self.state["main_base"]
        ks = G.Stream(n, k)
        self.create_branch("bench", "dsc", base)
        self.apply_changes(ks.changes(sp, 7), "bench.t", branch="dsc", message="diff bench: scattered keys")
        self.create_branch("bench", "dcl", base)
        self.apply_changes(clustered_changes(sp, n // 3, k), "bench.t", branch="dcl", message="diff bench: one key range")
        expect_sc = {"update": ks.u, "delete": ks.dl, "insert": ks.ins}
        expect_cl = {"update": k - int(k * 0.2), "delete": int(k * 0.2)}
        sc = self.time_diff("bench", base, "dsc", expect_sc)
        cl = self.time_diff("bench", base, "dcl", expect_cl)
        small = 1_000_000 if n > 1_000_000 else max(10_000, n // 10)
        if small == n:
            cl_small = cl
        else:
            self.set_fragment_rows(small)
            self.write_versioned(G.base(sp, small), "dm.t", pk="id", message="load")
            small_base = MS_resolve(self, "dm", "main")
            self.create_branch("dm", "dcl", small_base)
            self.apply_changes(clustered_changes(sp, small // 3, k), "dm.t", branch="dcl", message="one key range")
            cl_small = self.time_diff("dm", small_base, "dcl", expect_cl)
            self.set_fragment_rows(n)
        for wid, label, r, target, limit in (
                ("diff_scattered", f"diff of {k:,} changes (scattered keys) in {n:,} rows, as share of one full scan", sc,
                 "≤ 0.5× full scan", 0.5),
                ("diff_clustered", f"diff of {k:,} changes (one key range) in {n:,} rows, as share of one full scan", cl,
                 "≤ 0.1× full scan", 0.1)):
            ratio = r["diff"] / r["scan"]
            self.add(wid, label, r["diff"], None, ratio, target, ratio <= limit and r["ok"],
                     f"ratio = diff ÷ full scan of the changed version ({fmt_s(r['scan'])}); diff median of 3 "
                     f"(all: {', '.join(fmt_s(x) for x in r['all'])}); rows {r['counts']} "
                     f"{'as expected' if r['ok'] else 'MISMATCH'}; compared whole (before): {fmt_s(r['whole'])} = "
                     f"{r['whole'] / r['scan']:.2f}× the scan", scan_s=r["scan"], diff_all=r["all"], whole_s=r["whole"],
                     counts=r["counts"])
        ratio = cl_small["diff"] / cl_small["scan"]
        grows = cl["diff"] / cl_small["diff"]
        self.add("diff_clustered_small", f"diff of {k:,} changes (one key range) in {small:,} rows (the same diff at "
                 f"{n:,} rows took {fmt_s(cl['diff'])})", cl_small["diff"], None, ratio,
                 f"does not grow with N: time at {n:,} ≤ 1.5× time at {small:,}", grows <= 1.5 and cl_small["ok"],
                 f"ratio = diff ÷ full scan of {small:,} rows ({fmt_s(cl_small['scan'])}); time at {n:,} ÷ time at "
                 f"{small:,} = {grows:.2f}; rows {cl_small['counts']} {'as expected' if cl_small['ok'] else 'MISMATCH'}; "
                 f"compared whole (before): {fmt_s(cl_small['whole'])}", scan_s=cl_small["scan"],
                 diff_all=cl_small["all"], whole_s=cl_small["whole"], growth=grows)

    def time_diff(self, repo: str, base: str, branch: str, expected: Dict[str, int]) -> Dict[str, Any]:
        """Median of 3 timed diffs from ``base`` to ``branch`` (after an untimed one that checks the rows by change
        kind), a full scan of ``branch``, and one whole comparison (the path before the fast one)."""
        api = self.repo_api(repo)

        def diff():
            return api.diff("t", base, branch) if api is not None else self.bridge.diff(self.wh, f"{repo}.t", base, branch)
        counts = {r["_change"]: int(r["n"]) for r in diff().groupBy("_change").agg(G.F.count("*").alias("n")).collect()}
        times = [timed(lambda: noop(diff()))[0] for _ in range(3)]
        dv = self.read(f"{repo}.t", ref=branch)
        noop(dv)
        scans = [timed(lambda: noop(dv))[0] for _ in range(max(2, self.scan_reps))]
        whole, _ = timed(lambda: noop(self.bridge.diff(self.wh, f"{repo}.t", base, branch, fast_path=False)))
        log(f"diff {repo} {branch}: {counts}, {fmt_s(median(times))} vs scan {fmt_s(median(scans))}, whole {fmt_s(whole)}")
        return {"diff": median(times), "all": times, "scan": median(scans), "whole": whole, "counts": counts,
                "ok": counts == expected}

    def history(self) -> None:
        """The N_h-row table: initial load, C commits of 0.1% churn with the default compaction, storage,
        head and time-travel scans, then a full-table overwrite with 0.1% changed."""
        sp, n, C = self.spark, self.args.hist_rows, self.args.hist_commits
        self.set_fragment_rows(n)
        self.state["scan_rows"] = n
        hs = G.Stream(n, max(10, n // 1000))
        b0 = self.objects_bytes()
        t_v, _ = timed(lambda: self.write_versioned(G.base(sp, n), "hist.t", pk="id", message="load"))
        b1 = self.objects_bytes()
        pbase = os.path.join(self.pq, "hist-base")
        t_p, _ = timed(lambda: G.base(sp, n).write.mode("overwrite").parquet(pbase))
        base_bytes = parquet_bytes(pbase)[0]
        ml = self.state.get("main_load")
        self.add("initial_load", f"initial load (first commit = SNAP) of {n:,} rows", t_v, t_p, t_v / t_p,
                 "— (context)", None,
                 f"{fmt_b(b1[0] - b0[0])} in {b1[1] - b0[1]} objects vs Parquet {fmt_b(base_bytes)}"
                 + (f"; the N-row main table took {ml['s']:.1f} s ({fmt_b(ml['bytes'])})" if ml else ""),
                 bytes=b1[0] - b0[0], parquet_bytes=base_bytes)

        times = []
        for i in range(C):
            t, _ = timed(lambda: self.apply_changes(hs.changes(sp, i), "hist.t", message=f"h{i}"))
            times.append(t)
            if (i + 1) % 10 == 0 or i + 1 == C:
                log(f"history commit {i + 1}/{C}: last {t:.2f} s")
        b2 = self.objects_bytes()
        self.state["hist_commit_s"] = times
        compacted = MS.compacted_images(self.wh, "hist", "t")
        resnaps = [i + 1 for i in range(C) if MS_resolve(self, "hist", f"main~{C - i - 1}") in compacted]
        log(f"commits that compacted fragments (re-snapshot or DIFF consolidation at commit time): {resnaps}")

        # storage
        pch = os.path.join(self.pq, "hist-changes")
        hs.changes(sp, 0, C, with_op=False).coalesce(1).write.mode("overwrite").parquet(pch)
        ch_bytes = parquet_bytes(pch)[0]
        stored = b2[0] - b0[0]
        ids = MS.repo_object_ids(self.wh, "hist")
        st = MS.object_stats(self.wh, ids)
        ratio = stored / (base_bytes + ch_bytes)
        self.add("storage", f"storage after {C} commits of 0.1% churn ({hs.c:,} rows each) on the {n:,}-row history table", None, None, ratio,
                 "≤ 1.1× (base Parquet + changed rows)", ratio <= 1.1,
                 f"ratio of bytes: objects {fmt_b(stored)} vs Parquet base {fmt_b(base_bytes)} + changed rows "
                 f"{fmt_b(ch_bytes)}; objects: {st.get('SNAP', {}).get('objects', 0)} SNAP "
                 f"({fmt_b(st.get('SNAP', {}).get('bytes', 0))}, base + automatic re-snapshots) and "
                 f"{st.get('DIFF', {}).get('objects', 0)} DIFF ({fmt_b(st.get('DIFF', {}).get('bytes', 0))}, commit "
                 f"DIFFs + consolidated DIFFs); fragments compacted (re-snapshot or DIFF consolidation) at commits "
                 f"{resnaps or 'none'} (default compaction policy); "
                 f"commit median {fmt_s(median(times))}, max {fmt_s(max(times))}",
                 stored_bytes=stored, parquet_base=base_bytes, parquet_changes=ch_bytes, object_stats=st,
                 commit_s=times, resnapshot_after=resnaps)

        # head after C commits
        ph = os.path.join(self.pq, "hist-head")
        self.write_expected(hs.expected(sp, C), ph, n)
        r = self.scan_pair(self.read("hist.t"), sp.read.parquet(ph))
        m = r["metrics"] or {}
        ratio = r["v"] / r["p"]
        head_chain = MS.max_chain(self.wh, "hist", MS_resolve(self, "hist", "main"), "t")
        self.add("scan_head_100", f"scan after {C} commits of 0.1% churn on the {n:,}-row history table (automatic re-snapshotting)", r["v"],
                 r["p"], ratio, "≤ 1.2×", ratio <= 1.2 and r["ok"],
                 f"{m.get('versionedObjectsScanned', '?')} objects in {m.get('versionedFragmentsScanned', '?')} "
                 f"fragments (up to {head_chain} DIFFs per fragment); result {'= independent Parquet copy' if r['ok'] else 'MISMATCH'}; {r['best']}",
                 metrics=m, v_all=r["v_all"], p_all=r["p_all"])

        # time travel C commits back (= the loaded SNAP version); baseline laid out like the other copies
        pb10 = os.path.join(self.pq, "hist-base-sorted")
        self.write_expected(hs.expected(sp, 0), pb10, n)
        r = self.scan_pair(self.read("hist.t", ref=f"main~{C}"), sp.read.parquet(pb10))
        m = r["metrics"] or {}
        ratio = r["v"] / r["p"]
        self.add("time_travel", f"time-travel scan of the version {C} commits back (main~{C}, history table)", r["v"], r["p"], ratio,
                 "≤ 1.2×", ratio <= 1.2 and r["ok"],
                 f"{m.get('versionedObjectsScanned', '?')} objects; result "
                 f"{'= Parquet base' if r['ok'] else 'MISMATCH'}; {r['best']}",
                 metrics=m, v_all=r["v_all"], p_all=r["p_all"])

        # time travel to the version with the longest chain left by the compaction policy
        chains = [(MS.max_chain(self.wh, "hist", MS_resolve(self, "hist", f"main~{x}"), "t"), C - x)
                  for x in range(C + 1)]
        chain, j = max(chains)  # ties: the newest such version
        if chain > 0 and j != C:
            p9 = os.path.join(self.pq, "hist-chain")
            self.write_expected(hs.expected(sp, j), p9, n)
            r = self.scan_pair(self.read("hist.t", ref=f"main~{C - j}"), sp.read.parquet(p9))
            m = r["metrics"] or {}
            ratio = r["v"] / r["p"]
            self.add("time_travel_chain", f"time-travel scan of the version with the longest chain (main~{C - j}: "
                     f"up to {chain} DIFFs per fragment)", r["v"], r["p"], ratio, "≤ 1.2× (same bound as head)",
                     ratio <= 1.2 and r["ok"],
                     f"{m.get('versionedObjectsScanned', '?')} objects, {fmt_b(m.get('versionedBytesScanned'))}; "
                     f"result {'= independent Parquet copy' if r['ok'] else 'MISMATCH'}; {r['best']}",
                     metrics=m, v_all=r["v_all"], p_all=r["p_all"])

        # full-table overwrite with 0.1% of rows changed
        changed = G.F.pmod(G.F.xxhash64(G.F.col("id"), G.F.lit(4242)), G.F.lit(1000)) == 0
        modify = lambda df: df.withColumn("a", G.F.when(changed, G.F.col("a") + 1).otherwise(G.F.col("a")))  # noqa: E731
        footer = self.per_file_overhead()
        pchg = os.path.join(self.pq, "ow-changed")
        sp.read.parquet(ph).filter(changed).coalesce(1).write.mode("overwrite").parquet(pchg)
        chg_bytes = parquet_bytes(pchg)[0]
        n_changed = sp.read.parquet(pchg).count()
        c0 = self.objects_bytes()
        t_v, _ = timed(lambda: self.write_versioned(modify(self.read("hist.t")), "hist.t", mode="overwrite",
                                                    message="overwrite 0.1%"))
        c1 = self.objects_bytes()
        pow_ = os.path.join(self.pq, "ow-out")
        t_p, _ = timed(lambda: modify(sp.read.parquet(ph)).write.mode("overwrite").parquet(pow_))
        full_bytes = parquet_bytes(pow_)[0]
        wrote, objs = c1[0] - c0[0], c1[1] - c0[1]
        head = MS_resolve(self, "hist", "main")
        ho = MS.head_objects(self.wh, "hist", head, "t")
        prev = MS.head_objects(self.wh, "hist", MS_resolve(self, "hist", "main~1"), "t")
        new_ids = set(ho["fragments"]) - set(prev["compacted"] or prev["fragments"])
        new_st = MS.object_stats(self.wh, list(new_ids))
        diff_rows = new_st.get("DIFF", {}).get("rows", 0)
        ok_content = G.checksum(self.read("hist.t")) == G.checksum(sp.read.parquet(pow_))
        allow = 1.5 * chg_bytes + objs * footer
        ok = wrote <= allow and diff_rows == n_changed and ok_content
        self.add("overwrite", f"commit with overwrite of the full table ({n:,} rows) where 0.1% of rows changed",
                 t_v, t_p, t_v / t_p, "only changed rows written; time reported vs full Parquet overwrite", ok,
                 f"wrote {fmt_b(wrote)} in {objs} objects ({diff_rows:,} DIFF rows for {n_changed:,} changed rows) vs "
                 f"Parquet full overwrite {fmt_b(full_bytes)} and Parquet(changed rows) {fmt_b(chg_bytes)} "
                 f"(allowed {fmt_b(allow)}); content {'= Parquet result' if ok_content else 'MISMATCH'}",
                 bytes=wrote, objects=objs, diff_rows=diff_rows, changed_rows=n_changed, parquet_full_bytes=full_bytes,
                 parquet_changed_bytes=chg_bytes)

    def refs_and_log(self) -> None:
        """Refs and log on a repository with a long history (separate warehouse)."""
        sp, L, wh = self.spark, self.args.log_commits, self.wh_log
        self.write_versioned(G.base(sp, 1000), "logrepo.t", pk="id", warehouse=wh, message="load")
        head = self.bridge.resolve(wh, "logrepo", "main")
        hash_ok = MS.verify_image_hash(wh, "logrepo", head)
        eng_n = min(100, max(0, L - 2))
        t0 = time.perf_counter()
        for i in range(eng_n):
            head = self.bridge.empty_commit(wh, "logrepo", "main", head, f"engine commit {i}")
        eng_ms = (time.perf_counter() - t0) / max(1, eng_n) * 1000
        fab = max(0, L - 2 - eng_n)
        t_fab, _ = timed(lambda: MS.fabricate_history(wh, "logrepo", "main", fab))
        # one real commit on top of the fabricated history
        self.write_versioned(G.Stream(1000, 10).upserts(sp, 0), "logrepo.t", upsert=True, warehouse=wh,
                             message="real commit on top")
        n_log = self.bridge.log_size(wh, "logrepo", "main")
        log(f"history of {n_log:,} commits: {eng_n} engine commits at {eng_ms:.1f} ms each, {fab:,} fabricated in "
            f"{t_fab:.1f} s, image hash check {'ok' if hash_ok else 'MISMATCH'}")
        how = (f"{n_log:,} commits: 1 load + {eng_n} engine commits ({eng_ms:.0f} ms each via py4j, so 100,000 would "
               f"take {eng_ms * 100:.0f} s) + {fab:,} fabricated directly in the metastore per docs/FORMAT.md "
               f"(hash check {'ok' if hash_ok else 'MISMATCH'}) + 1 real commit on top")
        reps = self.args.ref_reps
        repo = self.repo_api("logrepo", wh)

        def bench_op(fn: Callable[[int], Any]) -> List[float]:
            fn(-1)
            return [timed(lambda: fn(i))[0] for i in range(reps)]

        ops = {}
        if repo is not None:
            ops["create branch"] = (bench_op(lambda i: repo.create_branch(f"b{i + 1}", from_ref="main")),
                                    bench_op(lambda i: self.bridge.create_branch(wh, "logrepo", f"e{i + 1}", "main")))
            ops["create tag"] = (bench_op(lambda i: repo.create_tag(f"t{i + 1}", "main")),
                                 bench_op(lambda i: self.bridge.create_tag(wh, "logrepo", f"et{i + 1}", "main")))
            ops["resolve a ref"] = (bench_op(lambda i: repo.resolve("main")),
                                    bench_op(lambda i: self.bridge.resolve(wh, "logrepo", "main")))
        else:
            ops["create branch"] = (bench_op(lambda i: self.bridge.create_branch(wh, "logrepo", f"e{i + 1}", "main")), None)
            ops["create tag"] = (bench_op(lambda i: self.bridge.create_tag(wh, "logrepo", f"et{i + 1}", "main")), None)
            ops["resolve a ref"] = (bench_op(lambda i: self.bridge.resolve(wh, "logrepo", "main")), None)
        rt = bench_op(lambda i: sp._jvm.java.lang.System.nanoTime())
        for name, (api_t, eng_t) in ops.items():
            v = median(api_t)
            note = (f"median of {reps} (p90 {fmt_s(sorted(api_t)[int(0.9 * (len(api_t) - 1))])}) through the Python "
                    f"package" if repo is not None else f"median of {reps} through the engine (no Python package)")
            if eng_t:
                note += f"; engine call through py4j {fmt_s(median(eng_t))}"
            note += f"; py4j round trip {fmt_s(median(rt))}; repository with {n_log:,} commits"
            self.add(name.replace(" ", "_"), name, v, None, None, "< 20 ms", v < 0.020, note,
                     api_s=api_t, engine_s=eng_t)
        # log
        if repo is not None:
            t_api = [timed(lambda: repo.log("main").count())[0] for _ in range(3)]
        else:
            t_api = []
        t_eng = [timed(lambda: self.bridge.log_size(wh, "logrepo", "main"))[0] for _ in range(3)]
        v = median(t_api) if t_api else median(t_eng)
        self.add("log", f"log of {n_log:,} commits", v, None, None, "< 1 s", v < 1.0,
                 (f"Python `Repository.log('main').count()` median of 3; engine log alone {fmt_s(median(t_eng))}; "
                  if t_api else f"engine log median of 3; ") + how,
                 api_s=t_api, engine_s=t_eng, commits=n_log, engine_commit_ms=eng_ms, fabricated=fab,
                 fabricate_s=t_fab, hash_check=hash_ok)

    # ---- run
    def run(self) -> None:
        self.start()
        steps = [("warm-up", self.warmup), ("load N rows", self.main_load), ("k-row commit", self.k_commit), ("merge", self.merge_step),
                 ("churn commits", self.main_churn), ("head scan", self.main_scans), ("lookups", self.lookups),
                 ("non-key filters", self.nonkey_filters), ("SNAP-only scan", self.main_base_scan),
                 ("diff", self.diffs),
                 ("history table", self.history),
                 ("refs and log", self.refs_and_log), ("remotes", self.remotes_step)]
        only = set(self.args.only.split(",")) if self.args.only else None
        for i, (name, fn) in enumerate(steps):
            if only and str(i) not in only and name not in only:
                continue
            t = time.perf_counter()
            self.run_step(name, fn)
            self.meta.setdefault("step_s", {})[name] = round(time.perf_counter() - t, 1)
            self.meta.setdefault("loadavg_1m_after_step", {})[name] = round(os.getloadavg()[0], 1)
        self.meta["finished"] = _dt.datetime.now().isoformat(timespec="seconds")
        self.save()
        print()
        print(self.markdown())
        self.spark.stop()


def clustered_changes(spark, lo: int, k: int):
    """k changes to the existing keys lo .. lo+k-1 (one key range): 80% new values (version 1), 20% deletes;
    table columns + ``_vchange`` (3 upsert, 1 delete), deletes carry only the key."""
    is_del = (G.F.col("id") - G.F.lit(lo)) >= G.F.lit(k - int(k * 0.2))
    rows = spark.range(lo, lo + k).select(G.F.col("id"), *G.values(G.F.col("id"), G.F.lit(1)))
    return rows.select(G.F.col("id"), *[G.F.when(~is_del, G.F.col(c)).alias(c) for c in G.COLUMNS[1:]],
                       G.F.when(is_del, G.F.lit(G.DELETE)).otherwise(G.F.lit(G.UPSERT)).cast("byte").alias("_vchange"))


def MS_resolve(suite: Suite, repo: str, spec: str) -> str:
    return suite.bridge.resolve(suite.wh, repo, spec)


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=None, help="N, rows of the main table (default 10,000,000)")
    ap.add_argument("--quick", action="store_true", help="smoke run: N = 200,000 and shorter histories")
    ap.add_argument("--k", type=int, default=1000, help="changed rows of the k-row commit (default 1,000)")
    ap.add_argument("--churn-commits", type=int, default=10, help="DIFF commits of 1%% churn before the head scan")
    ap.add_argument("--hist-rows", type=int, default=None,
                    help="rows of the history table (default N)")
    ap.add_argument("--hist-commits", type=int, default=None, help="commits of 0.1%% churn (default 100; 20 quick)")
    ap.add_argument("--log-commits", type=int, default=100000, help="commits in the log repository")
    ap.add_argument("--ref-reps", type=int, default=20, help="repetitions of each ref operation")
    ap.add_argument("--scan-reps", type=int, default=None, help="timed repetitions per scan (default by table size: 5 up to 500k rows, 3 up to 2M, else 2)")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--driver-memory", default="6g")
    ap.add_argument("--shuffle-partitions", type=int, default=200)
    ap.add_argument("--work", default=os.path.join(HERE, "work"), help="scratch directory (deleted first)")
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("--only", default=None, help="comma-separated step numbers or names (debugging)")
    a = ap.parse_args(argv)
    if a.rows is None:
        a.rows = 200_000 if a.quick else 10_000_000
    if a.hist_rows is None:
        a.hist_rows = a.rows
    if a.hist_commits is None:
        a.hist_commits = 20 if a.quick else 100
    return a


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    suite = Suite(args)
    suite.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
