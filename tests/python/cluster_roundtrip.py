"""Commit, read, merge, diff and verify on a Spark standalone cluster (bin/spark-cluster: a master and two workers
on 127.0.0.1, executors in JVMs of their own), with the warehouse on an S3-compatible store and the metastore on
PostgreSQL: what a real deployment has, where the driver's memory and local disk are not the executors'. Run by
test_cluster.py:

    python3 cluster_roundtrip.py <master URL> <s3 endpoint> <bucket> <postgres JDBC URL>

Every result is compared with an oracle (plain Python dictionaries); exits non-zero on the first mismatch.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))

from pyspark.sql import DataFrame, SparkSession  # noqa: E402

import versioned  # noqa: E402
from versioned import Repository  # noqa: E402

Rows = Dict[int, str]


def session(master: str, endpoint: str, bucket: str, pg: str) -> SparkSession:
    builder = SparkSession.builder.master(master).appName("versioned-cluster-roundtrip")
    conf = {
        "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4", "spark.default.parallelism": "4",
        "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
        "spark.executor.memory": "768m", "spark.executor.cores": "1", "spark.cores.max": "2",
        "spark.hadoop.fs.s3a.endpoint": endpoint, "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
        "spark.hadoop.fs.s3a.path.style.access": "true", "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.access.key": "testing", "spark.hadoop.fs.s3a.secret.key": "testing",
        "spark.hadoop.fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        "spark.driver.extraJavaOptions": "-Dlog4j2.level=error",
    }
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = versioned.configure_spark_with_versioned(builder, warehouse=f"s3a://{bucket}/cluster", metastore_url=pg,
                                                     s3a=True).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    versioned.install()
    return spark


def executors(spark: SparkSession) -> List[str]:
    ids = spark.sparkContext._jsc.sc().getExecutorIds()  # type: ignore[union-attr]
    return [str(ids.apply(i)) for i in range(ids.size())]


def frame(spark: SparkSession, rows: Rows, partitions: int = 4) -> DataFrame:
    return spark.createDataFrame(sorted(rows.items()), "id long, name string").repartition(partitions)


def table(spark: SparkSession, ref: str) -> Rows:
    return {r["id"]: r["name"] for r in spark.read.versioned("c.t", ref=ref).collect()}  # type: ignore[attr-defined]


def main(argv: List[str]) -> int:
    master, endpoint, bucket, pg = argv
    spark = session(master, endpoint, bucket, pg)
    deadline = time.time() + 180
    while len(executors(spark)) < 2 and time.time() < deadline:
        time.sleep(1)
    assert len(executors(spark)) >= 2, f"the cluster gave {executors(spark)} executors, not 2"

    base: Rows = {i: f"v{i}" for i in range(3000)}
    frame(spark, base).write.versioned("c.t", primary_key="id", message="first load")  # type: ignore[attr-defined]
    repo = Repository(spark, "c")
    main_branch = repo.default_branch
    first = repo.resolve(main_branch)
    assert table(spark, main_branch) == base

    repo.create_branch("dev", main_branch)
    changes: Rows = {**{i: f"dev{i}" for i in range(0, 100)}, **{i: f"new{i}" for i in range(3000, 3050)}}
    repo.upsert(frame(spark, changes, 3), "t", branch="dev", message="dev: 100 updates, 50 inserts")
    repo.delete_where("t", "id >= 2900 AND id < 2950", branch="dev")
    dev: Rows = {k: v for k, v in {**base, **changes}.items() if not 2900 <= k < 2950}
    assert table(spark, "dev") == dev

    repo.upsert(frame(spark, {1500: "main1500"}, 1), "t", branch=main_branch, message="main moves on")
    merged = repo.merge("dev", main_branch).check()
    expected = {**dev, 1500: "main1500"}
    assert table(spark, main_branch) == expected, "the three-way merge on the cluster"
    assert table(spark, first) == base, "time travel to the first load"
    print(f"ok: merge {merged.status} on executors {executors(spark)}", flush=True)

    diff = repo.diff("t", first, main_branch).collect()
    kinds: Dict[str, int] = {}
    for row in diff:
        kinds[row["_change"]] = kinds.get(row["_change"], 0) + 1
    assert kinds == {"update": 101, "insert": 50, "delete": 50}, kinds
    assert repo.verify().filter("status != 'ok'").count() == 0, "verify found a damaged object"
    print("ok: round trip on a standalone cluster (S3 + PostgreSQL)", flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
