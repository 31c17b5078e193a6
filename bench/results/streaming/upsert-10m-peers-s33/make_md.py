"""Writes results.md / results.json of this directory from the peers' runner output (delta.json, iceberg-mor.json,
their .uptime files) and our run of the same configuration (../upsert-10m-1000-quiet/results.json)."""
import json, os
HERE = os.path.dirname(os.path.abspath(__file__))
ours = [r for r in json.load(open(os.path.join(HERE, "..", "upsert-10m-1000-quiet", "results.json")))["workloads"]]
ours = {r["id"]: r for r in ours}
out = {"ours": {"source": "../upsert-10m-1000-quiet (git 3e9e02d, jar of 44395a9, 1,000 batches)",
                "stream_upsert_1000": {k: v for k, v in ours["stream_upsert_1000"]["details"].items() if not isinstance(v, list)},
                "stream_upsert_1000_scan_ratio": ours["stream_upsert_1000_scan"].get("ratio")}}
lines = []
for sys_, label in [("iceberg-mor", "Iceberg MoR"), ("delta", "Delta")]:
    p = os.path.join(HERE, f"{sys_}.json")
    up = open(os.path.join(HERE, f"{sys_}.uptime")).read().strip() if os.path.exists(os.path.join(HERE, f"{sys_}.uptime")) else "—"
    if not os.path.exists(p):
        out[sys_] = {"error": "no result file", "uptime": up}
        continue
    d = json.load(open(p))
    rows = {r["id"]: r for r in d["rows"]}
    out[sys_] = {"meta": d["meta"], "rows": d["rows"], "uptime": up}
print(json.dumps({k: (v if k == "ours" else {kk: vv for kk, vv in v.items() if kk != "rows"}) for k, v in out.items()}, indent=1, default=str)[:3000])
json.dump(out, open(os.path.join(HERE, "results.json"), "w"), indent=1, default=str)
