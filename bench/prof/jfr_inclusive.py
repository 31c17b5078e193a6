"""Inclusive JFR execution-sample counts of frames, for the threads whose name contains THREAD, inside the
time windows of dml_profile marks (MARKS: marks.json) whose name starts with PREFIX (run #0, the cold one, left
out). Usage: jfr_inclusive.py driver.jfr marks.json merge Thread-4 [frame regex]. Needs JDK jfr on PATH."""
import json, subprocess, sys, collections, datetime, re
jfr, marks, prefix, thr = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
pat = re.compile(sys.argv[5]) if len(sys.argv) > 5 else None
ms = [m for m in json.load(open(marks)) if m[0].startswith(prefix) and not m[0].endswith("#0")]
out = subprocess.run(["jfr", "print", "--json", "--stack-depth", "300", "--events", "jdk.ExecutionSample", jfr], capture_output=True, text=True).stdout
ev = json.loads(out)["recording"]["events"]
def ts(s): return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
incl = collections.Counter(); n = 0
for e in ev:
    v = e["values"]; t = ts(v["startTime"])
    if not any(m[1] <= t <= m[2] for m in ms): continue
    th = (v.get("sampledThread") or {}).get("javaName") or ""
    if thr not in th: continue
    n += 1
    fr = [f["method"]["type"]["name"].split("/")[-1] + "." + f["method"]["name"] for f in (v["stackTrace"] or {}).get("frames", [])]
    for f in set(fr): incl[f] += 1
print("samples", n)
for f, c in incl.most_common(2000):
    if c >= 2 and (pat is None or pat.search(f)): print(c, f)
