"""The main benchmark's side of the peers: runs bench/peers/runner.py once per peer (Delta Lake, Iceberg
merge-on-read, Iceberg copy-on-write) in the peers' virtual environment, each in its own SparkSession and
process, and merges the JSON each returns into the main results (``row["peers"][label]``), then renders the
side-by-side columns of results.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any, Dict, List, Optional

from common import HERE, fmt_s, log
from wl_streaming import stream_argv

PEERS = [("delta", "Delta"), ("iceberg-mor", "Iceberg MoR"), ("iceberg-cow", "Iceberg CoW")]
LABELS = [label for _, label in PEERS]
# a peer row stands next to each of these rows of ours
ALIASES = {"k_commit": ["k_commit_feed", "k_commit_public", "k_commit_merge", "k_commit_engine"],
           "clone_lazy": ["clone_lazy", "scan_lazy_clone", "clone_download", "push_k", "fetch_k"]}
# a peer's merge is a fast-forward: its time is shown, not a ratio that would read as a three-way merge's
NO_RATIO = {"merge_k"}
DEFAULT_PYTHON = os.path.join(HERE, "work", "peers-venv", "bin", "python")


def run_peers(suite) -> None:
    """Runs every selected peer in turn (after our steps) and attaches its rows to ours."""
    for p in start_peers(suite, concurrent=False):
        finish_peer(suite, p)


def start_peers(suite, concurrent: bool) -> List[Dict[str, Any]]:
    """Starts the selected peers' runners; with ``concurrent`` all at once (returned running), else each is run
    to its end before the next starts. Each peer is a process of its own with its own SparkSession."""
    a = suite.args
    py = a.peers_python or DEFAULT_PYTHON
    if not os.path.isfile(py):
        suite.meta.setdefault("errors", []).append(f"peers: no {py} (bin/bench creates the peers' environment)")
        return []
    out_dir = os.path.join(suite.results_dir, "peers")
    os.makedirs(out_dir, exist_ok=True)
    systems = a.peers.split(",") if a.peers else [s for s, _ in PEERS]
    started = []
    for system, label in PEERS:
        if system not in systems:
            continue
        out, log_path = os.path.join(out_dir, f"{system}.json"), os.path.join(out_dir, f"{system}.log")
        cmd = [py, os.path.join(HERE, "peers", "runner.py"), "--system", system, "--rows", str(suite.n),
               "--hist-rows", str(a.hist_rows), "--hist-commits", str(a.peers_hist_commits or a.hist_commits),
               "--churn-commits", str(a.churn_commits), "--k", str(a.k), "--ref-reps", str(a.ref_reps),
               "--cores", str(a.cores), "--driver-memory", a.driver_memory,
               "--shuffle-partitions", str(a.shuffle_partitions),
               "--work", os.path.join(suite.work, "peers", system), "--out", out]
        if a.peers_steps:
            cmd += ["--steps", a.peers_steps]
        cmd += stream_argv(a)
        if a.scan_reps:
            cmd += ["--scan-reps", str(a.scan_reps)]
        log(f"peer {label}: {' '.join(cmd[1:])} (log: {os.path.relpath(log_path)})")
        if os.path.exists(out):
            os.remove(out)
        f = open(log_path, "w")
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        p = {"label": label, "proc": proc, "out": out, "log": log_path, "file": f}
        if not concurrent:
            proc.wait()
        else:  # the next one starts once this one's session is up: ~/.ivy2 is not shared safely while resolving
            t0 = time.monotonic()
            while proc.poll() is None and not os.path.exists(out) and time.monotonic() - t0 < 900:
                time.sleep(2)
        started.append(p)
    return started


def finish_peer(suite, p: Dict[str, Any]) -> None:
    """Waits for a started peer and attaches what it returned (also a partial result)."""
    rc = p["proc"].wait()
    p["file"].close()
    if rc != 0:
        suite.meta.setdefault("errors", []).append(f"peer {p['label']}: runner exited {rc} (see {p['log']})")
    if os.path.exists(p["out"]):
        with open(p["out"]) as f:
            attach(suite, p["label"], json.load(f))
    suite.save()


def attach(suite, label: str, data: Dict[str, Any]) -> None:
    by_id = {r["id"]: r for r in suite.rows}
    suite.meta.setdefault("peers", {})[label] = data.get("meta", {})
    for pr in data.get("rows", []):
        ours = [w for w in ALIASES.get(pr["id"], [pr["id"]]) if w in by_id]
        for wid in ours:
            by_id[wid].setdefault("peers", {})[label] = pr
        if not ours:  # a step we did not run this time: shown in a row of its own
            suite.meta.setdefault("peers_only", {}).setdefault(pr["id"], {})[label] = pr


def cell(v: Optional[float], p: Optional[float], ratio: Optional[float]) -> str:
    if ratio is None:
        return fmt_s(v) if v is not None else "—"
    if v is None:
        return f"{ratio:.2f}"
    return f"{ratio:.2f} ({fmt_s(v)} / {fmt_s(p)})" if p is not None else f"{ratio:.2f} ({fmt_s(v)})"


def peer_cell(pr: Optional[Dict[str, Any]]) -> str:
    if pr is None:
        return "—"
    if pr.get("na"):
        return "n/a"
    if pr.get("ok") is False:
        return "**MISMATCH**"
    if pr["id"] in NO_RATIO:
        return fmt_s(pr.get("peer_s"))
    return cell(pr.get("peer_s"), pr.get("parquet_s"), pr.get("ratio"))


def table(rows: List[Dict[str, Any]], meta: Dict[str, Any]) -> List[str]:
    """The results table with one column per peer, and the peers' notes under it."""
    head = "| workload | us / Parquet | " + " | ".join(f"{lb} / Parquet" for lb in LABELS) + " | target | result | notes |"
    lines = [head, "|" + "---|" * (5 + len(LABELS))]
    notes: List[str] = []
    seen = set()
    for r in rows:
        verdict = {True: "pass", False: "**FAIL**", None: "info"}[r["pass"]]
        peers = r.get("peers", {})
        ours = cell(r["connector_s"], r["parquet_s"], r["ratio"])
        lines.append(f"| {r['workload']} | {ours} | " + " | ".join(peer_cell(peers.get(lb)) for lb in LABELS)
                     + f" | {r['target']} | {verdict} | {r['notes'].replace('|', chr(92) + '|')} |")
        fresh = [lb for lb in LABELS if lb in peers and (lb, peers[lb]["id"]) not in seen]  # aliases: noted once
        seen.update((lb, peers[lb]["id"]) for lb in fresh)
        said = [f"{lb}: {'n/a — ' if peers[lb].get('na') else ''}{peers[lb]['note']}" for lb in fresh]
        if said:
            notes.append(f"* `{r['id']}` — " + "; ".join(said).replace("|", "\\|"))
    for wid, peers in meta.get("peers_only", {}).items():
        lines.append(f"| `{wid}` (not run on our side this time) | — | "
                     + " | ".join(peer_cell(peers.get(lb)) for lb in LABELS) + " | — | — | see the notes |")
        notes.append(f"* `{wid}` — " + "; ".join(f"{lb}: {'n/a — ' if peers[lb].get('na') else ''}{peers[lb]['note']}"
                                                  for lb in LABELS if lb in peers).replace("|", "\\|"))
    pm = meta.get("peers", {})
    lines += ["", "Each cell is ratio (system / its own Parquet baseline, both in seconds) with the definition of the "
              "row (lookups and diffs: ÷ the system's own full scan; storage: bytes). Peers: "
              + "; ".join(f"{lb}: Spark {m.get('spark')}, `{m.get('package')}`, wall {m.get('elapsed_s', 0):.0f} s, "
                          f"load average at start {m.get('loadavg_1m_at_start')}" for lb, m in pm.items()) + ".",
              "", "Notes on the peers:", ""] + notes
    if meta.get("peers_concurrent"):
        lines[-len(notes) - 4] += (" The peers ran at the same time as our steps (`--peers-concurrent`), each in its "
                                   "own process, on a host shared with other work: absolute times are inflated on every "
                                   "side; each ratio compares two runs of the same session.")
    return lines


def merge_saved(results_dir: str) -> None:
    """Merges the peers' JSON files under ``results_dir/peers`` into ``results_dir/results.json`` and rewrites
    ``results.md``: for a run whose peers were cut short, or re-run alone (their files are rewritten as they go)."""
    from suite import Suite
    path = os.path.join(results_dir, "results.json")
    with open(path) as f:
        data = json.load(f)
    suite = Suite.__new__(Suite)  # only its results table: no session
    suite.rows, suite.meta = data["workloads"], data["meta"]
    suite.meta.pop("peers", None)
    suite.meta.pop("peers_only", None)
    for r in suite.rows:
        r.pop("peers", None)
    for system, label in PEERS:
        p = os.path.join(results_dir, "peers", f"{system}.json")
        if os.path.exists(p):
            with open(p) as f:
                attach(suite, label, json.load(f))
    with open(path, "w") as f:
        json.dump({"meta": suite.meta, "workloads": suite.rows}, f, indent=2, default=str)
    with open(os.path.join(results_dir, "results.md"), "w") as f:
        f.write(suite.markdown())


if __name__ == "__main__":
    # python3 bench/peers_client.py bench/results/<run>: merge the peers' files saved there into its table
    merge_saved(sys.argv[1])
