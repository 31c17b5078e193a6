"""Benchmark of the Spark-free reader (issue 36): `versioned log <repo> -n 20` on a 100,000-commit repository
(wall time of the whole process, start included) next to the JVM path; an Arrow read of a head with 10 DIFF
commits of 1% next to pyarrow reading the same rows as plain Parquet; a 0.1% key-range read; the peak RSS of a
full-table stream. One run, this machine; results in bench/results/reader.md.

    python3 bench/reader_bench.py --rows 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)

ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))


def timed(fn: Callable[[], Any], reps: int = 3) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def run_wall(args: List[str], reps: int = 3) -> float:
    def once() -> None:
        done = subprocess.run(args, env=ENV, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
    return timed(once, reps)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--commits", type=int, default=100_000)
    ap.add_argument("--work", default=os.path.join(HERE, "work", "reader"))
    ap.add_argument("--reps", type=int, default=5, help="Interleaved runs of the full read and of plain Parquet.")
    ap.add_argument("--reuse", action="store_true",
                    help="Measure on the warehouse a previous run built in --work (same --rows), building nothing.")
    a = ap.parse_args()
    wh = os.path.join(a.work, "warehouse")
    built = os.path.join(a.work, "built.json")
    if a.reuse:
        with open(built) as f:
            setup = json.load(f)
        assert setup["rows"] == a.rows and setup["commits"] == a.commits, f"{a.work} was built with {setup}"
    else:
        setup = build(a, wh)
        with open(built, "w") as f:
            json.dump(setup, f)
    measure(a, wh, setup)


def build(a: argparse.Namespace, wh: str) -> Dict[str, Any]:
    """Writes the bench table (a head and 10 DIFF commits of 1%), its plain Parquet copy and the long history."""
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)

    from pyspark.sql import SparkSession, functions as F
    import versioned
    from _metastore import fabricate_history

    spark = versioned.configure_spark_with_versioned(
        SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4").config("spark.driver.memory", "4g"), warehouse=wh).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    versioned.install()
    n = a.rows

    def rows(lo: int, hi: int, version: int) -> Any:
        return (spark.range(lo, hi).withColumnRenamed("id", "id")
                .withColumn("a", (F.col("id") * 7 + version) % 1000).withColumn("s", F.sha1(F.concat_ws(
                    ":", F.col("id").cast("string"), F.lit(version))).substr(1, 16))
                .withColumn("d", F.col("id") / 3.0 + version))

    rows(0, n, 0).write.versioned("bench.t", primary_key="id", message="base")
    repo = versioned.Repository(spark, "bench")
    step = max(1, n // 100)
    for v in range(1, 11):  # 10 DIFF commits of 1% (updates spread over the key range)
        lo = (v * 7919 * step) % max(1, n - step)
        repo.upsert(rows(lo, lo + step, v), "t", message=f"1% change {v}")
    getattr(spark._sc._jvm, "versioned.spark.api.VersionedApi").awaitCompactions(0)
    plain = os.path.join(a.work, "plain")
    frags = len(json.loads(json.dumps(repo.show()["tables"][0]["fragments"])))
    spark.read.versioned("bench.t").repartitionByRange(max(1, frags), "id").sortWithinPartitions("id") \
        .write.parquet(plain)

    # history: a small repository grown to --commits by fabrication (bench/_metastore.py, as FORMAT.md describes)
    spark.createDataFrame([(1, "x")], "id long, v string").write.versioned("hist.t", primary_key="id", message="0")
    t0 = time.perf_counter()
    fabricate_history(wh, "hist", versioned.Repository(spark, "hist").default_branch, a.commits)
    fabricated = time.perf_counter() - t0
    jvm_log = ("import sys, versioned\nfrom pyspark.sql import SparkSession\n"
               "spark = versioned.configure_spark_with_versioned(SparkSession.builder.master('local[1]')"
               ".config('spark.ui.enabled','false'), warehouse=sys.argv[1]).getOrCreate()\n"
               "print(len(versioned.Repository(spark, 'hist').log(limit=20).collect()))\nspark.stop()\n")
    spark.stop()
    log_jvm = run_wall([sys.executable, "-c", jvm_log, wh], reps=1)
    return {"rows": n, "commits": a.commits, "fabricated_s": fabricated, "log_jvm_s": log_jvm}


def measure(a: argparse.Namespace, wh: str, setup: Dict[str, Any]) -> None:
    """Times the reader against its references on the built warehouse; writes bench/results/reader.{json,md}."""

    import pyarrow.parquet as pq
    from versioned.reader import open_warehouse

    n = a.rows
    plain = os.path.join(a.work, "plain")
    results: Dict[str, Any] = dict(setup, load_average_before=os.getloadavg())
    results["log_reader_s"] = run_wall([sys.executable, "-m", "versioned.cli", "-w", wh, "log", "hist", "-n", "20",
                                        "--no-pager"])

    repo_r = open_warehouse(wh).repository("bench")
    table = repo_r.table("t")
    head = table.to_arrow()
    baseline = pq.read_table(plain)
    assert head.num_rows == baseline.num_rows
    # interleaved A/B runs (the host is shared: a burst of load hits both sides alike), medians
    reader_times, plain_times = [], []
    for _ in range(a.reps):
        reader_times.append(timed(lambda: table.to_arrow(), reps=1))
        plain_times.append(timed(lambda: pq.read_table(plain), reps=1))
    results.update(arrow_read_s=statistics.median(reader_times), plain_parquet_s=statistics.median(plain_times),
                   arrow_read_runs=reader_times, plain_parquet_runs=plain_times)
    lo = n // 2
    rng = [("id", ">=", lo), ("id", "<", lo + max(1, n // 1000))]
    results["range_read_s"] = timed(lambda: table.to_arrow(filters=rng))
    results["range_rows"] = table.to_arrow(filters=rng).num_rows
    results["fragments"] = len(table.fragments)
    results["largest_fragment_arrow_mb"] = max(table.with_fragments([f]).to_arrow().nbytes
                                               for f in table.fragments) / 2**20
    # VmHWM (this process's peak RSS; ru_maxrss would carry the parent's peak across fork and exec)
    stream = ("import sys\nfrom versioned.reader import open_warehouse\n"
              "def hwm():\n    return int([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])\n"
              "t = open_warehouse(sys.argv[1]).repository('bench').table('t')\n"
              "import pyarrow.parquet\nbase = hwm()\n"
              "n = sum(b.num_rows for b in t.batches())\n"
              "print(base, hwm(), n, pyarrow.default_memory_pool().max_memory())\n")
    out = subprocess.run([sys.executable, "-c", stream, wh], env=ENV, capture_output=True, text=True, check=True)
    base_kb, peak_kb, streamed, pool_peak = (int(x) for x in out.stdout.split())
    results.update(stream_base_rss_mb=base_kb / 1024, stream_peak_rss_mb=peak_kb / 1024, streamed_rows=streamed,
                   stream_arrow_peak_mb=pool_peak / 2**20,
                   table_arrow_mb=head.nbytes / 2**20, load_average_after=os.getloadavg())

    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "reader.json"), "w") as f:
        json.dump(results, f, indent=2)
    r = results
    md = f"""# Spark-free reader (bench/reader_bench.py, one run, this machine)

