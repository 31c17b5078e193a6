"""Workloads: the history table (load, churn with the default compaction, storage, scans, time travel, overwrite) and refs and log on a long history."""

from __future__ import annotations

import os
import time
from typing import Any, Callable, List

import _metastore as MS
import datagen as G
from common import fmt_b, fmt_s, log, median, parquet_bytes, timed
from suite import MS_resolve


class HistoryWorkloads:
    def history(self) -> None:
        """The N_h-row table: initial load, C commits of 0.1% churn with the default compaction, storage,
        head and time-travel scans, then a full-table overwrite with 0.1% changed."""
        sp, n, C = self.spark, self.args.hist_rows, self.args.hist_commits
        self.set_fragment_rows(n)
        self.state["scan_rows"] = n
        hs = G.Stream(n, max(10, n // 1000))
        b0 = self.objects_bytes()
        t_v, _ = timed(lambda: self.write_versioned(G.base(sp, n), "hist.t", pk="id", message="load"))
        # the objects the table refers to (the store deduplicates content: the main table's objects may be shared)
        lst = MS.object_stats(self.wh, MS.repo_object_ids(self.wh, "hist"))
        b1 = (b0[0] + sum(v["bytes"] for v in lst.values()), b0[1] + sum(v["objects"] for v in lst.values()))
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
        self.state["hist_commit_s"] = times
        compacted = MS.compacted_images(self.wh, "hist", "t")
        resnaps = [i + 1 for i in range(C) if MS_resolve(self, "hist", f"main~{C - i - 1}") in compacted]
        log(f"commits that compacted fragments (re-snapshot or DIFF consolidation at commit time): {resnaps}")

        # storage
        pch = os.path.join(self.pq, "hist-changes")
        hs.changes(sp, 0, C, with_op=False).coalesce(1).write.mode("overwrite").parquet(pch)
        ch_bytes = parquet_bytes(pch)[0]
        ids = MS.repo_object_ids(self.wh, "hist")
        st = MS.object_stats(self.wh, ids)
        stored = sum(v["bytes"] for v in st.values())  # every object the table's versions refer to
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

        self.blame_step(n, C, hs, r)

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

        # full-table overwrite with 0.1% of rows changed: three overwrites of the same head (the first on main,
        # which the bytes are counted on; two more on branches from the same head, each with other rows
        # changed), each followed by the Parquet overwrite of the same change; times are the medians
        def changed_rows(seed: int):
            return G.F.pmod(G.F.xxhash64(G.F.col("id"), G.F.lit(seed)), G.F.lit(1000)) == 0

        def modifier(seed: int):
            return lambda df: df.withColumn("a", G.F.when(changed_rows(seed), G.F.col("a") + 1).otherwise(G.F.col("a")))

        modify = modifier(4242)
        footer = self.per_file_overhead()
        pchg = os.path.join(self.pq, "ow-changed")
        sp.read.parquet(ph).filter(changed_rows(4242)).coalesce(1).write.mode("overwrite").parquet(pchg)
        chg_bytes = parquet_bytes(pchg)[0]
        n_changed = sp.read.parquet(pchg).count()
        before = MS_resolve(self, "hist", "main")
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
        times_v, times_p = [t_v], [t_p]
        for rep, seed in ((1, 4243), (2, 4244)):
            br = f"ow{rep}"
            self.create_branch("hist", br, before)
            m = modifier(seed)
            times_v.append(timed(lambda: self.write_versioned(m(self.read("hist.t", ref=br)), "hist.t", mode="overwrite",
                                                              branch=br, message="overwrite 0.1%"))[0])
            out = os.path.join(self.pq, f"ow-out{rep}")
            times_p.append(timed(lambda: m(sp.read.parquet(ph)).write.mode("overwrite").parquet(out))[0])
            if self.full_verify:
                ok_content = ok_content and G.checksum(self.read("hist.t", ref=br)) == G.checksum(sp.read.parquet(out))
        t_v, t_p = median(times_v), median(times_p)
        allow = 1.5 * chg_bytes + objs * footer
        ok = wrote <= allow and diff_rows == n_changed and ok_content
        self.add("overwrite", f"commit with overwrite of the full table ({n:,} rows) where 0.1% of rows changed",
                 t_v, t_p, t_v / t_p, "only changed rows written; time reported vs full Parquet overwrite", ok,
                 f"median of 3 overwrites of the same head with different rows changed (ours "
                 f"{', '.join(fmt_s(x) for x in times_v)}; Parquet {', '.join(fmt_s(x) for x in times_p)}); "
                 f"the first: wrote {fmt_b(wrote)} in {objs} objects ({diff_rows:,} DIFF rows for {n_changed:,} changed "
                 f"rows) vs Parquet full overwrite {fmt_b(full_bytes)} and Parquet(changed rows) {fmt_b(chg_bytes)} "
                 f"(allowed {fmt_b(allow)}); content {'= Parquet result' if ok_content else 'MISMATCH'}",
                 bytes=wrote, objects=objs, diff_rows=diff_rows, changed_rows=n_changed, parquet_full_bytes=full_bytes,
                 parquet_changed_bytes=chg_bytes, times_v=times_v, times_p=times_p)

    def blame_step(self, n: int, C: int, hs: Any, head_scan: Any) -> None:
        """Row blame of the history table's head (issue 37): every row's last commit, after C commits of 0.1%
        churn, against one full scan of the same head. Checked against the change stream: no key is touched
        twice, so each commit h<i> last changed exactly its updates and inserts, and the load the rest."""
        repo = self.repo_api("hist")
        if repo is None:
            log("blame: the Python package is not installed, no blame row")
            return

        def per_commit() -> Any:
            df = repo.blame("t").groupBy("_commit_message").count()
            return {r["_commit_message"]: r["count"] for r in df.collect()}

        timed(per_commit)  # warm-up
        runs = [timed(per_commit) for _ in range(3)]
        times = [t for t, _ in runs]
        got = runs[-1][1]
        expected = {f"h{i}": hs.u + hs.ins for i in range(C)}
        expected["load"] = n - C * (hs.u + hs.dl)
        ok = got == expected
        v = median(times)
        self.add("blame", f"blame of the {n:,}-row history table after {C} commits of 0.1% churn ({hs.c:,} rows "
                 f"each) vs one full scan", v, head_scan["p"], v / head_scan["v"],
                 "— (context: about one scan of the key column plus the DIFFs)", ok,
                 f"ratio = blame / our full scan of the same head ({fmt_s(head_scan['v'])}); Parquet column = the "
                 f"Parquet copy's full scan; median of 3 (`Repository.blame('t')` grouped by commit and collected: "
                 f"every row attributed); {len(expected)} commits, per-commit row counts "
                 f"{'= the change stream' if ok else 'MISMATCH'}",
                 times=times, expected_commits=len(expected))

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
                  if t_api else "engine log median of 3; ") + how,
                 api_s=t_api, engine_s=t_eng, commits=n_log, engine_commit_ms=eng_ms, fabricated=fab,
                 fabricate_s=t_fab, hash_check=hash_ok)
