"""Where the slow micro-batches of a streaming run go: each batch of `bench/run.py --streaming` set beside the JIT
compiler's work and the GC pauses of the same driver JVM (issue 34, the p99 / p50 row). Usage:

  VERSIONED_JAR=J python3 bench/run.py --streaming ... --results DIR --driver-java-options \\
    "-Xlog:gc*,safepoint:file=DIR/gc.log:time,uptime:filecount=0 -XX:+UnlockDiagnosticVMOptions \\
     -XX:+LogCompilation -XX:LogFile=DIR/jit.log"
  python3 bench/prof/stream_jit.py DIR

It prints, per window of 100 batches, the median batch and its phases (Spark's `queryPlanning`, the sink's
`addBatch`), the batches over twice the run's median, and the compile tasks started; then, for the fastest 200
batches, the middle 100 and the slowest 20, the compiler threads' busy time as a share of the batch's wall time
(summed over the compiler threads: 1.0 = one core compiling for the whole batch) and the GC pauses inside them.
LogCompilation's time stamps are seconds since the JVM started; the JVM's start is read off the GC log, whose lines
carry both the wall clock and that uptime.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import statistics as st
import sys
from typing import List, Tuple


def batches(results: str) -> Tuple[List[float], List[float], List[dict], float, float]:
    """Each batch's duration, start and phases, and the benchmark's own p50 and p99 of the durations."""
    d = json.load(open(results))
    w = next(w for w in d["workloads"] if w["id"].startswith("stream_") and "trigger_s" in w.get("details", {}))
    det = w["details"]
    return det["trigger_s"], det["start_ts"], det["phases_ms"], det["p50"], det["p99"]


def jvm_start(gc_log: str) -> float:
    for line in open(gc_log):
        m = re.match(r"\[(\d{4}-\d\d-\d\dT[\d:.]+)[+-]\d{4}\]\[([\d.]+)s\]", line)
        if m:
            wall = datetime.datetime.strptime(m.group(1)[:23], "%Y-%m-%dT%H:%M:%S.%f")
            return wall.replace(tzinfo=datetime.timezone.utc).timestamp() - float(m.group(2))
    raise SystemExit(f"no time-stamped line in {gc_log}")


def gc_pauses(gc_log: str, t0: float) -> List[Tuple[float, float]]:
    """(start, milliseconds) of each pause."""
    out = []
    for line in open(gc_log):
        m = re.search(r"\]\[([\d.]+)s\] GC\(\d+\) Pause .* ([\d.]+)ms$", line.strip())
        if m:
            out.append((t0 + float(m.group(1)), float(m.group(2))))
    return out


def compiles(jit_log: str, t0: float) -> List[Tuple[float, float]]:
    """(start, end) of each compile task, wall clock."""
    stamp = re.compile(r"stamp='([\d.]+)'")
    out, start = [], None
    with open(jit_log, errors="replace") as f:
        for line in f:
            if line.startswith("<task "):
                m = stamp.search(line)
                start = float(m.group(1)) if m else None
            elif line.startswith("<task_done") and start is not None:
                m = stamp.search(line)
                if m:
                    out.append((t0 + start, t0 + float(m.group(1))))
                start = None
    return out


def main(d: str) -> None:
    t, s, ph, med, p99 = batches(os.path.join(d, "results.json"))
    t0 = jvm_start(os.path.join(d, "gc.log"))
    pauses = gc_pauses(os.path.join(d, "gc.log"), t0)
    tasks = compiles(os.path.join(d, "jit.log"), t0)
    print(f"{len(t)} batches: p50 {med * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms; "
          f"{len(tasks)} compile tasks, {len(pauses)} GC pauses in the JVM's life")
    print("window | median ms | queryPlanning ms | addBatch ms | over 2x p50 | compile tasks started")
    for a in range(0, len(t), 100):
        b = min(a + 100, len(t))
        lo, hi = s[a], s[b - 1] + t[b - 1]
        print(f"{a}-{b - 1} | {st.median(t[a:b]) * 1000:.0f} | {st.median(p.get('queryPlanning', 0) for p in ph[a:b]):.0f} | "
              f"{st.median(p.get('addBatch', 0) for p in ph[a:b]):.0f} | {sum(1 for x in t[a:b] if x > 2 * med)} | "
              f"{sum(1 for x, _ in tasks if lo <= x < hi)}")

    def busy(lo: float, hi: float) -> float:
        return sum(max(0.0, min(hi, y) - max(lo, x)) for x, y in tasks if y > lo and x < hi)

    order = sorted(range(len(t)), key=lambda i: t[i])
    mid = len(order) // 2
    print("batches | compile busy / wall (mean, median) | with a GC pause | GC pause ms in them")
    for name, group in (("fastest 200", order[:200]), ("middle 100", order[mid - 50:mid + 50]),
                        ("slowest 20", order[-20:])):
        share = [busy(s[i], s[i] + t[i]) / t[i] for i in group]
        inside = [[ms for at, ms in pauses if s[i] <= at <= s[i] + t[i]] for i in group]
        print(f"{name} | {st.mean(share):.2f}, {st.median(share):.2f} | {sum(1 for x in inside if x)} of {len(group)} | "
              f"{sum(sum(x) for x in inside):.0f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
