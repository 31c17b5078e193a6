"""Helpers of the benchmark: logging, timing, sizes and formatting, the connector jar, the git head."""

from __future__ import annotations

import hashlib
import os
import statistics
import subprocess
import time
from typing import Any, Callable, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

T0 = time.perf_counter()


def log(msg: str) -> None:
    print(f"[{time.perf_counter() - T0:7.1f}s] {msg}", flush=True)


# ----------------------------------------------------------------------------------------- helpers
def parquet_bytes(path: str) -> Tuple[int, int]:
    """(bytes, files) of the Parquet files under ``path`` (checksum and marker files excluded)."""
    total = files = 0
    for d, _, names in os.walk(path):
        for n in names:
            if n.endswith(".parquet") and not n.startswith("."):
                total += os.path.getsize(os.path.join(d, n))
                files += 1
    return total, files


def driver_java_options(driver_memory: str) -> str:
    """JVM options of every benchmark driver (ours and the peers'): a fixed heap, touched once at start.

    On a virtual machine that hands freed guest memory back to its host (free page reporting, as on the
    Firecracker VMs the rounds ran on), the first touch of a heap page costs a kernel page fault. A heap that
    grows and shrinks makes whichever scan runs first after a commit pay for it (measured: 1.5-3x slower
    scans, with system time at 50-75% of the CPU), so alternating connector and Parquet scans measured the
    heap's growth rather than the scan. A fixed, pre-touched heap is usual JVM benchmark practice."""
    return f"-Xms{driver_memory} -XX:+AlwaysPreTouch"


def timed(fn: Callable[[], Any]) -> Tuple[float, Any]:
    t = time.perf_counter()
    r = fn()
    return time.perf_counter() - t, r


def median(xs: List[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def scan_reps(rows: int) -> int:
    """Timed repetitions of a scan of ``rows`` rows on each side (after the checksum pass that warms both):
    5 up to 20M rows, so a single slow repetition on a shared host moves the median neither way; 3 beyond."""
    return 5 if rows <= 20_000_000 else 3


def force(df) -> int:
    """Runs ``df`` to the end with every column materialized and no sink (``queryExecution.toRdd.count()``):
    the same on every side, the peers' included (Delta with deletion vectors refuses the ``noop`` sink)."""
    # a new Dataset each time, so that planning is timed too (a Dataset keeps its executed plan and RDD)
    return int(df.select("*")._jdf.queryExecution().toRdd().count())


def fmt_s(x: Optional[float]) -> str:
    if x is None:
        return "—"
    if x < 0.1:
        return f"{x * 1000:.1f} ms"
    return f"{x:.2f} s"


def fmt_b(x: Optional[float]) -> str:
    if x is None:
        return "—"
    for unit in ("B", "KB", "MB", "GB"):
        if abs(x) < 1024 or unit == "GB":
            return f"{x:.0f} {unit}" if unit == "B" else f"{x:.1f} {unit}"
        x /= 1024.0
    return str(x)


def find_jar() -> str:
    cands = [os.environ.get("VERSIONED_JAR"),
             os.path.join(ROOT, "python", "versioned", "jars", "versioned-spark-assembly.jar"),
             os.path.join(ROOT, "connector-scala", "spark", "target", "scala-2.13", "versioned-spark-assembly.jar")]
    for c in cands:
        if c and os.path.isfile(c):
            return c
    raise SystemExit("No connector jar: run bin/build-jar (or bin/sbt spark/assembly), or use bin/bench.")


def sha256_file(path: str) -> str:
    md = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            md.update(chunk)
    return md.hexdigest()


def git_head() -> str:
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except Exception:  # noqa: BLE001
        return "unknown"

