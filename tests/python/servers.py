"""Servers the out-of-process round trips share (test_s3_remotes.py, test_cluster.py), as pytest fixtures: a moto
S3 server on 127.0.0.1 with a bucket ``versioned``, a fresh database on the PostgreSQL of
VERSIONED_TEST_POSTGRES_URL, and the s3a jars. Each skips, with the reason, when its server or Maven Central is
unavailable; bin/test provides all three.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from typing import Iterator, List

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


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
