#!/usr/bin/env python3
"""Benchmark suite of the versioned connector against plain Parquet, in one SparkSession; then Delta Lake and
Iceberg on the same data and workloads, each against its own Parquet baseline in its own session and
environment (bench/peers/, skipped with --no-peers).

    python3 bench/run.py              # N = 10,000,000 rows (< 20 min on 2 cores)
    python3 bench/run.py --quick      # N = 200,000 rows, shorter histories (smoke run)
    python3 bench/run.py --scale      # N = 100,000,000 rows: the steps whose growth with N is reported
    python3 bench/run.py --rows 2000000 --hist-commits 50

Writes bench/results/results.json and bench/results/results.md (see bench/README.md for the method).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import sys
import time
from typing import List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(ROOT, "python"))

import peers_client  # noqa: E402
from suite import Suite  # noqa: E402
from wl_commits import CommitWorkloads  # noqa: E402
from wl_compaction import CompactionWorkloads  # noqa: E402
from wl_governance import GovernanceWorkloads  # noqa: E402
from wl_history import HistoryWorkloads  # noqa: E402
from wl_remotes import RemotesWorkloads  # noqa: E402
from wl_scans import ScanWorkloads  # noqa: E402
from wl_streaming import StreamingWorkloads, add_stream_args  # noqa: E402


class Bench(CommitWorkloads, CompactionWorkloads, ScanWorkloads, HistoryWorkloads, RemotesWorkloads,
            GovernanceWorkloads, StreamingWorkloads, Suite):
    """Every workload (the mixins) on one session (Suite)."""

    def run(self) -> None:
        self.start()
        steps = [("warm-up", self.warmup), ("load N rows", self.main_load), ("k-row commit", self.k_commit), ("merge", self.merge_step),
                 ("churn commits", self.main_churn), ("head scan", self.main_scans), ("lookups", self.lookups),
                 ("non-key filters", self.nonkey_filters), ("SNAP-only scan", self.main_base_scan),
                 ("diff", self.diffs),
                 ("history table", self.history),
                 ("refs and log", self.refs_and_log), ("remotes", self.remotes_step),
                 ("compaction policy", self.compaction_step), ("governance", self.governance),
                 ("streaming", self.streaming_step)]
        only = set(self.args.only.split(",")) if self.args.only else None
        peers_on = not self.args.no_peers and (not only or "peers" in only)
        # concurrent peers (a host too loaded to run them in turn): started now, collected after our steps
        running = peers_client.start_peers(self, concurrent=True) if peers_on and self.args.peers_concurrent else []
        self.meta["peers_concurrent"] = bool(running)
        for i, (name, fn) in enumerate(steps):
            if only and str(i) not in only and name not in only:
                continue
            if not only and name == "streaming":  # only when asked for: --streaming, or --only streaming
                continue
            t = time.perf_counter()
            self.run_step(name, fn)
            self.meta.setdefault("step_s", {})[name] = round(time.perf_counter() - t, 1)
            self.meta.setdefault("loadavg_1m_after_step", {})[name] = round(os.getloadavg()[0], 1)
        self.spark.stop()  # the peers run after ours, each in its own process and session
        if peers_on:
            t = time.perf_counter()
            if running:
                for p in running:
                    peers_client.finish_peer(self, p)
            else:
                peers_client.run_peers(self)
            self.meta.setdefault("step_s", {})["peers"] = round(time.perf_counter() - t, 1)
            self.meta.setdefault("loadavg_1m_after_step", {})["peers"] = round(os.getloadavg()[0], 1)
        self.meta["finished"] = _dt.datetime.now().isoformat(timespec="seconds")
        self.save()
        print()
        print(self.markdown())


# what a --scale run measures: loads and scans (linear in N), commits, merge, lookups and diffs (following k)
SCALE_STEPS = ("warm-up", "load N rows", "k-row commit", "merge", "churn commits", "head scan", "lookups", "diff")


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=None, help="N, rows of the main table (default 10,000,000)")
    ap.add_argument("--quick", action="store_true", help="smoke run: N = 200,000 and shorter histories")
    ap.add_argument("--scale", action="store_true",
                    help="growth run: N = 100,000,000, the steps " + ",".join(SCALE_STEPS) +
                         " with 3 churn commits unless --churn-commits is given; no peers unless --peers names "
                         "them (compare with a default run to see how each grows with N)")
    ap.add_argument("--streaming", action="store_true",
                    help="the streaming workload only (a stream into the table, ours and the peers'; see "
                         "--stream-*), results in bench/results/streaming/ unless --results is given")
    ap.add_argument("--k", type=int, default=1000, help="changed rows of the k-row commit (default 1,000)")
    ap.add_argument("--churn-commits", type=int, default=None,
                    help="DIFF commits of 1%% churn before the head scan (default 10; 3 with --scale)")
    ap.add_argument("--hist-rows", type=int, default=None,
                    help="rows of the history table (default N)")
    ap.add_argument("--hist-commits", type=int, default=None, help="commits of 0.1%% churn (default 100; 20 quick)")
    ap.add_argument("--log-commits", type=int, default=100000, help="commits in the log repository")
    ap.add_argument("--ref-reps", type=int, default=20, help="repetitions of each ref operation")
    ap.add_argument("--scan-reps", type=int, default=None, help="timed repetitions per scan (default by table size: 5 up to 20M rows, 3 above)")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--master", default=None,
                    help="Spark master URL (default local[--cores]); on a cluster, --work must be storage every executor sees")
    ap.add_argument("--driver-memory", default="6g")
    ap.add_argument("--driver-java-options", default="",
                    help="more JVM options for our driver, e.g. GC logging (-Xlog:gc*:file=gc.log:time,uptime)")
    ap.add_argument("--shuffle-partitions", type=int, default=200)
    ap.add_argument("--work", default=os.path.join(HERE, "work"), help="scratch directory (deleted first)")
    ap.add_argument("--results", default=None, help="results directory (default bench/results)")
    ap.add_argument("--no-peers", action="store_true", help="skip Delta Lake and Iceberg (bench/peers/)")
    ap.add_argument("--peers", default=None, help="comma-separated peers to run: delta,iceberg-mor,iceberg-cow (default all)")
    ap.add_argument("--peers-hist-commits", type=int, default=None,
                    help="commits of 0.1%% churn on the peers' history table (default: --hist-commits)")
    ap.add_argument("--peers-steps", default=None,
                    help="comma-separated steps of the peers: main table, diff, history table, remotes (default all)")
    ap.add_argument("--peers-concurrent", action="store_true",
                    help="run the peers at the same time as our steps (only when the host is too loaded to wait; "
                         "the table says so)")
    ap.add_argument("--peers-stream-batches", type=int, default=None,
                    help="the peers' micro-batches at a trigger of up to 1,000 rows (default: --stream-batches)")
    ap.add_argument("--peers-python", default=None, help="python of the peers' environment (default bench/work/peers-venv)")
    ap.add_argument("--publish-tables", default="100,1000",
                    help="comma-separated table counts of the governance step's publish rows (default 100,1000)")
    ap.add_argument("--publish-metastores", default=None,
                    help="comma-separated metastores of the publish rows: sqlite,postgresql (default sqlite, and "
                         "postgresql when --postgres-url is set)")
    ap.add_argument("--postgres-url", default=os.environ.get("VERSIONED_TEST_POSTGRES_URL") or None,
                    help="JDBC URL of a PostgreSQL database whose user may create databases (bin/setup-postgres prints "
                         "one); each PostgreSQL row gets a fresh database (default $VERSIONED_TEST_POSTGRES_URL)")
    ap.add_argument("--publish-reuse", default=None,
                    help="directory keeping the publish rows' set-up (the repository with its tables made and changed, "
                         "compactions done) between runs: saved there after it is made, restored from there when present "
                         "(the setup takes minutes; the publish is timed on the restored copy)")
    ap.add_argument("--governance-rows", default="gated,publish",
                    help="comma-separated rows of the governance step: gated (the gated publish), publish (the "
                         "publish of many tables)")
    ap.add_argument("--only", default=None, help="comma-separated step numbers or names (debugging)")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="one more Spark setting of our session, after the benchmark's own (repeatable; profiling, "
                         "e.g. spark.ui.enabled=true for bench/diff_profile.py's job list)")
    add_stream_args(ap)
    a = ap.parse_args(argv)
    if a.streaming:
        a.only = a.only or "warm-up,streaming,peers"
        a.peers_steps = a.peers_steps or "streaming"
        a.results = a.results or os.path.join(HERE, "results", "streaming")
    a.results = a.results or os.path.join(HERE, "results")
    if a.scale:
        a.rows = a.rows or 100_000_000
        a.no_peers = a.no_peers or a.peers is None
        a.only = a.only or ",".join(SCALE_STEPS) + ("" if a.no_peers else ",peers")
        a.churn_commits = 3 if a.churn_commits is None else a.churn_commits
    if a.churn_commits is None:
        a.churn_commits = 10
    if a.rows is None:
        a.rows = 200_000 if a.quick else 10_000_000
    if a.hist_rows is None:
        a.hist_rows = a.rows
    a.publish_tables = [int(x) for x in str(a.publish_tables).split(",") if x.strip()]
    a.publish_metastores = [x.strip() for x in (a.publish_metastores or ("sqlite,postgresql" if a.postgres_url else
                                                                         "sqlite")).split(",") if x.strip()]
    if "postgresql" in a.publish_metastores and not a.postgres_url:
        ap.error("--publish-metastores postgresql needs --postgres-url (or $VERSIONED_TEST_POSTGRES_URL)")
    a.governance_rows = [x.strip() for x in a.governance_rows.split(",") if x.strip()]
    if a.hist_commits is None:
        a.hist_commits = 20 if a.quick else 100
    return a


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    suite = Bench(args)
    suite.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
