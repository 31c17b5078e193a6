#!/usr/bin/env python3
"""Runs the benchmark's workloads on one peer (Delta Lake or Iceberg) and on plain Parquet in the peer's own
SparkSession, in the peers' virtual environment (PySpark 4.1, which both peers support; bin/bench creates it).

    bench/work/peers-venv/bin/python bench/peers/runner.py --system delta --rows 1000000 --out delta.json

The data come from the same seeded generator as the main benchmark (bench/datagen.py), so the peer's tables
hold the same rows as ours; every result is checked against an independent Parquet copy (row count and an
order-independent checksum) or against the expected change counts, and a mismatch is reported as such, never
as a time. Results: one JSON file (``--out``), rewritten after every workload; bench/peers_client.py merges it
into the main results table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import traceback
from typing import Any, Callable, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # bench/: datagen
sys.path.insert(0, HERE)

import datagen as G  # noqa: E402
from common import T0, driver_java_options, force, log, median, scan_reps, timed  # noqa: E402 - shared with the main benchmark
import tables as TB  # noqa: E402
from wl_streaming import add_stream_args  # noqa: E402 - the streaming workload's options, as bench/run.py's

DELTA_PACKAGE = "io.delta:delta-spark_4.1_2.13:4.4.0"
ICEBERG_PACKAGE = "org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0"
def session(args: argparse.Namespace):
    from pyspark.sql import SparkSession
    b = (SparkSession.builder.master(f"local[{args.cores}]").appName(f"versioned-bench-peer-{args.system}")
         .config("spark.driver.memory", args.driver_memory)
         .config("spark.driver.extraJavaOptions", driver_java_options(args.driver_memory))
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", str(args.shuffle_partitions))
         .config("spark.sql.parquet.compression.codec", "snappy")
         .config("spark.local.dir", os.path.join(args.work, "spark-local"))
         .config("spark.sql.warehouse.dir", os.path.join(args.work, "spark-warehouse")))
    if args.system == "delta":
        b = (b.config("spark.jars.packages", DELTA_PACKAGE)
             .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
             .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
             # the default (50) makes every query and commit on a 2-core session run 50-task stages
             .config("spark.databricks.delta.snapshotPartitions", str(args.cores)))
    else:
        b = (b.config("spark.jars.packages", ICEBERG_PACKAGE)
             .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
             .config("spark.sql.catalog.ice", "org.apache.iceberg.spark.SparkCatalog")
             .config("spark.sql.catalog.ice.type", "hadoop")
             .config("spark.sql.catalog.ice.warehouse", os.path.join(args.work, "tables")))
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class Runner:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.n = args.rows
        self.rows: List[Dict[str, Any]] = []
        self.meta: Dict[str, Any] = {}
        self.root = os.path.join(args.work, "tables")
        self.pq = os.path.join(args.work, "parquet")
        self.state: Dict[str, Any] = {}

    def start(self) -> None:
        if os.path.exists(self.args.work):
            shutil.rmtree(self.args.work)
        os.makedirs(self.root)
        self.spark = session(self.args)
        import pyspark
        self.label = TB.SYSTEMS[self.args.system]
        self.meta.update({"system": self.args.system, "label": self.label, "spark": pyspark.__version__,
                          "package": DELTA_PACKAGE if self.args.system == "delta" else ICEBERG_PACKAGE,
                          "rows": self.n, "hist_rows": self.args.hist_rows, "hist_commits": self.args.hist_commits,
                          "loadavg_1m_at_start": round(os.getloadavg()[0], 1)})
        log(f"{self.label} on Spark {pyspark.__version__}, N={self.n:,}")
        self.save()  # the session is up (its packages resolved): the client may start the next peer

    def table(self, name: str, change_feed: bool = False) -> TB.PeerTable:
        return TB.make(self.args.system, self.spark, name, self.root, change_feed=change_feed)

    # ---- results
    def add(self, wid: str, peer_s: Optional[float], parquet_s: Optional[float], ratio: Optional[float],
            ok: Optional[bool], note: str, **details: Any) -> None:
        """One result; ``ok`` False means the peer's result did not match the expected content (no time is then
        shown); None means nothing was checked (metadata operations)."""
        self.rows.append({"id": wid, "peer_s": peer_s, "parquet_s": parquet_s, "ratio": ratio, "ok": ok,
                          "note": note, "details": details})
        log(f"RESULT {wid}: {peer_s} vs {parquet_s} ratio {ratio} ok={ok} {note}")
        self.save()

    def na(self, wid: str, reason: str) -> None:
        self.rows.append({"id": wid, "na": True, "note": reason})
        log(f"n/a {wid}: {reason}")
        self.save()

    def save(self) -> None:
        self.meta["elapsed_s"] = round(time.perf_counter() - T0, 1)
        with open(self.args.out, "w") as f:
            json.dump({"meta": self.meta, "rows": self.rows}, f, indent=2, default=str)

    def run_step(self, name: str, fn: Callable[[], None], ids: List[str]) -> None:
        log(f"== {name}")
        t = time.perf_counter()
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - report, keep going
            traceback.print_exc()
            msg = f"{type(e).__name__}: {str(e).splitlines()[0][:240]}" if str(e) else type(e).__name__
            done = {r["id"] for r in self.rows}
            for wid in ids:
                if wid not in done:
                    self.na(wid, f"failed: {msg}")
            self.meta.setdefault("errors", []).append(f"{name}: {msg}")
        self.meta.setdefault("step_s", {})[name] = round(time.perf_counter() - t, 1)
        self.save()

    # ---- measurement helpers
    def frags(self, n: int) -> int:
        """Files per table: as many as the connector's fragments (rows / 10 per fragment)."""
        return max(1, round(n / max(1000, n // 10)))

    def layout(self, df, n: int):
        """Sorted by key in as many files as the connector has fragments (the connector's layout)."""
        return df.repartitionByRange(self.frags(n), "id").sortWithinPartitions("id")

    def write_expected(self, df, name: str, n: int) -> str:
        path = os.path.join(self.pq, name)
        self.layout(df, n).write.mode("overwrite").parquet(path)
        return path

    def scan_reps(self, n: int) -> int:
        return self.args.scan_reps or scan_reps(n)

    def scan_pair(self, dv, dp, reps: int) -> Dict[str, Any]:
        """Checksums both (which also warms them up), then times ``reps`` forced scans of each, alternating."""
        cv, cp = G.checksum(dv), G.checksum(dp)
        tv, tp = [], []
        for _ in range(reps):
            tv.append(timed(lambda: force(dv))[0])
            tp.append(timed(lambda: force(dp))[0])
        return {"v": median(tv), "p": median(tp), "v_all": tv, "p_all": tp, "ok": cv == cp, "rows": cv[0],
                "best": f"best-of-{reps} ratio {min(tv) / min(tp):.2f}" if reps > 1 else "single run"}

    def add_scan(self, wid: str, r: Dict[str, Any], note: str) -> None:
        self.add(wid, r["v"], r["p"], r["v"] / r["p"], r["ok"],
                 f"{r['rows']:,} rows {'= independent Parquet copy' if r['ok'] else 'MISMATCH'}; {note}; {r['best']}",
                 v_all=r["v_all"], p_all=r["p_all"])

    def run(self) -> None:
        import workloads as W
        self.start()
        steps = [("warm-up", W.warmup, []),
                 ("main table", W.main_table, ["k_commit", "churn_commit", "scan_head_10", "point_lookup",
                                               "range_lookup", "filter_b", "filter_a", "scan_base_snap", "merge_k"]),
                 ("diff", W.diffs, ["diff_scattered", "diff_clustered"]),
                 ("history table", W.history, ["initial_load", "storage", "scan_head_100", "time_travel", "overwrite",
                                               "create_branch", "create_tag", "resolve_a_ref", "log"]),
                 ("remotes", W.remotes, ["clone_lazy"]),
                 ("streaming", W.streaming, [])]
        only = set(self.args.steps.split(",")) if self.args.steps else None
        for name, fn, ids in steps:  # streaming only when asked for (bench/run.py --streaming)
            if (only is None and name != "streaming") or (only and name in only) or name == "warm-up":
                self.run_step(name, lambda: fn(self), ids)
        self.meta["finished"] = True
        self.save()
        self.spark.stop()


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--system", required=True, choices=sorted(TB.SYSTEMS))
    ap.add_argument("--rows", type=int, required=True)
    ap.add_argument("--hist-rows", type=int, default=None)
    ap.add_argument("--hist-commits", type=int, default=100)
    ap.add_argument("--churn-commits", type=int, default=10)
    ap.add_argument("--k", type=int, default=1000)
    ap.add_argument("--ref-reps", type=int, default=20)
    ap.add_argument("--scan-reps", type=int, default=None)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--driver-memory", default="6g")
    ap.add_argument("--shuffle-partitions", type=int, default=200)
    ap.add_argument("--steps", default=None,
                    help="comma-separated steps (main table, diff, history table, remotes, streaming)")
    add_stream_args(ap)
    ap.add_argument("--work", required=True, help="scratch directory (deleted first)")
    ap.add_argument("--out", required=True, help="results JSON")
    a = ap.parse_args(argv)
    if a.hist_rows is None:
        a.hist_rows = a.rows
    return a


if __name__ == "__main__":
    Runner(parse_args()).run()
