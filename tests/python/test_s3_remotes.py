"""Remotes on an S3-compatible store and PostgreSQL (docs/REMOTES.md): a moto S3 server on 127.0.0.1 with a
bucket, a fresh PostgreSQL database as the remote's metastore, and s3_roundtrip.py run in its own Spark with
the s3a jars (versioned.install_s3a_jars). Skipped, with the reason, when moto, PostgreSQL
(VERSIONED_TEST_POSTGRES_URL, printed by bin/setup-postgres) or Maven Central is unavailable; bin/test
provides all three.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Any, List

import pytest

from servers import postgres_url, s3_endpoint, s3a_jars  # noqa: F401 - fixtures

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(autouse=True)
def warehouse() -> None:
    """This module runs its own Spark in a subprocess: it does not need the suites' session."""
    return None


def test_the_s3a_jars_match_pysparks_hadoop_and_are_cached(s3a_jars: List[str]) -> None:
    from versioned.s3a import hadoop_version, install_s3a_jars

    names = [os.path.basename(j) for j in s3a_jars]
    assert f"org.apache.hadoop_hadoop-aws-{hadoop_version()}.jar" in names
    sdk = {re.sub(r"^software\.amazon\.awssdk_(.+)-[0-9.]+\.jar$", r"\1", n) for n in names
           if n.startswith("software.amazon.awssdk_")}
    assert {"s3", "sts", "s3-transfer-manager", "sdk-core"} <= sdk and "bundle" not in sdk
    assert not any(n.startswith(("io.netty_", "org.slf4j_")) for n in names), "PySpark ships those already"
    assert all(os.path.isfile(j) for j in s3a_jars)
    assert install_s3a_jars() == s3a_jars  # the cache is reused


def test_clone_fetch_pull_push_on_s3_and_postgresql(s3_endpoint: str, postgres_url: str, s3a_jars: List[str],
                                                     tmp_path: Any) -> None:
    done = subprocess.run([sys.executable, os.path.join(HERE, "s3_roundtrip.py"), s3_endpoint, "versioned",
                           postgres_url, str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-8000:]
    assert "ok: round trip on S3 + PostgreSQL" in done.stdout
    assert done.stdout.count("match the oracle") >= 8
