"""Workloads on the N-row table's head: full scans, lookups, non-key filters, diffs."""

from __future__ import annotations

import os
from typing import Any, Dict

import _metastore as MS
import datagen as G
from common import fmt_b, fmt_s, log, median, force, timed
from suite import MS_resolve


class ScanWorkloads:
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
        tv = [timed(lambda: force(dv_all.filter(f"id = {key}")))[0] for key in keys]
        tp = [timed(lambda: force(dp_all.filter(f"id = {key}")))[0] for key in keys]
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
        1M-row table, since that diff must not grow with N. The changes are committed with before-images (write
        option ``beforeImages``, as the peers' tables have their change feeds on), so the diff reads only their
        DIFFs; for context, the scattered changes also without them (the diff looks the keys up in the loaded
        version), the commit time both ways, and the diffs compared whole (the path before the fast one), once each."""
        sp, n, k = self.spark, self.n, self.args.k
        if "main_base" not in self.state:
            self.main_load()
        self.set_fragment_rows(n)
        base = self.state["main_base"]
        ks = G.Stream(n, k)
        commits = {}
        for branch, before_images in (("dsc", True), ("dsn", False)):
            self.create_branch("bench", branch, base)
            commits[branch], _ = timed(lambda: self.apply_changes(ks.changes(sp, 7), "bench.t", branch=branch,
                                                                  message="diff bench: scattered keys",
                                                                  before_images=before_images))
        self.create_branch("bench", "dcl", base)
        self.apply_changes(G.clustered_changes(sp, n // 3, k), "bench.t", branch="dcl", message="diff bench: one key range",
                           before_images=True)
        expect_sc = {"update": ks.u, "delete": ks.dl, "insert": ks.ins}
        expect_cl = {"update": k - int(k * 0.2), "delete": int(k * 0.2)}
        sc = self.time_diff("bench", base, "dsc", expect_sc)
        sn = self.time_diff("bench", base, "dsn", expect_sc, whole=False)
        cl = self.time_diff("bench", base, "dcl", expect_cl)
        small = 1_000_000 if n > 1_000_000 else max(10_000, n // 10)
        if small == n:
            cl_small = cl
        else:
            self.set_fragment_rows(small)
            self.write_versioned(G.base(sp, small), "dm.t", pk="id", message="load")
            small_base = MS_resolve(self, "dm", "main")
            self.create_branch("dm", "dcl", small_base)
            self.apply_changes(G.clustered_changes(sp, small // 3, k), "dm.t", branch="dcl", message="one key range",
                               before_images=True)
            cl_small = self.time_diff("dm", small_base, "dcl", expect_cl)
            self.set_fragment_rows(n)
        recorded = (f"committed with before-images ({fmt_s(commits['dsc'])}; the same commit without them "
                    f"{fmt_s(commits['dsn'])}, one each)")
        for wid, label, r, target, limit, how in (
                ("diff_scattered", f"diff of {k:,} changes (scattered keys) in {n:,} rows, as share of one full scan", sc,
                 "≤ 0.5× full scan", 0.5, recorded),
                ("diff_scattered_lookup", f"diff of {k:,} changes (scattered keys) in {n:,} rows committed without "
                 "before-images (their rows before looked up), as share of one full scan", sn, "≤ 0.5× full scan", 0.5,
                 "committed without before-images: before-values looked up in the loaded version's SNAPs"),
                ("diff_clustered", f"diff of {k:,} changes (one key range) in {n:,} rows, as share of one full scan", cl,
                 "≤ 0.1× full scan", 0.1, "committed with before-images")):
            ratio = r["diff"] / r["scan"]
            whole = (f"; compared whole (before): {fmt_s(r['whole'])} = {r['whole'] / r['scan']:.2f}× the scan"
                     if r["whole"] is not None else "")
            self.add(wid, label, r["diff"], None, ratio, target, ratio <= limit and r["ok"],
                     f"{how}; ratio = diff ÷ full scan of the changed version ({fmt_s(r['scan'])}); diff median of 3 "
                     f"(all: {', '.join(fmt_s(x) for x in r['all'])}); rows {r['counts']} "
                     f"{'as expected' if r['ok'] else 'MISMATCH'}{whole}", scan_s=r["scan"], diff_all=r["all"],
                     whole_s=r["whole"], counts=r["counts"], commit_s=commits if wid.startswith("diff_scattered") else None)
        ratio = cl_small["diff"] / cl_small["scan"]
        grows = cl["diff"] / cl_small["diff"]
        self.add("diff_clustered_small", f"diff of {k:,} changes (one key range) in {small:,} rows (the same diff at "
                 f"{n:,} rows took {fmt_s(cl['diff'])})", cl_small["diff"], None, ratio,
                 f"does not grow with N: time at {n:,} ≤ 1.5× time at {small:,}", grows <= 1.5 and cl_small["ok"],
                 f"ratio = diff ÷ full scan of {small:,} rows ({fmt_s(cl_small['scan'])}); time at {n:,} ÷ time at "
                 f"{small:,} = {grows:.2f}; rows {cl_small['counts']} {'as expected' if cl_small['ok'] else 'MISMATCH'}; "
                 f"compared whole (before): {fmt_s(cl_small['whole'])}", scan_s=cl_small["scan"],
                 diff_all=cl_small["all"], whole_s=cl_small["whole"], growth=grows)

    def time_diff(self, repo: str, base: str, branch: str, expected: Dict[str, int], whole: bool = True) -> Dict[str, Any]:
        """Median of 3 timed diffs from ``base`` to ``branch`` (after an untimed one that checks the rows by change
        kind), a full scan of ``branch``, and, with ``whole``, one whole comparison (the path before the fast one)."""
        api = self.repo_api(repo)

        def diff():
            return api.diff("t", base, branch) if api is not None else self.bridge.diff(self.wh, f"{repo}.t", base, branch)
        counts = {r["_change"]: int(r["n"]) for r in diff().groupBy("_change").agg(G.F.count("*").alias("n")).collect()}
        times = [timed(lambda: force(diff()))[0] for _ in range(3)]
        dv = self.read(f"{repo}.t", ref=branch)
        force(dv)
        scans = [timed(lambda: force(dv))[0] for _ in range(max(2, self.scan_reps))]
        whole = timed(lambda: force(self.bridge.diff(self.wh, f"{repo}.t", base, branch, fast_path=False)))[0] if whole else None
        log(f"diff {repo} {branch}: {counts}, {fmt_s(median(times))} vs scan {fmt_s(median(scans))}, whole {fmt_s(whole)}")
        return {"diff": median(times), "all": times, "scan": median(scans), "whole": whole, "counts": counts,
                "ok": counts == expected}
