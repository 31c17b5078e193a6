"""The benchmark's session, API adapter, results table and measurement helpers; the workloads are mixins
(``wl_*.py``) combined in ``run.py``."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shutil
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

import datagen as G
import peers_client
import wl_streaming
from common import ROOT, T0, driver_java_options, find_jar, fmt_s, git_head, log, median, force, parquet_bytes, scan_reps, sha256_file, timed


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
        self.scan_reps = args.scan_reps or scan_reps(self.n)
        self.full_verify = self.n <= 2_000_000
        self.state: Dict[str, Any] = {}

    # ---- session
    @property
    def master(self) -> str:
        """The Spark master: ``--master`` (a cluster URL), else ``local[--cores]``."""
        return self.args.master or f"local[{self.args.cores}]"

    def start(self, keep: bool = False) -> None:
        """Starts the session on a fresh ``--work`` directory (``keep``: on the one a previous run left)."""
        os.makedirs(self.work, exist_ok=True)
        for name in [] if keep else os.listdir(self.work):  # all but the peers' environment (bin/bench makes it once)
            if name != "peers-venv":
                p = os.path.join(self.work, name)
                shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
        os.makedirs(self.results_dir, exist_ok=True)
        src = find_jar()
        jar = os.path.join(self.work, "versioned-spark-assembly.jar")
        shutil.copyfile(src, jar)  # a private copy: the jar may be rebuilt while the benchmark runs
        from pyspark.sql import SparkSession
        import pyspark

        java_options = f"{driver_java_options(self.args.driver_memory)} {self.args.driver_java_options}".strip()
        builder = (SparkSession.builder.master(self.master)
                      .appName("versioned-bench")
                      .config("spark.driver.memory", self.args.driver_memory)
                      .config("spark.driver.extraJavaOptions", java_options)
                      .config("spark.jars", jar)
                      .config("spark.ui.enabled", "false")
                      .config("spark.ui.showConsoleProgress", "false")
                      .config("spark.sql.shuffle.partitions", str(self.args.shuffle_partitions))
                      .config("spark.versioned.warehouse", self.wh)
                      .config("spark.sql.catalog.vc", "versioned.spark.catalog.VersionedCatalog")
                      .config("spark.versioned.author", "bench")
                      .config("spark.local.dir", os.path.join(self.work, "spark-local")))
        for kv in getattr(self.args, "conf", None) or []:  # run.py --conf KEY=VALUE
            builder = builder.config(*kv.split("=", 1))
        self.spark = builder.getOrCreate()
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
            "master": self.master,
            "driver_memory": self.args.driver_memory,
            "driver_java_options": java_options,
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
        log(f"Spark {pyspark.__version__} {self.master}, N={self.n:,}, N_h={n_h:,}, jar {self.meta['jar']}")

    @staticmethod
    def frag_rows(n: int) -> int:
        """Fragment size: ~10 fragments per table up to N = 10M (1,000,000 rows there, the connector default);
        beyond, the connector default (a --scale run at N = 100M has 100 fragments)."""
        return max(1000, min(n // 10, 1_000_000))

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

    def upsert_feed(self, changes, table: str, branch: Optional[str] = None, message: Optional[str] = None,
                    before_images: bool = False) -> None:
        """Public API, one commit, no table read: ``upsert=true`` with ``deleteColumn`` (a boolean column;
        true deletes the key). ``changes`` has the table columns and ``_vchange`` (1 = delete). With
        ``before_images`` the commit records each key's row before it (write option ``beforeImages``)."""
        feed = changes.withColumn("_del", G.F.col("_vchange") == G.DELETE).drop("_vchange")
        w = feed.write.format("versioned").option("upsert", "true").option("deleteColumn", "_del")
        if before_images:
            w = w.option("beforeImages", "true")
        if branch:
            w = w.option("branch", branch)
        if message:
            w = w.option("message", message)
        w.mode("append").save(table)

    def apply_changes(self, changes, table: str, branch: str = "main", message: str = "changes",
                      before_images: bool = False) -> str:
        """One commit of mixed upserts and deletes: the public change-feed write when the connector has it,
        else one DIFF commit through the engine (bridge)."""
        if self.state.get("feed_public"):
            self.upsert_feed(changes, table, branch=branch, message=message, before_images=before_images)
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
            "actions that materialize every column (`queryExecution.toRdd.count()` of the scan, on every side). Ratio is connector ÷ "
            "Parquet unless the notes say otherwise. Bytes count `.parquet` files only (no `.crc`).",
            "",
        ]
        if m.get("peers") or any(r.get("peers") for r in self.rows):
            lines += peers_client.table(self.rows, m)
        else:
            lines += ["| workload | connector | parquet baseline | ratio | target | result | notes |",
                      "|---|---|---|---|---|---|---|"]
            for r in self.rows:
                verdict = {True: "pass", False: "**FAIL**", None: "info"}[r["pass"]]
                ratio = "—" if r["ratio"] is None else f"{r['ratio']:.2f}"
                notes = r["notes"].replace("|", "\\|")
                lines.append(f"| {r['workload']} | {fmt_s(r['connector_s'])} | {fmt_s(r['parquet_s'])} | {ratio} | "
                             f"{r['target']} | {verdict} | {notes} |")
        if any(r["id"].startswith("stream_") for r in self.rows):
            lines += wl_streaming.table(self.rows, peers_client.LABELS)
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
        """Checks equality (count + checksum, which also warms both paths up), then times forced scans,
        alternating connector and Parquet. Returns medians, checksums and the connector's scan metrics."""
        reps = reps or self.scan_reps
        if not self.args.scan_reps:
            reps = max(reps, scan_reps(self.state.get("scan_rows", self.n)))
        tv_w, cv = timed(lambda: G.checksum(dv))
        tp_w, cp = timed(lambda: G.checksum(dp))
        tv, tp = [], []
        for _ in range(reps):
            tv.append(timed(lambda: force(dv))[0])
            tp.append(timed(lambda: force(dp))[0])
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



def MS_resolve(suite: Suite, repo: str, spec: str) -> str:
    return suite.bridge.resolve(suite.wh, repo, spec)

