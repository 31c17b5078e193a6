"""Workload: a Structured Streaming query into a table (issue 34), ours and the peers' (bench/peers/workloads.py
``streaming`` runs the same functions with Delta's and Iceberg's sinks).

Input: a ``rate-micro-batch`` source (exactly ``rowsPerBatch`` rows per micro-batch, numbered by ``value``) mapped
to rows by ``datagen.Stream.changes_of``, so every system gets the same rows in the same batches, and the expected
table after B batches is generated independently (``Stream.expected``). Two kinds of batch into a table of N rows:

* **upsert**: 80% updates of existing keys, 20% new keys (no key twice in the stream); ours is the sink with
  ``upsert=true``; the peers' is ``foreachBatch`` + ``MERGE`` (how their users upsert from a stream);
* **append**: new keys only; ours is the sink's append into the keyed table (a key that exists would be an error),
  the peers' their streaming sink's append.

Per configuration (kind, trigger size): sustained rows/s (rows of the B batches / wall time from the start of
batch 0 to the end of batch B-1, from the query's progress reports), per-batch latency p50 / p99 of the whole batch
(``triggerExecution``) and of the sink's part (``addBatch``: staging and commit), batch 0 excluded (the query's
start); then the content is compared with the expected table, and for the 1,000-row trigger the head scan is timed
against plain Parquet of the same rows (sorted by key, one file per fragment).
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional

import datagen as G
from common import fmt_s, log

KINDS = {"upsert": (0.8, 0.0), "append": (0.0, 0.0)}  # (updates, deletes) per batch; the rest are new keys


def pct(xs: List[float], q: float) -> float:
    """The q-quantile (0..1) of xs, nearest rank: the ceil(q * n)-th smallest (p99 of 100 = the 99th)."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def stream_of(n: int, size: int, kind: str) -> G.Stream:
    upd, dl = KINDS[kind]
    return G.Stream(n, size, upd_frac=upd, del_frac=dl)


