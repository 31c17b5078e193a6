import json, math, re, sys, datetime as dt
d = json.load(open(sys.argv[1]))
log = open(sys.argv[2], errors="replace").read().splitlines()
comp = []
for l in log:
    m = re.match(r"(\d\d)/(\d\d)/(\d\d) (\d\d):(\d\d):(\d\d) INFO .*compaction .* rewrote", l)
    if m:
        y, mo, da, h, mi, s = map(int, m.groups())
        comp.append(dt.datetime(2000 + y, mo, da, h, mi, s, tzinfo=dt.timezone.utc).timestamp())
for r in d["workloads"]:
    det = r.get("details", {})
    if "trigger_s" not in det: continue
    t, a, st = det["trigger_s"], det["add_s"], det.get("start_ts", [])
    p = lambda s, q: sorted(s)[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]
    med = p(t, .5)
    print(r["id"], "n", len(t), "p50", med, "p99", p(t, .99), "ratio", round(p(t, .99) / med, 2), "compactions logged", len(comp))
    for lo in (0, 50, 100):
        print(" from batch", lo + 1, "ratio", round(p(t[lo:], .99) / p(t[lo:], .5), 2))
    if st and comp:
        def near(i):  # a compaction ended during the batch or within 2 s before/after (log lines have 1 s resolution)
            return any(st[i] - 2 <= c <= st[i] + t[i] + 2 for c in comp)
        slow = [i for i in range(len(t)) if t[i] > 2 * med]
        print(" slow (>2x median):", len(slow), "near a compaction:", sum(near(i) for i in slow),
              "| all batches near a compaction:", sum(near(i) for i in range(len(t))), "of", len(t))
        print(" slowest 15:", sorted([(round(t[i], 2), i + 1, near(i)) for i in range(len(t))], reverse=True)[:15])
