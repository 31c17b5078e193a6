"""Workload: the compaction policy with the default settings (issue 14): amortized bytes written per commit
at 1% churn, compaction included; the head scan after commits; commit latency p99 / median."""

from __future__ import annotations

import math
import os
from typing import List

import datagen as G
from common import fmt_b, fmt_s, log, median, parquet_bytes, timed


def _pct(xs: List[float], q: float) -> float:
    """The q-quantile (0..1) of xs, nearest rank: the ceil(q * n)-th smallest (p99 of 100 = the 99th)."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


class CompactionWorkloads:
    def await_compactions(self) -> None:
        """Waits until the driver's background compactions are done (the connector's awaitIdle)."""
        getattr(self.spark.sparkContext._jvm, "versioned.spark.api.VersionedApi").awaitCompactions(0)

    def compaction_step(self) -> None:
        """50 commits of 1% churn on a table of its own with the default compaction settings (background
        compaction): bytes written per commit amortized over the 50 commits (compaction included) vs a Parquet
        write of the changed rows; the head scan vs Parquet of the same content at checkpoints (after the
        head's own compaction, and right before the commits that consolidate, when chains are longest); then
        100 back-to-back commits of 1% churn on a table of N/10 rows for the commit latency p99 / median."""
        sp, n = self.spark, self.n
        commits = 50
        self.set_fragment_rows(n)
        self.await_compactions()
        cs = G.Stream(n, max(10, n // 100))
        self.write_versioned(G.base(sp, n), "comp.t", pk="id", message="load")
        self.await_compactions()
        rows = cs.changes(sp, 0, with_op=False).coalesce(1)
        p = os.path.join(self.pq, "comp-rows")
        rows.write.mode("overwrite").parquet(p)
        pq_b = parquet_bytes(p)[0]
        b0 = self.objects_bytes()
        checkpoints = {1, 9, 10, 19, 25, 29, 39, 49, 50}
        scans, times = [], []
        for i in range(commits):
            t, _ = timed(lambda: self.apply_changes(cs.changes(sp, i), "comp.t", message=f"c{i}"))
            times.append(t)
            if i + 1 in checkpoints:
                self.await_compactions()
                path = os.path.join(self.pq, "comp-head")
                self.write_expected(cs.expected(sp, i + 1), path, n)
                r = self.scan_pair(self.read("comp.t"), sp.read.parquet(path), reps=5)
                pairs = sorted(v / q for v, q in zip(r["v_all"], r["p_all"]))
                scans.append({"commit": i + 1, "ratio": r["v"] / r["p"], "paired_median": pairs[len(pairs) // 2],
                              "best": min(r["v_all"]) / min(r["p_all"]), "ok": r["ok"], "v": r["v"], "p": r["p"],
                              "objects": (r["metrics"] or {}).get("versionedObjectsScanned"),
                              "first_scan_ratio": r["warm_v"] / r["warm_p"], "v_all": r["v_all"], "p_all": r["p_all"]})
                log(f"compaction: commit {i + 1}: head scan {r['v'] / r['p']:.2f}x Parquet (paired median "
                    f"{scans[-1]['paired_median']:.2f}, best {scans[-1]['best']:.2f}), objects "
                    f"{scans[-1]['objects']}, equal {r['ok']}")
        self.await_compactions()
        b1 = self.objects_bytes()
        written = b1[0] - b0[0]
        per_commit = written / commits
        amp = per_commit / pq_b
        self.add("compaction_bytes", f"amortized bytes written per commit, {commits} commits of 1% churn ({cs.c:,} rows) "
                 "into N rows, compaction included (default settings)", None, None, amp,
                 "≤ 3× Parquet(changed rows)", amp <= 3.0,
                 f"{fmt_b(written)} in {b1[1] - b0[1]} objects over {commits} commits = {fmt_b(per_commit)} per commit vs "
                 f"Parquet(changed rows) {fmt_b(pq_b)}; commit median {fmt_s(median(times))}",
                 bytes=written, objects=b1[1] - b0[1], parquet_rows_bytes=pq_b, commit_s=times)
        worst = max(s["paired_median"] for s in scans)
        self.add("compaction_scan", f"head scan after commits of 1% churn with the default compaction (checkpoints "
                 f"{', '.join(str(s['commit']) for s in scans)} of {commits})", None, None, worst,
                 "≤ 1.2× Parquet at every checkpoint", worst <= 1.2 and all(s["ok"] for s in scans),
                 "per checkpoint (paired median of 5 / medians / best-of-5 / first scan; objects): " + "; ".join(
                     f"{s['commit']}: {s['paired_median']:.2f} / {s['ratio']:.2f} / {s['best']:.2f} / "
                     f"{s['first_scan_ratio']:.2f}; {s['objects']}" for s in scans)
                 + ("; content equal at every checkpoint" if all(s["ok"] for s in scans) else "; MISMATCH"),
                 checkpoints=scans)
        self.compaction_latency()
        self.compaction_latency(inline=True)

    def compaction_latency(self, commits: int = 100, inline: bool = False) -> None:
        """Commit latency p99 / median over back-to-back commits of 1% churn (default settings, compaction in the
        background), on a table of N/10 rows; with ``inline`` the same with compaction before the write returns
        (``spark.versioned.compaction.background=false``, as before), for context."""
        sp, n = self.spark, max(10000, self.n // 10)
        self.set_fragment_rows(n)
        cs = G.Stream(n, max(10, n // 100))
        table = "lat_inline.t" if inline else "lat.t"
        self.write_versioned(G.base(sp, n), table, pk="id", message="load")
        self.await_compactions()
        times = []
        if inline:
            sp.conf.set("spark.versioned.compaction.background", "false")
        try:
            for i in range(commits):
                times.append(timed(lambda: self.apply_changes(cs.changes(sp, i), table, message=f"l{i}"))[0])
        finally:
            sp.conf.unset("spark.versioned.compaction.background")
        self.await_compactions()
        ok = G.checksum(self.read(table)) == G.checksum(cs.expected(sp, commits)) if self.full_verify else None
        med, p99 = median(times), _pct(times, 0.99)
        how = "compaction inline (background=false), context" if inline else "default settings: compaction in the background"
        self.add("compaction_latency_inline" if inline else "compaction_latency",
                 f"commit latency p99 / median, {commits} back-to-back commits of 1% churn "
                 f"({cs.c:,} rows) into {n:,} rows ({how})", p99, med, p99 / med,
                 "— (context)" if inline else "p99 ≤ 2× median", None if inline else p99 <= 2 * med,
                 f"median {fmt_s(med)}, p90 {fmt_s(_pct(times, 0.9))}, p99 {fmt_s(p99)}, max {fmt_s(max(times))}"
                 + ("" if ok is None else f"; content {'verified' if ok else 'MISMATCH'}"),
                 commit_s=times, verified=ok)
