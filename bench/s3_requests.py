"""Object-store requests per operation (issue: "Request counts on an object store"): on an object store every
object is a request, and a cost. A table of N rows (about ten fragments) lives in an ``s3a://`` warehouse on a
local S3 server (moto, 127.0.0.1, in this process); each operation below runs once and the server counts the
HTTP requests it answers during it (from its request log: PUT, GET of an object, LIST (a GET of the bucket),
HEAD, DELETE, POST (multipart uploads, bulk deletes)). A rename on S3 is a copy (a PUT) and a DELETE.
Counts, not times: they do not depend on the host's load.

    python3 bench/s3_requests.py [--rows 1000000] [--k 1000] [--results bench/results]

Needs ``moto[server]``, boto3 and the s3a jars (``bin/install-s3a-jars``), like tests/python/test_s3_remotes.py.
Writes ``s3-requests.md`` and ``s3-requests.json`` in the results directory.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from typing import Any, Callable, Dict, List
from urllib.parse import urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

#: The request kinds counted, in the order reported.
KINDS: List[str] = ["PUT", "GET", "LIST", "HEAD", "DELETE", "POST"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_REQUEST = re.compile(r'"(GET|PUT|HEAD|POST|DELETE) (\S+) HTTP')


class RequestCounter(logging.Handler):
    """Counts the requests moto's HTTP server (werkzeug) logs, by kind."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()
        self.guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        m = _REQUEST.search(_ANSI.sub("", record.getMessage()))  # werkzeug colours the lines of some statuses
        if m:
            method, path = m.groups()
            bucket_only = urlsplit(path).path.strip("/").count("/") == 0
            kind = "LIST" if method == "GET" and bucket_only else method
            with self.guard:
                self.counts[kind] += 1

    def snapshot(self) -> Dict[str, int]:
        with self.guard:
            return {k: self.counts[k] for k in KINDS}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--k", type=int, default=1000, help="changed rows of the small commit")
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    args = ap.parse_args()

    import boto3
    from moto.server import ThreadedMotoServer
    from pyspark.sql import SparkSession, functions as F

    import versioned
    from versioned import Repository

    counter = RequestCounter()
    werkzeug = logging.getLogger("werkzeug")
    werkzeug.setLevel(logging.INFO)
    werkzeug.addHandler(counter)
    werkzeug.propagate = False
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                 aws_secret_access_key="testing").create_bucket(Bucket="bench")
    scratch = tempfile.mkdtemp(prefix="versioned-s3-requests-")
    builder = SparkSession.builder.master("local[2]").appName("versioned-s3-requests")
    for key, value in {
        "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4",
        "spark.driver.memory": "4g",
        "spark.versioned.fragment.targetRows": str(max(1, args.rows // 10)),
        "spark.hadoop.fs.s3a.endpoint": endpoint, "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
        "spark.hadoop.fs.s3a.path.style.access": "true", "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.access.key": "testing", "spark.hadoop.fs.s3a.secret.key": "testing",
        "spark.hadoop.fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
    }.items():
        builder = builder.config(key, value)
    spark = versioned.configure_spark_with_versioned(builder, warehouse="s3a://bench/wh",
                                                     metastore_url=f"jdbc:sqlite:{scratch}/metastore.db",
                                                     s3a=True).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    versioned.install()
    rows: List[Dict[str, Any]] = []

    def measure(name: str, what: str, fn: Callable[[], Any]) -> None:
        before = counter.snapshot()
        t0 = time.perf_counter()
        fn()
        seconds = time.perf_counter() - t0
        after = counter.snapshot()
        delta = {k: after[k] - before[k] for k in KINDS}
        rows.append({"step": name, "what": what, "seconds": round(seconds, 3), **delta})
        print(f"{name}: {delta} in {seconds:.2f} s", flush=True)

    n, k = args.rows, args.k
    base = spark.range(n).select(F.col("id"), (F.col("id") * 7 % 1000).cast("int").alias("a"),
                                 F.sha2(F.col("id").cast("string"), 256).substr(1, 16).alias("s"))
    measure("load", f"first load of {n:,} rows", lambda: base.write.versioned("s.t", primary_key="id"))
    repo = Repository(spark, "s")
    step = max(1, n // k)
    changes = spark.range(0, n, step).limit(k).select(F.col("id"), F.lit(-1).alias("a"), F.lit("changed").alias("s"))
    measure("commit_k", f"upsert of {k:,} scattered rows (one write)", lambda: repo.upsert(changes, "t"))
    one = spark.createDataFrame([(n + 1, 1, "one")], "id long, a int, s string")
    measure("commit_1", "upsert of 1 new row", lambda: repo.upsert(one, "t"))
    measure("scan", "full scan of the head (count of every column)",
            lambda: spark.read.versioned("s.t").select(F.sum(F.hash("id", "a", "s"))).collect())
    measure("point", "point read by key (id = 12345)",
            lambda: spark.read.versioned("s.t").filter("id = 12345").collect())
    first = repo.log().collect()[-1]["hash"]
    measure("diff", f"diff of the last two commits ({k + 1:,} changes) against the load",
            lambda: repo.diff("t", first, repo.default_branch).count())
    measure("branch", "create a branch (metadata only)", lambda: repo.create_branch("b"))

    spark.stop()
    server.stop()
    os.makedirs(args.results, exist_ok=True)
    meta = {"rows": n, "k": k, "load_average": os.getloadavg(), "when": time.strftime("%Y-%m-%d %H:%M:%S")}
    with open(os.path.join(args.results, "s3-requests.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=2)
    head = "| step | what | " + " | ".join(KINDS) + " | seconds |"
    lines = [f"# Object-store requests per operation (N = {n:,}, about 10 fragments, moto S3 on 127.0.0.1)", "",
             "Requests the S3 server answered during each operation; `bench/s3_requests.py`. Load average "
             f"{meta['load_average'][0]:.1f} (counts do not depend on it).", "",
             head, "|" + "---|" * (len(KINDS) + 3)]
    for r in rows:
        lines.append(f"| {r['step']} | {r['what']} | " + " | ".join(str(r[k]) for k in KINDS) +
                     f" | {r['seconds']} |")
    with open(os.path.join(args.results, "s3-requests.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