| workload | reader | reference | ratio | target |
|---|---|---|---|---|
| `versioned log hist -n 20`, {r['commits']:,} commits, process wall incl. start | {r['log_reader_s']:.3f} s | JVM path {r['log_jvm_s']:.2f} s | {r['log_reader_s'] / r['log_jvm_s']:.3f} | <= 0.3 s |
| head of {r['rows']:,} rows + 10 DIFF commits of 1% into Arrow | {r['arrow_read_s']:.3f} s | plain Parquet (pyarrow) {r['plain_parquet_s']:.3f} s | {r['arrow_read_s'] / r['plain_parquet_s']:.2f}x | <= 1.5x |
| key range of 0.1% ({r['range_rows']:,} rows) | {r['range_read_s']:.3f} s | full read {r['arrow_read_s']:.3f} s | {100 * r['range_read_s'] / r['arrow_read_s']:.1f}% | <= 10% |
| peak RSS of a full-table stream ({r['fragments']} fragments) | {r['stream_peak_rss_mb']:.0f} MB (process {r['stream_base_rss_mb']:.0f} MB before; Arrow memory at its peak {r['stream_arrow_peak_mb']:.0f} MB) | the whole table as Arrow {r['table_arrow_mb']:.0f} MB; its largest fragment {r['largest_fragment_arrow_mb']:.0f} MB | | bounded by a fragment |

Load average (1, 5, 15 min) before the measurements {', '.join(f'{x:.1f}' for x in r['load_average_before'])}, after
{', '.join(f'{x:.1f}' for x in r['load_average_after'])}. Full read and plain Parquet: {len(r['arrow_read_runs'])} interleaved runs
each, medians; reader {', '.join(f'{x:.2f}' for x in r['arrow_read_runs'])} s, plain {', '.join(f'{x:.2f}' for x in r['plain_parquet_runs'])} s.
"""
    with open(os.path.join(HERE, "results", "reader.md"), "w") as f:
        f.write(md)
    print(md)


if __name__ == "__main__":
    main()