def batches_for(n: int, size: int, kind: str, wanted: int) -> int:
    """The batches that fit: an upsert stream touches each existing key at most once."""
    cs = stream_of(n, size, kind)
    return wanted if cs.u + cs.dl == 0 else max(1, min(wanted, n // (cs.u + cs.dl)))


def source(spark, cs: G.Stream, batches: int, with_op: bool):
    """The stream's rows: batch b holds changes b * c .. (b + 1) * c - 1 of ``cs``; after batch ``batches - 1`` the
    source still ticks (it is endless), with no rows."""
    df = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", cs.c).option("numPartitions", 2)
          .load().filter(G.F.col("value") < cs.c * batches))
    return cs.changes_of(df, "value", with_op=with_op)


def run_query(spark, start: Callable[[str], Any], batches: int, work: str, timeout_s: float) -> List[Dict[str, Any]]:
    """Starts the query (``start(checkpoint)``, a new directory under ``work``), stops it once batch ``batches - 1`` is done, and returns the
    progress reports of batches 0 .. batches-1."""
    spark.conf.set("spark.sql.streaming.numRecentProgressUpdates", str(batches + 100))
    q = start(tempfile.mkdtemp(prefix="stream-cp-", dir=work))
    t0 = time.monotonic()
    try:
        while True:
            lp = q.lastProgress
            if lp and lp["batchId"] >= batches - 1:
                break
            if not q.isActive:
                raise RuntimeError(f"the query stopped: {q.exception()}")
            if time.monotonic() - t0 > timeout_s:
                raise RuntimeError(f"timeout after {timeout_s:.0f} s at batch {lp and lp['batchId']}")
            time.sleep(0.05)
    finally:
        q.stop()
    progs = {p["batchId"]: p for p in q.recentProgress if p["batchId"] < batches}
    if len(progs) != batches:
        raise RuntimeError(f"progress of {len(progs)} of {batches} batches")
    return [progs[b] for b in range(batches)]


def _ts(p: Dict[str, Any]) -> float:
    return _dt.datetime.strptime(p["timestamp"], "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def stats(progs: List[Dict[str, Any]]) -> Dict[str, Any]:
    """rows/s over all batches; latency percentiles without batch 0 (the query's start)."""
    rows = sum(int(p["numInputRows"]) for p in progs)
    wall = _ts(progs[-1]) + progs[-1]["durationMs"]["triggerExecution"] / 1000 - _ts(progs[0])
    trig = [p["durationMs"]["triggerExecution"] / 1000 for p in progs[1:]] or [0.0]
    add = [p["durationMs"].get("addBatch", 0) / 1000 for p in progs[1:]] or [0.0]
    return {"rows": rows, "wall_s": wall, "rows_per_s": rows / wall if wall > 0 else None,
            "p50": pct(trig, 0.5), "p99": pct(trig, 0.99), "max": max(trig),
            "add_p50": pct(add, 0.5), "add_p99": pct(add, 0.99), "batches": len(progs),
            "first_batch_s": progs[0]["durationMs"]["triggerExecution"] / 1000, "trigger_s": trig, "add_s": add,
            "start_ts": [_ts(p) for p in progs[1:]], "phases_ms": [dict(p["durationMs"]) for p in progs[1:]]}


def note(s: Dict[str, Any], kind: str, size: int, n: int) -> str:
    return (f"{s['batches']} batches of {size:,} rows ({kind}) into {n:,} rows: {s['rows_per_s']:,.0f} rows/s "
            f"sustained; batch p50 {fmt_s(s['p50'])}, p99 {fmt_s(s['p99'])}, max {fmt_s(s['max'])}; sink (addBatch) "
            f"p50 {fmt_s(s['add_p50'])}, p99 {fmt_s(s['add_p99'])}; batch 0 {fmt_s(s['first_batch_s'])} (excluded)")


def configs(args) -> List[tuple]:
    """(kind, trigger size, batches wanted) of a run."""
    out = []
    for size in [int(x) for x in str(args.stream_triggers).split(",") if x.strip()]:
        for kind in [k for k in str(args.stream_kinds).split(",") if k.strip()]:
            out.append((kind, size, args.stream_batches if size <= 1000 else args.stream_large_batches))
    return out


WARM_ROWS = 200_000  # rows of the warm-up streams' tables


def warmup_configs(args) -> List[tuple]:
    """(kind, trigger size, batches) of the untimed warm-up streams, one per configuration, on a table of
    ``WARM_ROWS`` rows: ``--stream-warmup-batches`` at a trigger of up to 1,000 rows, 3 at larger ones (0: none).
    The first micro-batches of a process run before the JIT has compiled the micro-batch path (the sink's and
    Spark's own: source, planning, checkpoint) and take 2-3 times as long as the rest; the timed streams measure
    the steady state, as the other workloads do after the warm-up step."""
    w = args.stream_warmup_batches
    return [(kind, size, w if size <= 1000 else min(w, 3)) for kind, size, _ in configs(args) if w > 0]


def add_stream_args(ap) -> None:
    """The streaming workload's options, the same in bench/run.py and the peers' runner."""
    ap.add_argument("--stream-triggers", default="1000,100000", help="rows per micro-batch (default 1000,100000)")
    ap.add_argument("--stream-kinds", default="upsert,append", help="kinds of batch: upsert,append (default both)")
    ap.add_argument("--stream-batches", type=int, default=1000,
                    help="micro-batches at a trigger of up to 1,000 rows (default 1,000)")
    ap.add_argument("--stream-large-batches", type=int, default=10,
                    help="micro-batches at larger triggers (default 10; an upsert stream is capped at N / updates)")
    ap.add_argument("--stream-warmup-batches", type=int, default=50,
                    help="untimed micro-batches per configuration before the timed streams, on a small table "
                         "(default 50 at a trigger of up to 1,000 rows, 3 at larger ones; 0: none)")
    ap.add_argument("--stream-timeout", type=float, default=3600, help="seconds per streaming query before it fails")


def stream_argv(args) -> List[str]:
    """The options to pass on to the peers' runner (``--peers-stream-batches`` replaces ``--stream-batches``)."""
    batches = args.peers_stream_batches or args.stream_batches
    return ["--stream-triggers", str(args.stream_triggers), "--stream-kinds", str(args.stream_kinds),
            "--stream-batches", str(batches), "--stream-large-batches", str(args.stream_large_batches),
            "--stream-timeout", str(args.stream_timeout), "--stream-warmup-batches", str(args.stream_warmup_batches)]


class StreamingWorkloads:
    def streaming_step(self) -> None:
        """Each configuration on a table of its own: N rows loaded, then the stream into it with the sink."""
        sp, n = self.spark, self.n
        for kind, size, wanted in warmup_configs(self.args):  # untimed (warmup_configs)
            b = batches_for(WARM_ROWS, size, kind, wanted)
            table = f"warm.stream_{kind}_{size}"
            self.set_fragment_rows(WARM_ROWS)
            self.write_versioned(G.base(sp, WARM_ROWS), table, pk="id", message="load")
            log(f"streaming warm-up: {b} batches of {size:,} ({kind}) into {table}")
            run_query(sp, self._stream_start(table, kind, stream_of(WARM_ROWS, size, kind), b), b, self.work,
                      timeout_s=self.args.stream_timeout)
        self.await_compactions()
        self.set_fragment_rows(n)
        try:  # each compaction's INFO line in the run's log, to set against the batches' start times (start_ts)
            jvm = sp.sparkContext._jvm
            jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
                "versioned.spark.write.Compactor$", jvm.org.apache.logging.log4j.Level.INFO)
        except Exception as e:  # noqa: BLE001
            log(f"compaction log lines not enabled: {e}")
        for kind, size, wanted in configs(self.args):
            b = batches_for(n, size, kind, wanted)
            cs = stream_of(n, size, kind)
            table = f"stream.{kind}_{size}"
            self.write_versioned(G.base(sp, n), table, pk="id", message="load")
            self.await_compactions()
            log(f"streaming: {b} batches of {size:,} ({kind}) into {table}")

            s = stats(run_query(sp, self._stream_start(table, kind, cs, b), b, self.work,
                                timeout_s=self.args.stream_timeout))
            self.await_compactions()
            path = os.path.join(self.pq, f"stream-{kind}-{size}")
            self.write_expected(cs.expected(sp, b), path, n)
            wid = f"stream_{kind}_{size}"
            if size <= 1000:
                r = self.scan_pair(self.read(table), sp.read.parquet(path))
                ok = r["ok"]
                ratio = r["v"] / r["p"]
                self.add(wid + "_scan", f"head scan after {b} stream batches of {size:,} rows ({kind}) into {n:,} rows",
                         r["v"], r["p"], ratio, "≤ 1.2× Parquet", ok and ratio <= 1.2,
                         f"{'= independent Parquet copy' if ok else 'MISMATCH'}; {r['best']}; objects "
                         f"{(r['metrics'] or {}).get('versionedObjectsScanned')}; first scan "
                         f"{r['warm_v'] / r['warm_p']:.2f}×; compactions awaited", v_all=r["v_all"], p_all=r["p_all"])
            else:
                ok = G.checksum(self.read(table)) == G.checksum(sp.read.parquet(path))
            goal = kind == "upsert" and size <= 1000
            passed = (ok and s["p99"] <= 2 * s["p50"] and (s["p50"] < 0.3 or n < 10_000_000)) if goal else None
            self.add(wid, f"stream batch latency p99 / p50, {size:,}-row {kind} batches into {n:,} rows",
                     s["p50"], None, s["p99"] / s["p50"],
                     "p99 ≤ 2× p50; p50 < 0.3 s at N = 10M" if goal else "— (rows/s vs the peers)", passed,
                     note(s, kind, size, n) + f"; content {'= expected' if ok else 'MISMATCH'}", ok=ok, **s)

    def _stream_start(self, table: str, kind: str, cs: G.Stream, b: int) -> Callable[[str], Any]:
        """The function that starts our sink's query of ``b`` batches of ``cs`` into ``table``, given a checkpoint."""
        def start(cp: str):
            w = (source(self.spark, cs, b, with_op=False).writeStream.format("versioned")
                 .option("checkpointLocation", cp).option("upsert", str(kind == "upsert").lower()))
            return w.start(table)
        return start


METRICS = [("sustained rows/s", "rows_per_s", True), ("batch p50", "p50", False), ("batch p99", "p99", False),
           ("sink (addBatch) p50", "add_p50", False), ("p99 / p50", "p99_p50", False)]


def _val(r: Dict[str, Any], key: str) -> Optional[float]:
    d = r.get("details", {})
    if key == "p99_p50":
        return d["p99"] / d["p50"] if d.get("p50") else None
    if key == "scan":
        return r.get("ratio")
    return d.get(key)


def table(rows: List[Dict[str, Any]], labels: List[str]) -> List[str]:
    """Ours next to each peer, one line per metric of each configuration; 'ahead' = better than the best peer."""
    lines = ["", "## Streaming: ours vs the peers", "",
             "| configuration | metric | us | " + " | ".join(labels) + " | best peer | ahead of it |",
             "|---|---|---|" + "---|" * len(labels) + "---|---|"]

    def fmt(v: Optional[float], key: str) -> str:
        if v is None:
            return "—"
        return f"{v:,.0f}" if key == "rows_per_s" else (f"{v:.2f}" if key in ("p99_p50", "scan") else fmt_s(v))

    for r in rows:
        if not r["id"].startswith("stream_"):
            continue
        scan = r["id"].endswith("_scan")
        metrics = [("head scan / Parquet", "scan", False)] if scan else METRICS
        peers = r.get("peers", {})
        for name, key, higher in metrics:
            us = _val(r, key)
            pv = {lb: (None if peers.get(lb, {}).get("na") or peers.get(lb, {}).get("ok") is False
                       else _val(peers[lb], key)) if lb in peers else None for lb in labels}
            got = [v for v in pv.values() if v is not None]
            best = (max(got) if higher else min(got)) if got else None
            ahead = "—" if best is None or us is None else ("yes" if (us > best if higher else us < best) else "**no**")
            cells = " | ".join("n/a" if peers.get(lb, {}).get("na") else fmt(pv[lb], key) for lb in labels)
            lines.append(f"| `{r['id']}` | {name} | {fmt(us, key)} | {cells} | {fmt(best, key)} | {ahead} |")
    return lines
