"""The connector on a Spark standalone cluster (bin/spark-cluster: a master and two workers on 127.0.0.1, each
executor a JVM of its own) with an S3 (moto) warehouse and a PostgreSQL metastore: cluster_roundtrip.py commits,
reads, merges, diffs and verifies there in its own driver. Skipped, with the reason, when moto, PostgreSQL or the
s3a jars are unavailable; bin/test provides them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Iterator, List

import pytest

from servers import postgres_url, s3_endpoint, s3a_jars  # noqa: F401 - fixtures

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


@pytest.fixture(autouse=True)
def warehouse() -> None:
    """This module runs its own Spark in a subprocess: it does not need the suites' session."""
    return None


@pytest.fixture
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = dict(os.environ, SPARK_CLUSTER_DIR=str(tmp_path_factory.mktemp("spark-cluster")),
               SPARK_CLUSTER_PORT=os.environ.get("SPARK_CLUSTER_PORT", "7178"))
    script = os.path.join(ROOT, "bin", "spark-cluster")
    started = subprocess.run([script, "start"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             timeout=300, check=False)
    try:
        assert started.returncode == 0, started.stdout[-4000:]
        yield started.stdout.strip().splitlines()[-1]
    finally:
        subprocess.run([script, "stop"], env=env, timeout=120, check=False)


def test_commit_read_merge_diff_on_a_standalone_cluster(cluster: str, s3_endpoint: str, postgres_url: str,
                                                        s3a_jars: List[str]) -> None:
    assert cluster.startswith("spark://127.0.0.1:")
    done = subprocess.run([sys.executable, os.path.join(HERE, "cluster_roundtrip.py"), cluster, s3_endpoint,
                           "versioned", postgres_url], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-8000:]
    assert "ok: round trip on a standalone cluster (S3 + PostgreSQL)" in done.stdout
