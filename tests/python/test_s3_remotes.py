"""Remotes on an S3-compatible store and PostgreSQL (docs/REMOTES.md): a moto S3 server on 127.0.0.1 with a
bucket, a fresh PostgreSQL database as the remote's metastore, and s3_roundtrip.py run in its own Spark with
the s3a jars (versioned.install_s3a_jars). Skipped, with the reason, when moto, PostgreSQL
(VERSIONED_TEST_POSTGRES_URL, printed by bin/setup-postgres) or Maven Central is unavailable; bin/test
provides all three.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from typing import Any, Iterator, List

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(autouse=True)
def warehouse() -> None:
    """This module runs its own Spark in a subprocess: it does not need the suites' session."""
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def s3_endpoint() -> Iterator[str]:
    moto_server = pytest.importorskip("moto.server", reason="moto[server] is not installed (bin/test installs it)")
    boto3 = pytest.importorskip("boto3")
    port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    try:
        endpoint = f"http://127.0.0.1:{port}"
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                     aws_secret_access_key="testing").create_bucket(Bucket="versioned")
        yield endpoint
    finally:
        server.stop()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh database on the PostgreSQL of VERSIONED_TEST_POSTGRES_URL (dropped afterwards)."""
    admin = os.environ.get("VERSIONED_TEST_POSTGRES_URL")
    if not admin:
        pytest.skip("PostgreSQL unavailable: set VERSIONED_TEST_POSTGRES_URL (bin/setup-postgres prints it)")
    if shutil.which("psql") is None:
        pytest.skip("psql is not installed (bin/setup-postgres installs it)")
    m = re.match(r"jdbc:postgresql://([^:/]+):?(\d*)/([^?]+)\?(.*)$", admin)
    assert m, f"unexpected VERSIONED_TEST_POSTGRES_URL {admin}"
    host, port, _, query = m.groups()
    params = dict(p.split("=", 1) for p in query.split("&"))
    env = dict(os.environ, PGPASSWORD=params.get("password", ""))
    psql = ["psql", "-h", host, "-p", port or "5432", "-U", params["user"], "-d", "postgres", "-qc"]
    db = f"versioned_s3_{os.getpid()}_{int(time.time())}"
    subprocess.run(psql + [f"CREATE DATABASE {db}"], env=env, check=True)
    try:
        yield f"jdbc:postgresql://{host}:{port or 5432}/{db}?{query}"
    finally:
        subprocess.run(psql + [f"DROP DATABASE IF EXISTS {db}"], env=env, check=False)


@pytest.fixture
def s3a_jars() -> List[str]:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))
    from versioned.s3a import install_s3a_jars

    try:
        return install_s3a_jars()
    except RuntimeError as e:
        pytest.skip(f"the s3a jars could not be installed (Maven Central unreachable?): {str(e)[:300]}")


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
