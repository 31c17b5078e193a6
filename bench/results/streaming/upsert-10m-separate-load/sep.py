"""Issue 34, p99 of the 1,000-row upsert stream into 10M: is the slow start a cost of the stream or of the bench's
own 10M load in the same JVM? PHASE=load: a process loads the 10M table (as the bench: fragments of 1M rows,
compactions awaited) and exits. PHASE=stream: a new process opens the same warehouse, runs the bench's untimed
warm-up (50 batches of 1,000 upserts into a table of 200,000 rows) and then the timed stream of B batches into the
existing 10M table, as a user's stream starts on an existing table. PHASE=same: load and stream in one process
(what bench/run.py does). Driver as the bench's (4g, -Xms4g -XX:+AlwaysPreTouch, local[2], 200 shuffle partitions).
Writes per-batch times to $WORK/<phase>.json. Usage (under the bench lock):
  WORK=/tmp/sep PHASE=load python3 sep.py && WORK=/tmp/sep PHASE=stream python3 sep.py"""
import json, os, shutil, sys, time
HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "..", "..")
sys.path.insert(0, BENCH)
import datagen as G
import wl_streaming as S
from common import driver_java_options
from pyspark.sql import SparkSession
N = int(os.environ.get("N", "10000000")); B = int(os.environ.get("B", "1000")); PHASE = os.environ["PHASE"]
work = os.environ.get("WORK", "/tmp/sep")
if PHASE in ("load", "same"):
    shutil.rmtree(work, ignore_errors=True); os.makedirs(work)
    shutil.copyfile(os.environ.get("JAR", os.path.join(BENCH, "..", "python", "versioned", "jars", "versioned-spark-assembly.jar")), work + "/v.jar")
spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "4g")
         .config("spark.driver.extraJavaOptions", driver_java_options("4g")).config("spark.jars", work + "/v.jar")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.shuffle.partitions", "200").config("spark.versioned.warehouse", work + "/wh")
         .config("spark.versioned.author", "bench").config("spark.local.dir", work + "/local").getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
api = getattr(spark.sparkContext._jvm, "versioned.spark.api.VersionedApi")
frag = lambda n: spark.conf.set("spark.versioned.fragment.targetRows", str(max(1000, min(n // 10, 1_000_000))))
def load(df, table):
    df.write.format("versioned").option("upsert", "false").option("primaryKey", "id").option("message", "load") \
        .mode("append").save(table)
t0 = time.time()
if PHASE == "load":
    frag(N); load(G.base(spark, N), "stream.upsert_1000"); api.awaitCompactions(0)
    print("loaded", N, "rows in", round(time.time() - t0, 1), "s", flush=True)
    sys.exit(0)
def start_of(table, cs, b):
    return lambda cp: (S.source(spark, cs, b, with_op=False).writeStream.format("versioned")
                       .option("checkpointLocation", cp).option("upsert", "true").start(table))
# the bench's warm-up: 50 batches of 1,000 upserts into a table of 200,000 rows (untimed)
frag(S.WARM_ROWS); load(G.base(spark, S.WARM_ROWS), "warm.stream_upsert_1000")
S.run_query(spark, start_of("warm.stream_upsert_1000", S.stream_of(S.WARM_ROWS, 1000, "upsert"), 50), 50, work, 3600)
api.awaitCompactions(0)
frag(N)
if PHASE == "same":
    load(G.base(spark, N), "stream.upsert_1000"); api.awaitCompactions(0)
print("ready after", round(time.time() - t0, 1), "s; streaming", B, "batches", flush=True)
s = S.stats(S.run_query(spark, start_of("stream.upsert_1000", S.stream_of(N, 1000, "upsert"), B), B, work, 3600))
api.awaitCompactions(0)
json.dump(s, open(f"{work}/{PHASE}.json", "w"))
t = s["trigger_s"]; a = s["add_s"]
print(PHASE, "rows/s", round(s["rows_per_s"]), "p50", round(s["p50"], 3), "p99", round(s["p99"], 3), "ratio",
      round(s["p99"] / s["p50"], 2), "add p50", round(s["add_p50"], 3), "add p99", round(s["add_p99"], 3))
for lo, hi in [(0, 50), (50, 100), (100, 150), (150, 1000)]:
    tt = t[lo:hi]
    if tt:
        print(f" batches {lo+1}-{min(hi, len(t))}: p50 {S.pct(tt, .5):.3f} max {max(tt):.3f} add p50 {S.pct(a[lo:hi], .5):.3f}"
              f" over 2x overall p50: {sum(x > 2 * s['p50'] for x in tt)}")
print(" from batch 151: p99/p50", round(S.pct(t[150:], .99) / S.pct(t[150:], .5), 2) if len(t) > 150 else "-")
