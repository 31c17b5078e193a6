"""Profiles delete_where of 200 scattered keys and SQL MERGE of 1,000 rows on the 100M bench table
(issue 35): Spark jobs with durations from the event log, driver samples from JFR. Usage:
  flock -x /work/bench.lock python3 bench/prof/dml_profile.py --jar JAR --out DIR [--reps 3] [--wh WAREHOUSE] [--jfr]
With --jfr the driver JVM records DIR/driver.jfr (settings `profile`, or the .jfc file JFR_SETTINGS names, e.g. a
copy of the JDK's profile.jfc with jdk.ExecutionSample's period lowered; stack depth 256); bench/prof/jfr_inclusive.py
and jfr_callees.py aggregate its samples per run. Each job line gives its tasks' run and CPU time and bytes read."""
import argparse, json, os, sys, time, glob
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import datagen as G  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--jar", required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--wh", default="/work/b100/work/wh")
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--jfr", action="store_true")
ap.add_argument("--only", default="both", help="both (delete_where and SQL MERGE), delete, merge, public (upsert write then delete_where, as the bench), or threeway (the bench's three-way merge of branches, run_py's merge step, and its direct commit)")
ap.add_argument("--parse-only", action="store_true")
ap.add_argument("--conf", action="append", default=[], help="extra Spark conf key=value (experiments)")
ap.add_argument("--sweep", default="", help="comma-separated key counts: delete_where of that many scattered keys each (all fragments touched)")
a = ap.parse_args()
os.makedirs(a.out, exist_ok=True)
evdir = os.path.join(a.out, "events"); os.makedirs(evdir, exist_ok=True)
jopts = "-Xms4g -XX:+AlwaysPreTouch"
if a.jfr:
    jopts += f" -XX:StartFlightRecording=filename={a.out}/driver.jfr,settings={os.environ.get('JFR_SETTINGS', 'profile')} -XX:FlightRecorderOptions=stackdepth=256"
