"""Callers and callees of one frame X (JFR execution samples of threads named THREAD in the windows of dml_profile
marks starting with PREFIX). Usage: jfr_callees.py driver.jfr marks.json merge Thread-4 "VersionedScan.filter" [depth]."""
import json, subprocess, sys, collections, datetime
jfr, marks, prefix, thr, X = sys.argv[1:6]
depth = int(sys.argv[6]) if len(sys.argv) > 6 else 8
ms = [m for m in json.load(open(marks)) if m[0].startswith(prefix) and not m[0].endswith("#0")]
out = subprocess.run(["jfr", "print", "--json", "--stack-depth", "300", "--events", "jdk.ExecutionSample", jfr], capture_output=True, text=True).stdout
ev = json.loads(out)["recording"]["events"]
def ts(s): return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
paths = collections.Counter(); callers = collections.Counter()
for e in ev:
    v = e["values"]; t = ts(v["startTime"])
    if not any(m[1] <= t <= m[2] for m in ms): continue
    th = (v.get("sampledThread") or {}).get("javaName") or ""
    if thr not in th: continue
    fr = [f["method"]["type"]["name"].split("/")[-1] + "." + f["method"]["name"] for f in (v["stackTrace"] or {}).get("frames", [])]
    idx = [i for i, f in enumerate(fr) if f == X]
    if not idx: continue
    i = idx[-1]
    below = [f for f in reversed(fr[:i]) if "Lambda" not in f and "$anonfun" not in f and not f[0].isdigit()]
    paths[" > ".join(below[:depth])] += 1
    callers[" < ".join([f for f in fr[i+1:] if "Lambda" not in f and not f[0].isdigit()][:depth])] += 1
print("-- callers"); [print(c, k) for k, c in callers.most_common(8)]
print("-- below"); [print(c, k) for k, c in paths.most_common(25)]
