#!/usr/bin/env python3
"""Where the milliseconds of a small diff go (issue 35, "Small fixed costs"): a diff of k (1,000) changes on the
N-row table of bench/run.py, committed without before-images, at scattered keys and in one key range, against one
full scan of the changed version; per phase (the diff planned and computed by ``Repository.diff``, then run to
the end as the benchmark runs it) the Spark jobs it started with their durations (the session's status REST
API), and, with ``--jfr``, the driver's CPU samples of a loop of diffs (JDK Flight Recorder) by method.

    flock -x /work/bench.lock python3 bench/diff_profile.py [--rows 2000000] [--k 1000] [--reps 7] [--jfr]
                                                         [--results bench/results/diff-2m-s35]

Writes ``diff-profile.md`` and ``diff-profile.json`` in the results directory, with the load average.
"""

from __future__ import annotations

import argparse
import collections
import datetime as _dt
import json
import os
import subprocess
import sys
import time
import urllib.request
from typing import Any, Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(os.path.dirname(HERE), "python"))

import datagen as G  # noqa: E402
import run  # noqa: E402
from common import force, log, median, timed  # noqa: E402


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def ms(x: float) -> str:
    return f"{x * 1000:.1f} ms"


class Jobs:
    """The session's jobs by job group, from its status REST API (the UI's, enabled for this run)."""

    def __init__(self, spark: Any) -> None:
        self.sc = spark.sparkContext
        self.url = f"{self.sc.uiWebUrl}/api/v1/applications/{self.sc.applicationId}/jobs"

    def group(self, name: str) -> None:
        self.sc.setJobGroup(name, name)

    def by_group(self) -> Dict[str, List[Dict[str, Any]]]:
        time.sleep(1.0)  # the listener bus delivers job ends asynchronously
        with urllib.request.urlopen(self.url) as r:
            jobs = json.load(r)
        out: Dict[str, List[Dict[str, Any]]] = collections.defaultdict(list)
        for j in jobs:
            def t(key: str) -> float:
                return _dt.datetime.strptime(j[key].replace("GMT", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
            dur = t("completionTime") - t("submissionTime") if j.get("completionTime") else None
            out[j.get("jobGroup") or ""].append({"id": j["jobId"], "name": j.get("name", ""),
                                                 "description": j.get("description", ""), "s": dur,
                                                 "tasks": j.get("numTasks")})
        return out


# Phases of a diff by the frames on a sample's stack (first match wins; thread names as Spark and Jobs.onDriver set them).
LOOKUP_PHASES = (  # on the lookup threads (versioned-driver-task): the fragments' tasks
    ("lookup: open an object, the pushed filter (de)serialized per file", ("setFilterPredicate", "HadoopReadOptions")),
    ("lookup: open an object (footer, column and offset indexes, reader set-up)", ("ObjectFiles$.open",)),
    ("lookup: decode strings (DELTA_BYTE_ARRAY)", ("BinaryUpdater", "DeltaByteArray")),
    ("lookup: read and decompress pages", ("readPage", "DataPageV2", "readNextFilteredRowGroup", "BytesInput")),
    ("lookup: decode the other columns", ("VectorizedColumnReader", "VectorizedRle", "Updater")),
)
DIFF_PHASES = (  # on the py4j thread, within Repository.diff (VersionedApi.diff)
    ("diff: resolve the revisions (metastore)", ("Engine.resolve", "Resolver")),
    ("diff: table and object records (metastore)", ("TableDiff$.snapshots", "MetaDao", "Metastore")),
    ("diff: key filter (changed keys read from the DIFFs)", ("KeyFilter",)),
    ("diff: build Parquet readers (configuration copy, broadcast)", ("FastDiff$.reader", "verifying")),
    ("diff: fragment tasks on the calling thread", ("Jobs$.onDriver", "FragmentDiff")),
    ("diff: frame from the rows (conversion, analysis)", ("createDataFrame", "Dataset$.ofRows", "LocalRelation")),
)
RUN_PHASES = (  # on the py4j thread, outside Repository.diff: the run of the frame as the benchmark runs it
    ("run: closure cleaning", ("SparkContext.clean",)),
    ("run: submit the job, wait", ("runJob",)),
    ("run: analyze, optimize, plan", ("QueryExecution", "Dataset.select")),
    ("py4j: class look-ups", ("getUnknownMember", "ClassLoader")),
)


def phase(thread: str, frames: List[str]) -> str:
    stack = " ".join(frames).replace("/", ".")
    if thread.startswith("versioned-driver-task"):
        return next((n for n, keys in LOOKUP_PHASES if any(k in stack for k in keys)), "lookup: other")
    if thread.startswith("Executor task launch"):
        return "run: executor tasks"
    if thread.startswith(("dag-scheduler", "dispatcher", "task-result")):
        return "run: scheduler threads"
    if thread.startswith(("Thread-", "main")):
        if "VersionedApi" in stack:
            return next((n for n, keys in DIFF_PHASES if any(k in stack for k in keys)), "diff: other")
        return next((n for n, keys in RUN_PHASES if any(k in stack for k in keys)), "py4j and other on the calling thread")
    return "other threads"


def jfr_top(path: str, start: float, end: float, top: int = 25) -> Dict[str, Any]:
    """CPU samples of the recording between ``start`` and ``end`` (epoch seconds): by thread, by phase (``phase``),
    by the frame that ran (self), and by the innermost frame of the project (``versioned.``) on the stack."""
    out = subprocess.run(["jfr", "print", "--json", "--stack-depth", "256", "--events", "jdk.ExecutionSample", path], capture_output=True,
                         text=True, check=True).stdout
    events = json.loads(out)["recording"]["events"]
    threads: collections.Counter = collections.Counter()
    phases: collections.Counter = collections.Counter()
    selfs: collections.Counter = collections.Counter()
    ours: collections.Counter = collections.Counter()
    n = 0
    for e in events:
        v = e["values"]
        stamp = v["startTime"].replace("Z", "+00:00")
        head, _, rest = stamp.partition(".")
        frac, _, zone = rest.partition("+")
        when = _dt.datetime.fromisoformat(f"{head}.{frac[:6]}+{zone}").timestamp()
        if not start <= when <= end:
            continue
        n += 1
        thread = (v.get("sampledThread") or {}).get("javaName") or "?"
        threads[thread] += 1
        frames = [f"{f['method']['type']['name']}.{f['method']['name']}" for f in (v.get("stackTrace") or {}).get("frames", [])]
        phases[phase(thread, frames)] += 1
        if frames:
            selfs[frames[0]] += 1
        mine = next((f for f in frames if f.startswith(("versioned.", "versioned/"))), None)
        ours[mine or "(no versioned frame)"] += 1
    return {"samples": n, "threads": threads.most_common(10), "phases": phases.most_common(), "self": selfs.most_common(top),
            "innermost_versioned": ours.most_common(top)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--k", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--jfr", action="store_true", help="record the driver with JDK Flight Recorder (a loop of diffs)")
    ap.add_argument("--jfr-loop", type=int, default=30, help="diffs of the recorded loop")
    ap.add_argument("--work", default=os.path.join(HERE, "work"))
    ap.add_argument("--results", default=os.path.join(HERE, "results", "diff-2m-s35"))
    a = ap.parse_args()
    os.makedirs(a.results, exist_ok=True)
    jfr = os.path.join(os.path.abspath(a.work) + "-jfr", "diff.jfr")
    argv = ["--rows", str(a.rows), "--k", str(a.k), "--no-peers", "--work", a.work, "--results", a.results,
            "--conf", "spark.ui.enabled=true"]
    if a.jfr:
        os.makedirs(os.path.dirname(jfr), exist_ok=True)
        argv += ["--driver-java-options=-XX:StartFlightRecording=name=diff,settings=profile,jdk.ExecutionSample#period=2ms -XX:FlightRecorderOptions=stackdepth=256"]
    load_start = load()
    suite = run.Bench(run.parse_args(argv))
    suite.start()
    suite.state["feed_public"] = True  # the public change-feed write (upsert + deleteColumn)
    sp, n, k = suite.spark, suite.n, a.k
    suite.main_load()
    suite.set_fragment_rows(n)
    base = suite.state["main_base"]
    ks = G.Stream(n, k)
    suite.create_branch("bench", "dsn", base)
    suite.apply_changes(ks.changes(sp, 7), "bench.t", branch="dsn", message="scattered keys, no before-images")
    suite.create_branch("bench", "dcn", base)
    suite.apply_changes(G.clustered_changes(sp, n // 3, k), "bench.t", branch="dcn", message="one key range, no before-images")
    api = suite.repo_api("bench")
    jobs = Jobs(sp)
    cases: Dict[str, Dict[str, Any]] = {}
    for branch, label in (("dsn", "scattered keys"), ("dcn", "one key range")):
        counts = {r["_change"]: int(r["n"]) for r in api.diff("t", base, branch).groupBy("_change").agg(
            G.F.count("*").alias("n")).collect()}
        dv = suite.read("bench.t", ref=branch)
        for _ in range(2):  # untimed: the first runs of a process run before the JIT compiled their loops
            force(api.diff("t", base, branch))
            force(dv)
        plan, runs, scans, resolves = [], [], [], []
        for i in range(a.reps):
            resolves.append(timed(lambda: (api.resolve(base), api.resolve(branch)))[0])
            jobs.group(f"{branch}-plan-{i}")
            t_plan, df = timed(lambda: api.diff("t", base, branch))
            jobs.group(f"{branch}-run-{i}")
            t_run, _ = timed(lambda: force(df))
            jobs.group(f"{branch}-scan-{i}")
            t_scan, _ = timed(lambda: force(dv))
            plan.append(t_plan)
            runs.append(t_run)
            scans.append(t_scan)
        sp.sparkContext.setLocalProperty("spark.jobGroup.id", None)
        total = [p + r for p, r in zip(plan, runs)]
        cases[branch] = {"label": label, "counts": counts, "plan_s": plan, "run_s": runs, "diff_s": total,
                         "scan_s": scans, "resolve_two_s": resolves, "ratio": median(total) / median(scans)}
        log(f"{branch}: diff {ms(median(total))} (plan {ms(median(plan))} + run {ms(median(runs))}), scan "
            f"{ms(median(scans))}, ratio {cases[branch]['ratio']:.3f}, rows {counts}")
    groups = jobs.by_group()
    for branch, c in cases.items():
        for phase in ("plan", "run", "scan"):
            per = [groups.get(f"{branch}-{phase}-{i}", []) for i in range(a.reps)]
            c[f"{phase}_jobs"] = per
    profile = None
    if a.jfr:
        pid = sp.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
        windows = {}
        for branch in ("dsn", "dcn"):
            t0 = time.time()
            for _ in range(a.jfr_loop):
                force(api.diff("t", base, branch))
            windows[branch] = (t0, time.time())
        subprocess.run(["jcmd", str(pid), "JFR.dump", "name=diff", f"filename={jfr}"], check=True, capture_output=True)
        profile = {}
        for branch, (t0, t1) in windows.items():
            profile[branch] = jfr_top(jfr, t0, t1)
            profile[branch]["loop"] = {"diffs": a.jfr_loop, "s": t1 - t0, "from": t0, "to": t1, "label": cases[branch]["label"],
                                       "recording": jfr}
    load_end = load()
    sp.stop()
    write(a, cases, profile, load_start, load_end)
    return 0


def write(a: argparse.Namespace, cases: Dict[str, Dict[str, Any]], profile: Any, load_start: str, load_end: str) -> None:
    with open(os.path.join(a.results, "diff-profile.json"), "w") as f:
        json.dump({"args": vars(a), "load_start": load_start, "load_end": load_end, "cases": cases, "jfr": profile}, f,
                  indent=1, default=str)
    lines = ["# Where a small diff's milliseconds go", "",
             f"`python3 bench/diff_profile.py --rows {a.rows} --k {a.k} --reps {a.reps}{' --jfr' if a.jfr else ''}`; "
             f"{os.cpu_count()} cores; load average (1, 5, 15 min) {load_start} at start, {load_end} at the end. "
             "Changes committed without before-images. Medians of the repetitions; a diff = `Repository.diff` "
             "(resolve, plan, and, for a small change, the rows computed on the driver) + running the frame to the "
             "end as the benchmark does (`queryExecution.toRdd.count()`); the scan the same on the changed version.", "",
             "| change | diff | of which `Repository.diff` | of which the run | full scan | ratio | two resolves | rows |",
             "|---|---|---|---|---|---|---|---|"]
    for c in cases.values():
        lines.append(f"| {a.k:,} changes, {c['label']}, N = {a.rows:,} | {ms(median(c['diff_s']))} | "
                     f"{ms(median(c['plan_s']))} | {ms(median(c['run_s']))} | {ms(median(c['scan_s']))} | "
                     f"{c['ratio']:.3f} | {ms(median(c['resolve_two_s']))} | {c['counts']} |")
    lines += ["", "## Spark jobs per phase (last repetition; duration from submission to completion)", ""]
    for branch, c in cases.items():
        for phase in ("plan", "run", "scan"):
            js = c[f"{phase}_jobs"][-1]
            shown = "; ".join(f"#{j['id']} {j['name'][:60]} ({'?' if j['s'] is None else ms(j['s'])}, {j['tasks']} tasks)"
                              for j in js) or "none"
            lines.append(f"- {c['label']}, {phase}: {len(js)} job(s): {shown}")
    for p in (profile or {}).values():
        lines += ["", f"## Driver CPU samples (JFR) over {p['loop']['diffs']} diffs, {p['loop']['label']} "
                  f"({p['loop']['s']:.2f} s, {p['samples']} samples)", "",
                  "By thread: " + ", ".join(f"{t} {c}" for t, c in p["threads"]), "",
                  "| phase (`phase()`) | samples | share |", "|---|---|---|"]
        lines += [f"| {m} | {c} | {100 * c / max(1, p['samples']):.0f}% |" for m, c in p["phases"]]
        lines += ["",
                  "| innermost `versioned.` frame | samples |", "|---|---|"]
        lines += [f"| `{m}` | {c} |" for m, c in p["innermost_versioned"]]
        lines += ["", "| running frame | samples |", "|---|---|"]
        lines += [f"| `{m}` | {c} |" for m, c in p["self"]]
    with open(os.path.join(a.results, "diff-profile.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