def run():
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").appName("dml-profile")
             .config("spark.driver.memory", "4g").config("spark.driver.extraJavaOptions", jopts)
             .config("spark.jars", a.jar).config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "4")
             .config("spark.versioned.warehouse", a.wh)
             .config("spark.sql.catalog.vc", "versioned.spark.catalog.VersionedCatalog")
             .config("spark.versioned.author", "bench")
             .config("spark.eventLog.enabled", "true").config("spark.eventLog.compress", "false").config("spark.eventLog.rolling.enabled", "false").config("spark.eventLog.dir", evdir)
             .config("spark.local.dir", os.path.join(os.path.dirname(os.path.abspath(a.wh)), "spark-local")))
    for kv in a.conf:
        spark = spark.config(*kv.split("=", 1))
    spark = spark.getOrCreate()
    import versioned
    repo = versioned.Repository(spark, "bench")
    n, k = 100_000_000, 1000
    ks = G.Stream(n, k)
    cond = "id IN (" + ",".join(map(str, ks.deleted_keys(1))) + ")"
    tag = str(int(time.time()))
    marks = []
    proc = getattr(spark.sparkContext._gateway, "proc", None)  # the driver JVM (local mode)
    def cpu():
        """CPU seconds (user + system, all threads: JIT and GC included) of the driver JVM so far."""
        if proc is None:
            return float("nan")
        f = open(f"/proc/{proc.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    def mark(name, f):
        spark.sparkContext.setJobDescription(name)
        c0 = cpu(); t0 = time.time(); r = f(); t1 = time.time(); c1 = cpu()
        marks.append((name, t0, t1, c1 - c0)); print(f"{name}: {t1 - t0:.3f} s, driver CPU {c1 - c0:.2f} s", flush=True)
        return r
    def merge(br):
        ks.changes(spark, 2).createOrReplaceTempView("bench_changes")
        spark.sql(f"MERGE INTO vc.bench.`t@{br}` AS t USING bench_changes AS s ON t.id = s.id "
                  "WHEN MATCHED AND s._vchange = 1 THEN DELETE "
                  "WHEN MATCHED THEN UPDATE SET a = s.a, b = s.b, s = s.s, d = s.d "
                  "WHEN NOT MATCHED AND s._vchange = 3 THEN INSERT (id, a, b, s, d) VALUES (s.id, s.a, s.b, s.s, s.d)")
    for i in range(a.reps + 1 if not a.sweep else 1):
        for j, m in enumerate(int(x) for x in a.sweep.split(",") if x):
            keys = [(x * ks.p + 7919 + 13) % n for x in range(5000, 5000 + m)]  # scattered, not in the table's other tests
            c = "id IN (" + ",".join(map(str, keys)) + ")"
            br = f"p{tag}s{j}"; repo.create_branch(br, from_ref="main")
            mark(f"delete_where_{m}keys#{j}", lambda: repo.delete_where("t", c, branch=br))
        if a.sweep:
            break
        if a.only == "public":  # the bench's k_commit_public row: upsert write, then delete_where on the same branch
            br = f"p{tag}u{i}"; repo.create_branch(br, from_ref="main")
            ups = ks.upserts(spark, 1)
            mark(f"upsert#{i}", lambda: ups.write.format("versioned").option("upsert", "true").option("branch", br)
                 .mode("append").save("bench.t"))
            mark(f"delete_where#{i}", lambda: repo.delete_where("t", cond, branch=br))
        if a.only in ("both", "delete"):
            br = f"p{tag}d{i}"; repo.create_branch(br, from_ref="main")
            mark(f"delete_where#{i}", lambda: repo.delete_where("t", cond, branch=br))
        if a.only == "threeway":
            def feed(df, br, msg):
                (df.withColumn("_del", G.F.col("_vchange") == G.DELETE).drop("_vchange").write.format("versioned")
                 .option("upsert", "true").option("deleteColumn", "_del").option("branch", br).option("message", msg)
                 .mode("append").save("bench.t"))
            ours_df, theirs_df = ks.changes(spark, 4), ks.changes(spark, 5)
            mt, ms, md = (f"p{tag}{x}{i}" for x in ("mt", "ms", "md"))
            for b in (mt, ms, md):
                repo.create_branch(b, from_ref="main")
            feed(ours_df, mt, "target side"); feed(theirs_df, ms, "source side"); feed(ours_df, md, "target side")
            mark(f"direct#{i}", lambda: feed(theirs_df, md, "direct"))
            res = mark(f"threeway#{i}", lambda: repo.merge(ms, into=mt))
            assert res.status == "merged", res.status
        if a.only in ("both", "merge"):
            br = f"p{tag}m{i}"; repo.create_branch(br, from_ref="main")
            mark(f"merge#{i}", lambda: merge(br))
    spark.stop()
    json.dump(marks, open(os.path.join(a.out, "marks.json"), "w"))
    return marks


marks = json.load(open(os.path.join(a.out, "marks.json"))) if a.parse_only else run()
# jobs from the event log
jobs = []
tasks = {}  # stage id -> [tasks, run ms, cpu ms, bytes read]
stages_of = {}  # job id -> stage ids
for f in [x for x in glob.glob(os.path.join(evdir, "**"), recursive=True) if os.path.isfile(x) and "appstatus" not in x]:
    starts = {}
    for line in open(f):
        e = json.loads(line)
        if e["Event"] == "SparkListenerTaskEnd" and e.get("Task Metrics"):
            m = e["Task Metrics"]; t = tasks.setdefault(e["Stage ID"], [0, 0, 0, 0])
            t[0] += 1; t[1] += m["Executor Run Time"]; t[2] += m["Executor CPU Time"] // 1000000
            t[3] += m["Input Metrics"]["Bytes Read"]
        if e["Event"] == "SparkListenerJobStart":
            p = e.get("Properties", {})
            stages_of[e["Job ID"]] = e.get("Stage IDs", [])
            starts[e["Job ID"]] = (e["Submission Time"], p.get("spark.job.description", ""),
                                   p.get("callSite.short", ""), len(e.get("Stage Infos", [])),
                                   sum(s.get("Number of Tasks", 0) for s in e.get("Stage Infos", [])))
        elif e["Event"] == "SparkListenerJobEnd" and e["Job ID"] in starts:
            s = starts[e["Job ID"]]
            jobs.append((e["Job ID"], s[0] / 1000, e["Completion Time"] / 1000, s[1], s[2], s[3], s[4]))
jobs.sort()
with open(os.path.join(a.out, "profile.txt"), "w") as out:
    for name, t0, t1, *c in marks:
        inside = [j for j in jobs if j[3] == name]
        jt = sum(j[2] - j[1] for j in inside)
        line = (f"{name}: {t1 - t0:.3f} s, {len(inside)} jobs, {jt:.3f} s in jobs, {t1 - t0 - jt:.3f} s outside"
                + (f", driver JVM CPU {c[0]:.2f} s" if c else ""))
        print(line); out.write(line + "\n")
        for j in inside:
            ts = [tasks.get(s, [0, 0, 0, 0]) for s in stages_of.get(j[0], [])]
            l2 = (f"   job {j[0]} {j[2] - j[1]:.3f} s at +{j[1] - t0:.3f} stages={j[5]} tasks={j[6]} {j[4]}"
                  f" (ran {sum(t[0] for t in ts)} tasks: run {sum(t[1] for t in ts)} ms, cpu {sum(t[2] for t in ts)} ms, "
                  f"read {sum(t[3] for t in ts) / 1e6:.1f} MB)")
            print(l2); out.write(l2 + "\n")
        busy = sorted((j[1], j[2]) for j in inside); covered, end = 0.0, t0
        for b0, b1 in busy:
            b0 = max(b0, end); covered += max(0.0, b1 - b0); end = max(end, b1)
        l3 = f"   wall with a job running {covered:.3f} s; driver only {t1 - t0 - covered:.3f} s"
        print(l3); out.write(l3 + "\n")
