"""Profile of the 100,000-row append batch into 1,000,000 rows (issue 34, round s33):
N=1000000 SIZE=100000 B=10 JAR=... [CONF="k=v,k=v"] [JOPTS=...] python3 profile_s33.py
Loads datagen.base(N) into a keyed table (fragments of N/10 rows, as the bench), waits for compactions, streams B
batches of new keys with the sink (append), then prints per batch Spark's phase durations (progress reports), and
every Spark job started meanwhile (REST API) with its group (the stream's, or a background compaction's), its
start relative to the batch it overlapped and its duration."""
import os, sys, time, json, shutil, urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
import datagen as G
import wl_streaming as S
from pyspark.sql import SparkSession
N = int(os.environ.get("N", "1000000")); SIZE = int(os.environ.get("SIZE", "100000")); B = int(os.environ.get("B", "10"))
work = os.environ.get("WORK", "/tmp/h38b-profile"); shutil.rmtree(work, ignore_errors=True); os.makedirs(work)
jar = work + "/v.jar"; shutil.copyfile(os.environ["JAR"], jar)
b = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "2g").config("spark.jars", jar)
     .config("spark.ui.port", "4078").config("spark.driver.extraJavaOptions", os.environ.get("JOPTS", "") + " -XX:+AlwaysPreTouch -Xms2g")
     .config("spark.ui.showConsoleProgress", "false")
     .config("spark.versioned.warehouse", work + "/wh").config("spark.local.dir", work + "/local"))
for kv in filter(None, os.environ.get("CONF", "").split(",")):
    k, v = kv.split("=", 1); b = b.config(k, v)
spark = b.getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
jvm = spark.sparkContext._jvm
spark.conf.set("spark.versioned.fragment.targetRows", str(max(1000, min(N // 10, 1_000_000))))
api = getattr(jvm, "versioned.spark.api.VersionedApi")
# warm-up: 3 batches into a small table (the JIT), as the bench's warm-up stream
G.base(spark, 200_000).write.format("versioned").option("primaryKey", "id").mode("append").save("warm.t")
def start_on(table, cs, n):
    return lambda cp: (S.source(spark, cs, n, with_op=False).writeStream.format("versioned")
                       .option("checkpointLocation", cp).start(table))
S.run_query(spark, start_on("warm.t", S.stream_of(200_000, SIZE, "append"), 3), 3, work, 600)
t = time.time()
G.base(spark, N).write.format("versioned").option("primaryKey", "id").mode("append").save("stream.t")
api.awaitCompactions(0)
print("load", round(time.time() - t, 1), flush=True)
cs = S.stream_of(N, SIZE, "append")
app = spark.sparkContext.applicationId
def jobs():
    return json.load(urllib.request.urlopen(f"http://localhost:4078/api/v1/applications/{app}/jobs"))
before = {j["jobId"] for j in jobs()}
progs = S.run_query(spark, start_on("stream.t", cs, B), B, work, 3600)
api.awaitCompactions(0)
from datetime import datetime, timezone
def ts(s): return datetime.strptime(s[:23], "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=timezone.utc).timestamp()
starts = [S._ts(p) for p in progs]
keys = ["latestOffset", "queryPlanning", "walCommit", "addBatch", "commitOffsets", "triggerExecution"]
print("batch | " + " | ".join(keys) + " | other")
for p in progs:
    d = p["durationMs"]
    other = d["triggerExecution"] - sum(d.get(k, 0) for k in keys[:-1])
    print(p["batchId"], "|", " | ".join(str(d.get(k, 0)) for k in keys), "|", other, flush=True)
print("job | group | batch | start after batch start (s) | duration (s) | tasks | description")
for j in sorted(jobs(), key=lambda j: j["jobId"]):
    if j["jobId"] in before: continue
    s0 = ts(j["submissionTime"]) + 0.0
    # the batch whose trigger it started in (UTC timestamps on both sides)
    bi = max([i for i, st in enumerate(starts) if st <= s0 + 0.0005] or [0])
    d = ts(j["completionTime"]) - ts(j["submissionTime"]) if j.get("completionTime") else -1
    grp = "compaction" if "compaction" in (j.get("jobGroup") or "") else "stream"
    print(j["jobId"], "|", grp, "|", bi, "|", round(s0 - starts[bi], 3), "|", round(d, 3), "|", j["numTasks"], "|",
          (j.get("description") or j["name"]).replace("\n", " ")[:90], flush=True)
st = S.stats(progs)
print("rows/s", round(st["rows_per_s"]), "p50", st["p50"], "p99", st["p99"], "add_p50", st["add_p50"], flush=True)
if os.environ.get("JOPTS"):
    pid = jvm.java.lang.ProcessHandle.current().pid()
    os.system(f"jcmd {pid} JFR.dump filename={work}/rec.jfr > /dev/null")
