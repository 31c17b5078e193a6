#!/usr/bin/env python3
"""The row-blame bench row on its own (issue 37): a table of N rows, C commits of 0.1% churn (the history
table of bench/run.py, same data, same public writes, default compaction), one full scan of its head against
an independent Parquet copy, then ``Repository.blame`` of the head (the `blame` row of run.py's history step).

    flock /work/bench.lock python3 bench/blame_bench.py --rows 10000000 --results bench/results/blame-10m
    python3 bench/blame_bench.py --rows 1000000 --keep --profile /tmp/blame.jfr   # reuse the table, record JFR

``--keep`` reuses the table a previous run left in ``--work`` (same N and C), so blame can be profiled or
timed again without the commits. ``--profile`` records a JFR (profile settings) of the driver around the
timed blame runs and prints its hottest frames. Writes results.json and results.md to ``--results``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
from typing import Any, Dict, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(os.path.dirname(HERE), "python"))

import datagen as G  # noqa: E402
import run  # noqa: E402
from common import fmt_s, log, timed  # noqa: E402


def hot_frames(jfr: str, top: int = 25) -> Dict[str, Any]:
    """The hottest frames of a JFR recording's execution samples: the top frame of the samples, and the
    first frame of the connector's own code (``versioned.``) on each sample's stack."""
    out = subprocess.run(["jfr", "print", "--json", "--events", "jdk.ExecutionSample", jfr], check=True,
                         capture_output=True, text=True).stdout
    events = json.loads(out)["recording"]["events"]
    tops: collections.Counter = collections.Counter()
    ours: collections.Counter = collections.Counter()
    for e in events:
        frames = e["values"]["stackTrace"]["frames"] if e["values"].get("stackTrace") else []
        names = [f"{f['method']['type']['name']}.{f['method']['name']}" for f in frames]
        if names:
            tops[names[0]] += 1
        own = next((n for n in names if n.startswith("versioned.")), "(no connector frame)")
        ours[own] += 1
    return {"samples": len(events), "top_frames": tops.most_common(top), "connector_frames": ours.most_common(top)}


def append_notes(results_dir: str) -> None:
    """Appends the host's load average (before and after) and, when profiled, the hottest frames to results.md."""
    meta = json.load(open(os.path.join(results_dir, "results.json")))["meta"]
    lines = ["", f"Load average (1 min) before the run {meta.get('loadavg_1m_before')}, after it "
             f"{meta.get('loadavg_1m_after')} (`uptime` after: {meta.get('uptime_after')}); table "
             f"{'reused from a previous run (--keep)' if meta.get('table_reused') else 'built by this run'}."]
    prof = meta.get("profile")
    if prof:
        lines += ["", f"JFR execution samples of the timed blame runs (all threads of the driver, local mode): "
                  f"{prof['samples']}; hottest top frames:", ""]
        lines += [f"    {c:6d} {f}" for f, c in prof["top_frames"][:12]]
    with open(os.path.join(results_dir, "results.md"), "a") as f:
        f.write("\n".join(lines) + "\n")


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--commits", type=int, default=100)
    ap.add_argument("--work", default=os.path.join(HERE, "work", "blame"))
    ap.add_argument("--results", default=os.path.join(HERE, "results", "blame"))
    ap.add_argument("--driver-memory", default="4g")
    ap.add_argument("--keep", action="store_true", help="reuse the table a previous run left in --work")
    ap.add_argument("--profile", default=None, help="write a JFR recording of the timed blame runs here")
    a = ap.parse_args(argv)
    args = run.parse_args(["--rows", str(a.rows), "--hist-commits", str(a.commits), "--work", a.work,
                           "--results", a.results, "--driver-memory", a.driver_memory, "--no-peers", "--scan-reps", "3"])
    s = run.Bench(args)
    n, C = a.rows, a.commits
    marker = os.path.join(s.work, "blame-table.json")
    keep = a.keep and os.path.exists(marker) and json.load(open(marker)) == {"rows": n, "commits": C}
    s.start(keep=keep)
    s.state["feed_public"] = True
    s.state["scan_rows"] = n
    s.set_fragment_rows(n)
    hs = G.Stream(n, max(10, n // 1000))
    s.meta["loadavg_1m_before"] = round(os.getloadavg()[0], 2)
    if not keep:
        t, _ = timed(lambda: s.write_versioned(G.base(s.spark, n), "hist.t", pk="id", message="load"))
        log(f"load of {n:,} rows: {t:.1f} s")
        for i in range(C):
            t, _ = timed(lambda: s.apply_changes(hs.changes(s.spark, i), "hist.t", message=f"h{i}"))
            if (i + 1) % 10 == 0:
                log(f"history commit {i + 1}/{C}: last {t:.2f} s")
        s.await_compactions()
        with open(marker, "w") as f:
            json.dump({"rows": n, "commits": C}, f)
    s.meta["table_reused"] = keep
    ph = os.path.join(s.pq, "hist-head")
    if not (keep and os.path.isdir(ph)):
        s.write_expected(hs.expected(s.spark, C), ph, n)
    r = s.scan_pair(s.read("hist.t"), s.spark.read.parquet(ph))
    log(f"head scan: ours {fmt_s(r['v'])}, Parquet {fmt_s(r['p'])}, equal {r['ok']}")
    pid = None
    if a.profile:
        pid = int(s.spark._jvm.java.lang.ProcessHandle.current().pid())
        subprocess.run(["jcmd", str(pid), "JFR.start", "name=blame", "settings=profile"], check=True, capture_output=True)
    s.blame_step(n, C, hs, r)
    if a.profile and pid:
        subprocess.run(["jcmd", str(pid), "JFR.stop", "name=blame", f"filename={a.profile}"], check=True,
                       capture_output=True)
        s.meta["profile"] = hot_frames(a.profile)
        for k in ("top_frames", "connector_frames"):
            log(k + ":\n  " + "\n  ".join(f"{c:6d} {f}" for f, c in s.meta["profile"][k]))
    s.meta["loadavg_1m_after"] = round(os.getloadavg()[0], 2)
    s.meta["uptime_after"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    s.save()
    s.spark.stop()
    append_notes(s.results_dir)
    print(s.markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
