"""A local Spark Connect server for the tests: ``spark-submit`` of Spark's Connect server (shipped in the
pyspark wheel) with the connector jar, on a free port of 127.0.0.1."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from typing import Mapping

import pyspark

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"

# The test drivers' JVM options (the classic session's and the Connect server's): quiet logging, and a JVM that
# spends less of the two cores on itself (the client compiler only, the serial collector). The tests' work is many
# small queries, which never reach the optimizing compiler's pay-off; and a cache of compiled generated code that
# holds the shapes of every test's queries (10,000 classes instead of Spark's 100: the same queries recur across
# tests; a cache's size changes no result). The product's settings are untouched.
DRIVER_JAVA_OPTIONS = ("-Dlog4j2.level=error -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
                       " -Dspark.sql.codegen.cache.maxEntries=10000")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ConnectServer:
    """Starts the server and waits until it accepts connections; :meth:`stop` ends it."""

    def __init__(self, jar: str, conf: Mapping[str, str], workdir: str, timeout: float = 180.0) -> None:
        spark_home = os.path.dirname(os.path.abspath(pyspark.__file__))
        self.port = _free_port()
        self.url = f"sc://127.0.0.1:{self.port}"
        cmd = [os.path.join(spark_home, "bin", "spark-submit"), "--class", SERVER_CLASS, "--master", "local[2]",
               "--jars", jar, "--conf", f"spark.connect.grpc.binding.port={self.port}",
               "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
               "--conf", f"spark.driver.extraJavaOptions={DRIVER_JAVA_OPTIONS}"]
        for key, value in conf.items():
            cmd += ["--conf", f"{key}={value}"]
        env = dict(os.environ, SPARK_HOME=spark_home)
        self.log_path = os.path.join(workdir, "connect-server.log")
        self._log = open(self.log_path, "wb")
        self.process = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, env=env, cwd=workdir)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the Spark Connect server exited ({self.process.returncode}); see {self.log_path}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"the Spark Connect server did not start within {timeout:.0f} s; see {self.log_path}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
