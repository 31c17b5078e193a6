"""The profile of results.md: N=1000000 SIZE=100000 B=4 KIND=append python3 profile_append.py (JAR= the connector's
assembly; JOPTS= driver Java options, e.g. -XX:StartFlightRecording=settings=profile, dumped to $WORK/rec.jfr)."""
import os, sys, time, json, shutil, tempfile, urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
import datagen as G
import wl_streaming as S
from pyspark.sql import SparkSession
N = int(os.environ.get("N", "1000000")); SIZE = int(os.environ.get("SIZE", "100000")); B = int(os.environ.get("B", "4"))
KIND = os.environ.get("KIND", "append")
work = os.environ.get("WORK", "/tmp/profile-append"); shutil.rmtree(work, ignore_errors=True); os.makedirs(work)
jar = work + "/v.jar"; shutil.copyfile(os.environ.get("JAR", "python/versioned/jars/versioned-spark-assembly.jar"), jar)
spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "3g").config("spark.jars", jar)
         .config("spark.ui.port", "4077").config("spark.driver.extraJavaOptions", os.environ.get("JOPTS", "")).config("spark.ui.showConsoleProgress", "false")
         .config("spark.versioned.warehouse", work + "/wh").config("spark.local.dir", work + "/local").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
spark.conf.set("spark.versioned.fragment.targetRows", str(max(1000, min(N // 10, 1_000_000))))
t = time.time()
G.base(spark, N).write.format("versioned").option("primaryKey", "id").mode("append").save("stream.t")
getattr(spark.sparkContext._jvm, "versioned.spark.api.VersionedApi").awaitCompactions(0)
print("load", round(time.time() - t, 1), flush=True)
cs = S.stream_of(N, SIZE, KIND)
app = spark.sparkContext.applicationId
def jobs():
    return json.load(urllib.request.urlopen(f"http://localhost:4077/api/v1/applications/{app}/jobs"))
before = {j["jobId"] for j in jobs()}
def start(cp):
    return (S.source(spark, cs, B, with_op=False).writeStream.format("versioned").option("checkpointLocation", cp)
            .option("upsert", str(KIND == "upsert").lower()).start("stream.t"))
progs = S.run_query(spark, start, B, work, 3600)
for p in progs:
    print(p["batchId"], p["numInputRows"], p["durationMs"], flush=True)
from datetime import datetime
def ts(s): return datetime.strptime(s[:23], "%Y-%m-%dT%H:%M:%S.%f").timestamp()
for j in sorted(jobs(), key=lambda j: j["jobId"]):
    if j["jobId"] in before: continue
    d = ts(j["completionTime"]) - ts(j["submissionTime"]) if j.get("completionTime") else -1
    print(j["jobId"], round(d, 2), j.get("jobGroup"), (j.get("description") or "")[:60], "|", j["name"][:70], j["numTasks"])
print(S.stats(progs)["rows_per_s"])
if os.environ.get("JOPTS"):
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    os.system(f"jcmd {pid} JFR.dump filename={work}/rec.jfr > /dev/null")
