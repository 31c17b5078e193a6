"""The main benchmark's workloads, on one peer (``R.table``) and plain Parquet in the peer's session.

Row ids are the main benchmark's (bench/wl_*.py), so bench/peers_client.py can put each next to ours; the ratio
of each row is defined as ours is (peer ÷ its own Parquet baseline, or ÷ its own full scan for lookups and
diffs, or bytes for storage). Every scan and every commit sequence is checked against the expected content.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List

import datagen as G
import tables as TB
from common import force, log, median, timed

F = G.F


def fmt_b(x: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(x) < 1024 or unit == "GB":
            return f"{x:.0f} {unit}" if unit == "B" else f"{x:.1f} {unit}"
        x /= 1024.0
    return str(x)


def pq_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(path) for n in ns
               if n.endswith(".parquet") and not n.startswith("."))


def warmup(R) -> None:
    """Every path once on a small table (JIT, codegen, class loading, the peer's log/metadata code)."""
    sp, n = R.spark, 20000
    t = R.table("warm", change_feed=True)
    t.create(R.layout(G.base(sp, n), n))
    v0 = t.version()
    st = G.Stream(n, 100)
    t.merge(st.changes(sp, 0))
    p = R.write_expected(G.base(sp, n), "warm", n)
    for df in (t.read(), t.read(v0), sp.read.parquet(p)):
        G.checksum(df); force(df); force(df.filter("id = 5")); force(df.filter("a < 1000"))
    try:
        force(t.changes(v0, t.version()))
    except Exception as e:  # noqa: BLE001 - reported by the diff step
        log(f"warm-up: no changes between versions: {str(e).splitlines()[0][:200]}")
    t.restore(v0)
    if t.has_branches:
        t.create_branch("w1"); t.create_tag("w1t"); t.merge(st.changes(sp, 1), branch="w1"); t.fast_forward("w1")
    t.history_count()


def main_table(R) -> None:
    """N-row table: k-row commit (MERGE), 10 commits of 1% churn, scans, lookups, filters, time travel to the
    loaded version, and (Iceberg) merge of a branch by fast-forward."""
    sp, n, k, a = R.spark, R.n, R.args.k, R.args
    t = R.table("main")
    t.create(R.layout(G.base(sp, n), n))
    v0 = t.version()
    reps = R.scan_reps(n)

    # k changes: one MERGE; one untimed, then the median of 3 (distinct keys each time), content checked, restored
    ks = G.Stream(n, k)
    rows_df = ks.changes(sp, 0, with_op=False).coalesce(1)
    rows_df.write.mode("overwrite").parquet(os.path.join(R.pq, "k-warm"))
    tps = [timed(lambda: rows_df.write.mode("overwrite").parquet(os.path.join(R.pq, f"k-{i}")))[0] for i in range(3)]
    b0 = t.bytes()
    t.merge(ks.changes(sp, 0))
    wrote = t.bytes() - b0
    tks = [timed(lambda: t.merge(ks.changes(sp, i)))[0] for i in (1, 2, 3)]
    ok = G.checksum(t.read()) == G.checksum(ks.expected(sp, 4))
    tk, tp = median(tks), median(tps)
    R.add("k_commit", tk, tp, tk / tp, ok,
          f"MERGE of {k:,} changes ({ks.u} updates, {ks.dl} deletes, {ks.ins} inserts), median of 3 after one untimed "
          f"(all {', '.join(f'{x:.2f} s' for x in tks)}); wrote {fmt_b(wrote)} vs Parquet(k rows) "
          f"{fmt_b(pq_bytes(os.path.join(R.pq, 'k-0')))}; content after the 4 MERGEs "
          f"{'= expected' if ok else 'MISMATCH'}", commit_all=tks, parquet_all=tps, bytes=wrote)
    t.restore(v0)

    # 10 commits of 1% churn, no compaction (as ours, whose compaction is raised for this table)
    cs = G.Stream(n, max(10, n // 100))
    times, sizes = [], []
    for i in range(a.churn_commits):
        b = t.bytes()
        times.append(timed(lambda: t.merge(cs.changes(sp, i)))[0])
        sizes.append(t.bytes() - b)
    rows = cs.changes(sp, 0, with_op=False)
    pc = os.path.join(R.pq, "churn-rows")
    rows.coalesce(1).write.mode("overwrite").parquet(pc)
    t_pq = median([timed(lambda: rows.coalesce(1).write.mode("overwrite").parquet(pc))[0] for _ in range(2)])
    R.add("churn_commit", median(times), t_pq, median(times) / t_pq, None,
          f"MERGE of {cs.c:,} changes, median of {len(times)} (min {min(times):.2f} s, max {max(times):.2f} s); "
          f"{fmt_b(median(sizes))} written per commit vs Parquet(changed rows) {fmt_b(pq_bytes(pc))}; content "
          "checked by the scan below", commit_s=times, bytes=sizes)

    ph = R.write_expected(cs.expected(sp, a.churn_commits), "main-head", n)
    dv, dp = t.read(), sp.read.parquet(ph)
    r = R.scan_pair(dv, dp, reps)
    R.add_scan("scan_head_10", r, f"after {a.churn_commits} MERGE commits of 1% churn, no compaction")
    full = r["v"]

    keys = [int(n * f) + 17 for f in (0.05, 0.27, 0.5, 0.73, 0.95)]
    ok = all(sorted(map(tuple, dv.filter(f"id = {x}").collect())) == sorted(map(tuple, dp.filter(f"id = {x}").collect()))
             for x in keys[:2])
    tv = [timed(lambda: force(dv.filter(f"id = {x}")))[0] for x in keys]
    tpl = [timed(lambda: force(dp.filter(f"id = {x}")))[0] for x in keys]
    R.add("point_lookup", median(tv), median(tpl), median(tv) / full, ok,
          f"ratio = lookup ÷ its own full scan ({full:.2f} s); median of {len(keys)} keys; vs Parquet lookup "
          f"{median(tv) / median(tpl):.1f}×; rows {'match' if ok else 'MISMATCH'}", v_all=tv, p_all=tpl)
    lo = n // 3
    cond = f"id BETWEEN {lo} AND {lo + max(1, n // 1000) - 1}"
    r = R.scan_pair(dv.filter(cond), dp.filter(cond), max(3, reps))
    R.add("range_lookup", r["v"], r["p"], r["v"] / full, r["ok"],
          f"ratio = range scan ÷ its own full scan; {r['rows']:,} rows {'match' if r['ok'] else 'MISMATCH'}; vs "
          f"Parquet range {r['v'] / r['p']:.1f}× ({r['best']})", v_all=r["v_all"], p_all=r["p_all"])
    mid = n // 2
    for wid, c in (("filter_b", f"b BETWEEN {10 * mid} AND {10 * (mid + n // 100)}"), ("filter_a", "a < 10000")):
        R.add_scan(wid, R.scan_pair(dv.filter(c), dp.filter(c), 1), f"`{c}`")

    pb = R.write_expected(G.base(sp, n), "main-base", n)
    R.add_scan("scan_base_snap", R.scan_pair(t.read(v0), sp.read.parquet(pb), reps),
               f"time travel to the loaded version ({a.churn_commits} commits and a restore back)")

    if not t.has_branches:
        R.na("merge_k", f"{t.label} has no branches, so no merge of branches")
        return
    t.create_branch("mt")
    ch = ks.changes(sp, 5)
    t_direct, _ = timed(lambda: t.merge(ch, branch="mt"))
    t_ff, _ = timed(lambda: t.fast_forward("mt"))
    same = G.checksum(t.read()) == G.checksum(sp.table(t.target("mt")))
    R.add("merge_k", t_ff, None, None, same,  # no ratio: a fast-forward is not the three-way merge ours times
          f"fast-forward only, vs {t_direct:.2f} s for the MERGE commit of the k rows into the branch "
          "(`fast_forward`: main has no commits of its own since the branch); Iceberg cannot merge diverged "
          "branches, which is what ours measures; "
          f"main after it {'= the branch' if same else 'MISMATCH'}")


def time_diff(R, t, start, end, expected: Dict[str, int]) -> Dict[str, Any]:
    counts = {r["_kind"]: int(r["count"]) for r in t.changes(start, end).groupBy("_kind").count().collect()}
    times = [timed(lambda: force(t.changes(start, end)))[0] for _ in range(3)]
    dv = t.read()
    force(dv)
    scans = [timed(lambda: force(dv))[0] for _ in range(max(2, R.scan_reps(R.n)))]
    return {"diff": median(times), "all": times, "scan": median(scans), "counts": counts, "ok": counts == expected}


def diffs(R) -> None:
    """Diff of k changes (scattered keys, then one key range) between two versions of an N-row table: Delta's
    change data feed (enabled at creation), Iceberg's changelog view (updates computed from the key)."""
    sp, n, k = R.spark, R.n, R.args.k
    t = R.table("diff", change_feed=True)
    t.create(R.layout(G.base(sp, n), n))
    v0 = t.version()
    ks = G.Stream(n, k)
    t.merge(ks.changes(sp, 7))
    try:
        sc = time_diff(R, t, v0, t.version(), {"update": ks.u, "delete": ks.dl, "insert": ks.ins})
    except Exception as e:  # noqa: BLE001 - a limit of the peer, not an error of the benchmark
        if "not supported" not in str(e):
            raise
        for wid in ("diff_scattered", "diff_clustered"):
            R.na(wid, f"the changelog view cannot read the delete files that merge-on-read writes "
                      f"({str(e).splitlines()[0][:160]})")
        return
    t.restore(v0)
    v2 = t.version()
    t.merge(G.clustered_changes(sp, n // 3, k))
    cl = time_diff(R, t, v2, t.version(), {"update": k - int(k * 0.2), "delete": int(k * 0.2)})
    how = ("change data feed (`readChangeFeed`, enabled on this table at creation)" if t.label == "Delta" else
           "changelog view (`create_changelog_view` with identifier_columns = id)")
    for wid, r in (("diff_scattered", sc), ("diff_clustered", cl)):
        R.add(wid, r["diff"], r["scan"], r["diff"] / r["scan"], r["ok"],
              f"{how}; ratio = diff ÷ its own full scan ({r['scan']:.2f} s); median of 3 (all "
              f"{', '.join(f'{x:.2f} s' for x in r['all'])}); rows {r['counts']} "
              f"{'as expected' if r['ok'] else 'MISMATCH'}", diff_all=r["all"], counts=r["counts"])


def history(R) -> None:
    """N_h-row table: load, C commits of 0.1% churn (MERGE), storage, head scan, time travel C back, overwrite of
    the whole table with 0.1% changed; refs and log on it."""
    sp, nh, C = R.spark, R.args.hist_rows, R.args.hist_commits
    t = R.table("hist")
    df = R.layout(G.base(sp, nh), nh)
    t_v, _ = timed(lambda: t.create(df))
    pb = os.path.join(R.pq, "hist-base")
    t_p, _ = timed(lambda: df.write.mode("overwrite").parquet(pb))
    v0, base_bytes, loaded = t.version(), pq_bytes(pb), t.bytes()
    R.add("initial_load", t_v, t_p, t_v / t_p, None,
          f"create + append of {nh:,} rows sorted by key in {R.frags(nh)} files; {fmt_b(loaded)} vs Parquet "
          f"{fmt_b(base_bytes)}; content checked by the time-travel scan below")
    hs = G.Stream(nh, max(10, nh // 1000))
    times = []
    for i in range(C):
        times.append(timed(lambda: t.merge(hs.changes(sp, i)))[0])
        if (i + 1) % 10 == 0:
            log(f"history commit {i + 1}/{C}: last {times[-1]:.2f} s")
    pch = os.path.join(R.pq, "hist-changes")
    hs.changes(sp, 0, C, with_op=False).coalesce(1).write.mode("overwrite").parquet(pch)
    ch_bytes, stored = pq_bytes(pch), t.bytes()
    R.add("storage", None, None, stored / (base_bytes + ch_bytes), None,
          f"ratio of bytes: data files {fmt_b(stored)} (every version kept: no VACUUM / expire_snapshots) vs Parquet "
          f"base {fmt_b(base_bytes)} + changed rows {fmt_b(ch_bytes)}; MERGE median {median(times):.2f} s, "
          f"max {max(times):.2f} s", commit_s=times, stored_bytes=stored)
    ph = R.write_expected(hs.expected(sp, C), "hist-head", nh)
    reps = R.scan_reps(nh)
    R.add_scan("scan_head_100", R.scan_pair(t.read(), sp.read.parquet(ph), reps), f"after {C} MERGE commits of 0.1% churn")
    R.add_scan("time_travel", R.scan_pair(t.read(v0), sp.read.parquet(pb), reps), f"the version {C} commits back")

    changed = F.pmod(F.xxhash64(F.col("id"), F.lit(4242)), F.lit(1000)) == 0
    modify = lambda d: d.withColumn("a", F.when(changed, F.col("a") + 1).otherwise(F.col("a")))  # noqa: E731
    pchg = os.path.join(R.pq, "ow-changed")
    sp.read.parquet(ph).filter(changed).coalesce(1).write.mode("overwrite").parquet(pchg)
    c0 = t.bytes()
    t_o, _ = timed(lambda: t.overwrite(modify(t.read())))
    wrote = t.bytes() - c0
    pow_ = os.path.join(R.pq, "ow-out")
    t_po, _ = timed(lambda: modify(sp.read.parquet(ph)).write.mode("overwrite").parquet(pow_))
    ok = G.checksum(t.read()) == G.checksum(sp.read.parquet(pow_))
    R.add("overwrite", t_o, t_po, t_o / t_po, ok,
          f"full overwrite: wrote {fmt_b(wrote)} (the whole table) vs Parquet(changed rows) {fmt_b(pq_bytes(pchg))}; "
          f"content {'= Parquet result' if ok else 'MISMATCH'}", bytes=wrote)
    refs_and_log(R, t, median(times))


def refs_and_log(R, t, commit_s: float) -> None:
    reps, commits = R.args.ref_reps, t.history_count()
    where = (f"on the history table ({commits} commits; not 1e5: at about "
             f"{commit_s:.1f} s per MERGE commit, "
             "1e5 commits would take more than a day)")

    def bench_op(fn: Callable[[int], Any]) -> List[float]:
        fn(-1)
        return [timed(lambda: fn(i))[0] for i in range(reps)]
    if t.has_branches:
        for wid, fn, how in (("create_branch", lambda i: t.create_branch(f"b{i + 1}"), "ALTER TABLE … CREATE BRANCH"),
                             ("create_tag", lambda i: t.create_tag(f"t{i + 1}"), "ALTER TABLE … CREATE TAG"),
                             ("resolve_a_ref", lambda i: t.version(), "snapshot id of main from the `refs` table")):
            ts = bench_op(fn)
            R.add(wid, median(ts), None, None, None, f"{how}, median of {reps} {where}", all=ts)
    else:
        R.na("create_branch", f"{t.label} has no branches")
        R.na("create_tag", f"{t.label} has no tags")
        ts = bench_op(lambda i: t.version())
        R.add("resolve_a_ref", median(ts), None, None, None,
              f"no refs: the latest version (`DESCRIBE HISTORY … LIMIT 1`), median of {reps} {where}", all=ts)
    ts = [timed(lambda: t.history_count())[0] for _ in range(3)]
    R.add("log", median(ts), None, None, None,
          f"{'`DESCRIBE HISTORY`' if t.label == 'Delta' else 'the `history` metadata table'} counted, median of 3 "
          f"{where}", all=ts)


def remotes(R) -> None:
    R.na("clone_lazy", "no clone, push or fetch between repositories (one table in one location)")


def streaming(R) -> None:
    """The streaming workload (bench/wl_streaming.py) with the peer's sinks: its streaming sink's append, and
    ``foreachBatch`` + MERGE for the upsert batches, on the same rows and batches as ours."""
    import wl_streaming as S
    sp, n = R.spark, R.n

    def starter(t, kind: str, cs, b: int):
        def upsert(df, batch_id):
            df.createOrReplaceTempView("peer_stream_changes")  # the batch's own session (a clone of R.spark)
            df.sparkSession.sql(f"MERGE INTO {t.target(None)} " + TB.MERGE_BODY.format(src="peer_stream_changes"))

        def start(cp: str):
            w = S.source(sp, cs, b, with_op=kind == "upsert").writeStream.option("checkpointLocation", cp)
            if kind == "upsert":
                return w.foreachBatch(upsert).start()
            if R.args.system == "delta":
                return w.format("delta").start(t.path)
            return w.format("iceberg").outputMode("append").toTable(t.ref)
        return start

    for kind, size, wanted in S.warmup_configs(R.args):  # untimed, as ours (S.warmup_configs)
        b = S.batches_for(S.WARM_ROWS, size, kind, wanted)
        t = R.table(f"warm_{kind}_{size}")
        t.create(R.layout(G.base(sp, S.WARM_ROWS), S.WARM_ROWS))
        log(f"streaming warm-up: {b} batches of {size:,} ({kind}) into {t.ref}")
        S.run_query(sp, starter(t, kind, S.stream_of(S.WARM_ROWS, size, kind), b), b, R.args.work,
                    timeout_s=R.args.stream_timeout)
    for kind, size, wanted in S.configs(R.args):
        b = S.batches_for(n, size, kind, wanted)
        cs = S.stream_of(n, size, kind)
        t = R.table(f"{kind}_{size}")
        t.create(R.layout(G.base(sp, n), n))
        log(f"streaming: {b} batches of {size:,} ({kind}) into {t.ref}")
        s = S.stats(S.run_query(sp, starter(t, kind, cs, b), b, R.args.work, timeout_s=R.args.stream_timeout))
        path = R.write_expected(cs.expected(sp, b), f"stream-{kind}-{size}", n)
        wid = f"stream_{kind}_{size}"
        if size <= 1000:
            r = R.scan_pair(t.read(), sp.read.parquet(path), R.scan_reps(n))
            ok = r["ok"]
            R.add_scan(wid + "_scan", r, f"after {b} stream batches ({kind}); no OPTIMIZE / compaction run")
        else:
            ok = G.checksum(t.read()) == G.checksum(sp.read.parquet(path))
        R.add(wid, s["p50"], None, s["p99"] / s["p50"], ok,
              S.note(s, kind, size, n) + ("; foreachBatch + MERGE" if kind == "upsert" else "; streaming sink append")
              + f"; content {'= expected' if ok else 'MISMATCH'}", **s)
