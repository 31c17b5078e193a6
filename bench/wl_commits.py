"""Workloads: warm-up, load of the N-row table, the k-row commit (every way), merge of a branch, churn commits."""

from __future__ import annotations

import os
from typing import Optional, Tuple

import _metastore as MS
import datagen as G
from common import fmt_b, fmt_s, log, median, force, parquet_bytes, timed
from suite import MS_resolve


class CommitWorkloads:
    def warmup(self) -> None:
        """Exercises every code path once on a small table (JIT, codegen, metastore, class loading)."""
        n = 200000
        self.set_fragment_rows(n)
        sp = self.spark
        st = G.Stream(n, 1000)
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
            G.checksum(df); force(df); force(df.filter("id = 5")); force(df.filter("a < 1000"))
        # a head of SNAP + DIFFs, scanned a few times on each side: the first scans of a process run before the JIT
        # has compiled the scan loops (a step run alone, --only, otherwise pays that in its first timed scan)
        self.apply_changes(st.changes(sp, 4), "warm.t", message="warm-up DIFF")
        self.await_compactions()
        for _ in range(3):
            for df in (self.read("warm.t"), sp.read.parquet(p)):
                force(df)
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

        t_feed: Optional[float] = None
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

        # Public API: upserts (no table read) then delete_where (finds the rows by key), 2 commits; and SQL MERGE
        # through the catalog (one commit). Measured like the feed row, the Parquet baseline and the peers' MERGE:
        # one untimed warm-up on its own branch (its bytes are the row's bytes: objects are content-addressed, so
        # the timed runs write the same files again), then the median of 3 runs, each on a fresh branch.
        # As for the feed row and the baseline, the input DataFrame (and the condition) is built before the timer.
        cond = "id IN (" + ",".join(map(str, ks.deleted_keys(1))) + ")"
        upserts_df = ks.upserts(sp, 1)

        def public(br: str) -> Tuple[float, float, int]:
            self.create_branch("bench", br, "main")
            t_up, _ = timed(lambda: self.write_versioned(upserts_df, "bench.t", upsert=True, branch=br,
                                                         message="k upserts"))
            t_del, deleted = timed(lambda: self.delete_where("bench", "t", cond, branch=br))
            return t_up, t_del, deleted

        b0 = self.objects_bytes()
        public("kcw2")
        b1 = self.objects_bytes()
        meta_after = MS.sizes(self.wh)
        runs = [public(br) for br in ("kc", "kcb", "kcc")]
        totals = [u + d for u, d, _ in runs]
        t_pub = median(totals)
        t_up, t_del, deleted = sorted(runs, key=lambda r: r[0] + r[1])[1]
        bytes_pub, objs_pub = b1[0] - b0[0], b1[1] - b0[1]
        verified, allow, ok = verdict(t_pub, bytes_pub, objs_pub, "kc", 1)
        # Issue 35's goal for this row: the two commits take at most twice the one-write commit of the same k changes
        # (the feed row above, measured in this run); without that row, the generic time target.
        if t_feed is not None:
            pub_target = "time ≤ 2× the one-write commit (row above); bytes ≤ 1.5× Parquet(k rows) + metadata"
            ok = t_pub <= 2 * t_feed and bytes_pub <= allow
            time_note = f"time target 2 × {fmt_s(t_feed)} = {fmt_s(2 * t_feed)} ({t_pub / t_feed:.2f}× the one-write commit)"
        else:
            pub_target, time_note = target, f"time target {fmt_s(time_target)}"
        self.add("k_commit_public", f"commit k={k:,} changed rows (upserts + deletes) into N rows — public API "
                 "(upsert write + delete_where: 2 commits)", t_pub, t_pq, t_pub / t_pq, pub_target, ok,
                 f"median of 3 runs after a warm-up (all: {', '.join(fmt_s(x) for x in totals)}); the median run: "
                 f"upsert commit {fmt_s(t_up)} + delete_where {fmt_s(t_del)} ({deleted} rows); {time_note}; wrote {fmt_b(bytes_pub)} in {objs_pub} objects vs Parquet(k rows) "
                 f"{fmt_b(pk_bytes)} → allowed {fmt_b(allow)} (1.5× + {objs_pub} × {fmt_b(footer)} per-object "
                 f"Parquet footer); bytes ratio {bytes_pub / pk_bytes:.2f}×; metastore +{fmt_b(meta_after - meta_before)}"
                 + content(verified),
                 upsert_s=t_up, delete_s=t_del, runs=runs, bytes=bytes_pub, objects=objs_pub,
                 parquet_k_bytes=pk_bytes, parquet_write_all=tps, footer_bytes=footer, verified=verified,
                 metastore_growth=meta_after - meta_before)

        def merge(br: str) -> float:
            self.create_branch("bench", br, "main")
            return timed(lambda: self.merge_changes(ks.changes(sp, 2), "bench", "t", br))[0]

        m0 = self.objects_bytes()
        t_merge_warm = merge("kc3w")
        m1 = self.objects_bytes()
        t_merges = [merge(br) for br in ("kc3", "kc3b", "kc3c")]
        t_merge = median(t_merges)
        bytes_m, objs_m = m1[0] - m0[0], m1[1] - m0[1]
        verified, allow, ok = verdict(t_merge, bytes_m, objs_m, "kc3", 2)
        self.add("k_commit_merge", f"commit k={k:,} changed rows (upserts + deletes) into N rows — SQL MERGE "
                 "through the catalog (1 commit)", t_merge, t_pq, t_merge / t_pq, target, ok,
                 f"median of 3 MERGEs after a warm-up (all: {', '.join(fmt_s(x) for x in t_merges)}; the warm-up, "
                 f"the session's first MERGE: {fmt_s(t_merge_warm)}); wrote {fmt_b(bytes_m)} in {objs_m} objects "
                 f"(allowed {fmt_b(allow)}); bytes ratio {bytes_m / pk_bytes:.2f}×; time target {fmt_s(time_target)}"
                 + content(verified),
                 merge_all=t_merges, merge_warm_s=t_merge_warm, bytes=bytes_m, objects=objs_m,
                 parquet_k_bytes=pk_bytes, verified=verified)

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
        self.transaction_k(r)

    def transaction_k(self, r) -> None:
        """One transaction writing k changed rows (change feed: upserts + deletes) into each of 3 tables vs the
        same 3 writes as separate commits. Tables: the N-row table and two copies of its first N/10 rows (the
        writes do not read the tables, so their size matters little). Median of 3, each on fresh branches."""
        if not hasattr(r, "transaction"):
            self.add("transaction_3", "transaction", None, None, None, "n/a", None, "no transaction in the python package")
            return
        sp, n, k = self.spark, self.n, self.args.k
        small = max(1000, n // 10)
        for t in ("t2", "t3"):
            self.write_versioned(G.base(sp, small), f"bench.{t}", pk="id", message=f"load {t}")
        ks = G.Stream(small, k)
        feeds = {t: ks.changes(sp, j) for j, t in enumerate(("t", "t2", "t3"))}
        t_tx, t_sep = [], []
        for i in range(3):
            for b in (f"tx{i}", f"ts{i}"):
                self.create_branch("bench", b, "main")

            def in_tx():
                with r.transaction(branch=f"tx{i}", message="3 tables") as tx:
                    for t, df in feeds.items():
                        tx.upsert(df.withColumn("_del", G.F.col("_vchange") == G.DELETE).drop("_vchange"), t,
                                  delete_column="_del")

            def separate():
                for t, df in feeds.items():
                    self.upsert_feed(df, f"bench.{t}", branch=f"ts{i}", message=f"{t} alone")
            t_tx.append(timed(in_tx)[0])
            t_sep.append(timed(separate)[0])
        same = all(G.checksum(self.read(f"bench.{t}", ref="tx0")) == G.checksum(self.read(f"bench.{t}", ref="ts0"))
                   for t in feeds) if self.full_verify else None
        tt, ts = median(t_tx), median(t_sep)
        self.add("transaction_3", f"one transaction writing k={k:,} changed rows into each of 3 tables vs the same 3 "
                 "writes as separate commits", tt, ts, tt / ts, "— (context: one image instead of three)", None,
                 f"transaction all {', '.join(fmt_s(x) for x in t_tx)}; separate all {', '.join(fmt_s(x) for x in t_sep)}"
                 + ("" if same is None else f"; content {'equal' if same else 'MISMATCH'}"),
                 tx_all=t_tx, separate_all=t_sep, content_equal=same)

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
