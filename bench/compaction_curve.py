#!/usr/bin/env python3
"""Head-scan ratio (connector / Parquet of the same content) as a function of the DIFF share of each
fragment (DIFF rows / SNAP rows), with compaction off, for the compaction policy (bench/README.md,
"Compaction policy"). Two shapes of the same content at every share s:

* many: s commits of 1% churn each (s small DIFFs per fragment);
* one:  one commit of the same s% of changes (one consolidated DIFF per fragment).

    VERSIONED_JAR=... python3 bench/compaction_curve.py --rows 1000000 --work /tmp/x/work --results /tmp/x/results

Writes <results>/compaction_curve.json and prints a table.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(os.path.dirname(HERE), "python"))

import datagen as G  # noqa: E402
from common import log  # noqa: E402
from run import Bench, parse_args  # noqa: E402
from suite import MS_resolve  # noqa: E402

OFF = {"spark.versioned.compaction.maxChainLength": "1000", "spark.versioned.compaction.maxDiffRatio": "1000000",
       "spark.versioned.compaction.consolidateDiffs": "1000"}
SHARES = [int(x) for x in os.environ.get("CURVE_SHARES", "2,5,10,20,30,50,75,100").split(",")]


def main() -> None:
    args = parse_args(sys.argv[1:] + ["--no-peers"])
    b = Bench(args)
    b.start()
    b.run_step("warm-up", b.warmup)
    sp, n = b.spark, b.n
    for k, v in OFF.items():
        sp.conf.set(k, v)
    b.set_fragment_rows(n)
    cs = G.Stream(n, n // 100)
    b.write_versioned(G.base(sp, n), "curve.t", pk="id", message="load")
    base = MS_resolve(b, "curve", "main")
    rows = []

    def measure(share: int, shape: str, ref: str, path: str) -> None:
        r = b.scan_pair(b.read("curve.t", ref=ref), sp.read.parquet(path))
        pairs = sorted(v / q for v, q in zip(r["v_all"], r["p_all"]))
        row = {"share_pct": share, "shape": shape, "ratio": r["v"] / r["p"], "v_s": r["v"], "p_s": r["p"],
               "paired_median": pairs[len(pairs) // 2], "v_all": r["v_all"], "p_all": r["p_all"],
               "best": r["best"], "first_scan_ratio": r["warm_v"] / r["warm_p"], "equal": r["ok"],
               "objects": (r["metrics"] or {}).get("versionedObjectsScanned"),
               "bytes": (r["metrics"] or {}).get("versionedBytesScanned"), "loadavg": round(os.getloadavg()[0], 1)}
        rows.append(row)
        log(f"CURVE share {share}% {shape}: ratio {row['ratio']:.2f} (paired median {row['paired_median']:.2f}, "
            f"{r['best']}), first scan "
            f"{row['first_scan_ratio']:.2f}, equal {r['ok']}, objects {row['objects']}")
        with open(os.path.join(b.results_dir, "compaction_curve.json"), "w") as f:
            json.dump({"rows": n, "meta": b.meta, "curve": rows}, f, indent=2, default=str)

    p0 = os.path.join(b.pq, "curve-0")
    b.write_expected(G.base(sp, n), p0, n)
    measure(0, "SNAP only", "main", p0)
    done = 0
    for s in SHARES:
        while done < s:
            b.apply_changes(cs.changes(sp, done), "curve.t", message=f"churn {done}")
            done += 1
        p = os.path.join(b.pq, f"curve-{s}")
        b.write_expected(cs.expected(sp, s), p, n)
        measure(s, f"{s} DIFFs of 1%", "main", p)
        br = f"one{s}"
        b.create_branch("curve", br, base)
        b.apply_changes(cs.changes(sp, 0, commits=s), "curve.t", branch=br, message=f"one {s}")
        measure(s, "1 DIFF", br, p)
    print("| DIFF share | shape | head scan / Parquet (paired median) | medians | best-of | first scan | objects |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['share_pct']}% | {r['shape']} | {r['paired_median']:.2f} | {r['ratio']:.2f} | {r['best']} | "
              f"{r['first_scan_ratio']:.2f} | {r['objects']} |")
    sp.stop()


if __name__ == "__main__":
    main()
