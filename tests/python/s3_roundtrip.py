"""The remote round trip on an S3-compatible store and PostgreSQL, in its own Spark (the s3a jars must be on
the classpath when the JVM starts, so it cannot share the suites' session). Run by test_s3_remotes.py:

    python3 s3_roundtrip.py <s3 endpoint> <bucket> <postgres JDBC URL with user and password> <scratch dir>

The remote ("origin") warehouse is s3a://<bucket>/wh with its metastore on PostgreSQL; the local ones are
directories with SQLite metastores: a lazy clone (reads origin's objects in place on S3) and a full one
(download="all"). Every version of every side is compared with an oracle (the rows each commit must hold).
Exits non-zero on the first mismatch.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Dict, List, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))

from pyspark.sql import SparkSession  # noqa: E402

import versioned  # noqa: E402
from versioned import NonFastForward, Repository  # noqa: E402

Rows = List[Tuple[int, str]]


def session(endpoint: str, user: str, password: str, local: str) -> SparkSession:
    builder = SparkSession.builder.master("local[2]").appName("versioned-s3-roundtrip")
    conf = {
        "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2",
        "spark.hadoop.fs.s3a.endpoint": endpoint, "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
        "spark.hadoop.fs.s3a.path.style.access": "true", "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.access.key": "testing", "spark.hadoop.fs.s3a.secret.key": "testing",
        "spark.hadoop.fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        # the remote's metastore credentials come from the session, never from the recorded URL
        "spark.versioned.remote.origin.metastore.user": user,
        "spark.versioned.remote.origin.metastore.password": password,
        "spark.driver.extraJavaOptions": "-Dlog4j2.level=error",
    }
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = versioned.configure_spark_with_versioned(builder, warehouse=local, s3a=True).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    versioned.install()
    return spark


class RoundTrip:
    def __init__(self, spark: SparkSession, s3: str, pg: str, pg_plain: str) -> None:
        self.spark, self.s3, self.pg, self.pg_plain = spark, s3, pg, pg_plain
        self.oracle: Dict[str, Rows] = {}  # image hash -> the rows of table t it must hold
        self.origin = Repository(spark, "r", warehouse=s3, metastore_url=pg)

    def frame(self, rows: Rows):  # noqa: ANN201
        return self.spark.createDataFrame(rows, "id long, name string")

    def commit(self, repo: Repository, rows: Rows, message: str) -> str:
        """An upsert of `rows`; records what the new head must hold (its parent's rows updated by `rows`)."""
        before = dict(self.oracle[repo.resolve("main")]) if self.oracle else {}
        head = repo.upsert(self.frame(rows), "t", message=message, primary_key=None if self.oracle else "id")
        before.update(dict(rows))
        self.oracle[head] = sorted(before.items())
        return head

    def read(self, repo: Repository, image: str) -> Rows:
        reader = self.spark.read.format("versioned").option("image", image)
        for key, value in repo._options.items():  # the repository's warehouse and metastore
            reader = reader.option(key, value)
        return sorted(tuple(r) for r in reader.load(f"{repo.name}.t").collect())

    def merged(self, repo: Repository, rows: Rows) -> None:
        """A pull merged into `repo`'s main: its new head must hold `rows`."""
        self.oracle[repo.resolve("main")] = sorted(rows)

    def check(self, repo: Repository, where: str) -> List[str]:
        """Every version on main of `repo` holds what the oracle says; returns the history (newest first)."""
        history = [r["hash"] for r in repo.log("main").collect()]
        for image in history:
            assert image in self.oracle, f"{where}: {image[:12]} is no version this test made"
            got = self.read(repo, image)
            assert got == self.oracle[image], f"{where} {image[:12]}: {got} != {self.oracle[image]}"
        print(f"ok: {where}: {len(history)} versions match the oracle", flush=True)
        return history

    def run(self, local: str) -> None:
        origin = self.origin
        self.commit(origin, [(1, "a"), (2, "b")], "origin creates t")
        self.commit(origin, [(2, "B"), (3, "c")], "origin updates 2, adds 3")
        theirs = self.check(origin, "origin on S3")

        lazy = versioned.clone(self.spark, "r", warehouse=self.s3, metastore_url=self.pg_plain)
        assert self.check(lazy, "lazy clone") == theirs
        assert not any(f for _, _, fs in os.walk(os.path.join(local, "objects")) for f in fs), \
            "a lazy clone copies no object"
        full = versioned.clone(self.spark, "r", warehouse=self.s3, metastore_url=self.pg_plain, into="r_full",
                               download="all")
        assert self.check(full, "full clone") == theirs
        assert full.verify().filter("status != 'ok'").count() == 0

        # commits on both sides, fetch (moves origin/main only), pull (a merge), push
        self.commit(origin, [(4, "d")], "origin adds 4")
        mine = self.commit(lazy, [(5, "e")], "clone adds 5")
        fetched = lazy.fetch()
        assert fetched.images == 1, fetched
        assert lazy.resolve("main") == mine and lazy.resolve("origin/main") == origin.resolve("main")
        pulled = lazy.pull()
        assert pulled.ok and pulled.status == "merged", pulled
        self.merged(lazy, [(1, "a"), (2, "B"), (3, "c"), (4, "d"), (5, "e")])
        self.check(lazy, "lazy clone after pull")
        pushed = lazy.push()
        assert pushed.status == "fast_forward" and pushed.uploaded >= 1, pushed
        assert origin.resolve("main") == lazy.resolve("main")
        self.check(origin, "origin after push")

        # origin moves on: the push is rejected and changes nothing there; pull, then push again
        self.commit(origin, [(6, "f")], "origin adds 6")
        self.commit(lazy, [(1, "A")], "clone updates 1")
        before = [r["hash"] for r in origin.log("main").collect()]
        try:
            lazy.push()
            raise AssertionError("a push of a diverged branch was accepted")
        except NonFastForward:
            pass
        assert [r["hash"] for r in origin.log("main").collect()] == before, "a rejected push changed the origin"
        lazy.pull().check()
        self.merged(lazy, [(1, "A"), (2, "B"), (3, "c"), (4, "d"), (5, "e"), (6, "f")])
        assert lazy.push().status == "fast_forward"
        assert self.check(origin, "origin after the second push") == self.check(lazy, "lazy clone, final")

        full.pull().check()  # a fast-forward of the full clone to everything both sides did
        assert self.check(full, "full clone, final") == [r["hash"] for r in origin.log("main").collect()]
        assert self.read(full, full.resolve("main")) == [(1, "A"), (2, "B"), (3, "c"), (4, "d"), (5, "e"), (6, "f")]


def main(argv: List[str]) -> int:
    endpoint, bucket, pg, scratch = argv
    user = re.search(r"[?&]user=([^&]*)", pg).group(1)  # type: ignore[union-attr]
    password = re.search(r"[?&]password=([^&]*)", pg).group(1)  # type: ignore[union-attr]
    pg_plain = re.sub(r"[?&](user|password)=[^&]*", "", pg)
    local = os.path.join(scratch, "local")
    spark = session(endpoint, user, password, local)
    try:
        RoundTrip(spark, f"s3a://{bucket}/wh", pg, pg_plain).run(local)
    finally:
        spark.stop()
    print("ok: round trip on S3 + PostgreSQL", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
