"""How the command line starts its own local Spark session: quietly (a log4j configuration of errors only, the
JVM's startup lines filtered from stderr, PySpark's query-context loggers muted), and light (the client compiler only)
for metadata commands."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Any, Iterator, Optional

__all__ = ["local_session"]


_LOG4J2 = """# written by versioned.cli: errors only. The root level stays at warn (the level Spark assumes for
# interactive use, so it prints no "Setting default log level" banner); the appender drops warnings.
rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.filter.threshold.type = ThresholdFilter
appender.console.filter.threshold.level = error
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %p %c{1}: %m%n
# a refused write's "Data source write support ... is aborting/aborted" lines: the command prints the error itself
logger.v2write.name = org.apache.spark.sql.execution.datasources.v2
logger.v2write.level = off
"""


def _quiet_log4j() -> Optional[str]:
    """A log4j2 configuration that prints only errors (also silences Spark's startup banner)."""
    import tempfile

    path = os.path.join(tempfile.gettempdir(), "versioned-cli-log4j2.properties")
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == _LOG4J2:
                return path
    except OSError:
        pass
    tmp = f"{path}.{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(_LOG4J2)
        os.replace(tmp, path)
    except OSError:
        return None  # Spark's default logging then; the command still works
    return path


_LIGHT_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"  # about 35% faster startup; slower on big data
#: Lines the JVM and Spark print on stderr while they start that say nothing to a user of the command line (the
#: JDK's note on the incubator module Spark adds, Spark's log4j banners); anything else is passed on.
_JVM_NOISE = ("WARNING: Using incubator modules:", "Using Spark's default log4j profile:",
              "Setting default log level to", "To adjust logging level use sc.setLogLevel")


def _forward(source: int, target: int) -> None:
    """Copies what arrives on fd ``source`` to fd ``target``, dropping whole lines that start with a
    :data:`_JVM_NOISE` prefix; a partial line that cannot become one is passed on at once."""
    pending = b""
    noise = [n.encode() for n in _JVM_NOISE]
    while True:
        try:
            chunk = os.read(source, 65536)
        except OSError:
            return
        if not chunk:
            if pending:
                os.write(target, pending)
            return
        pending += chunk
        out = b""
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            if not any(line.startswith(n) for n in noise):
                out += line + b"\n"
        if pending and not any(n.startswith(pending[:len(n)]) for n in noise):
            out, pending = out + pending, b""
        if out:
            try:
                os.write(target, out)
            except OSError:
                return


@contextlib.contextmanager
def _quiet_jvm_start() -> Iterator[None]:
    """While the block starts the JVM, its inherited stderr is a pipe whose lines a daemon thread passes on to
    this process's stderr without the startup noise (:data:`_JVM_NOISE`); the JVM keeps the pipe, so its later
    errors still reach stderr. Python's own stderr is restored when the block ends.

    Example::

        with _quiet_jvm_start():
            spark = builder.getOrCreate()
    """
    try:
        sys.stderr.flush()
        saved = os.dup(2)
        read_end, write_end = os.pipe()
    except OSError:  # no file descriptors to play with (an embedded interpreter): Spark's output as it is
        yield
        return
    os.dup2(write_end, 2)
    os.close(write_end)
    threading.Thread(target=_forward, args=(read_end, saved), name="versioned-jvm-stderr", daemon=True).start()
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)


def local_session(light: bool = True) -> Any:
    """A quiet local session for one command: no UI, no progress bar, few shuffle partitions.

    Example::

        spark = local_session(light=True)   # refs and history only: a faster-starting JVM
    """
    import versioned
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master(os.environ.get("VERSIONED_MASTER", "local[*]"))
               .appName("versioned-cli")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.default.parallelism", "4")
               .config("spark.sql.session.timeZone", "UTC"))
    log4j = _quiet_log4j()
    java = [f"-Dlog4j2.configurationFile={log4j}"] if log4j is not None else []
    java += [_LIGHT_JVM] if light else []
    java += [os.environ["VERSIONED_JAVA_OPTIONS"]] if os.environ.get("VERSIONED_JAVA_OPTIONS") else []
    if java:
        builder = builder.config("spark.driver.extraJavaOptions", " ".join(java))
    with _quiet_jvm_start():
        spark = versioned.configure_spark_with_versioned(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    _quiet_query_context_loggers()
    return spark


def _quiet_query_context_loggers() -> None:
    """PySpark logs a failed query's whole Java stack trace (loggers ``SQLQueryContextLogger`` and
    ``DataFrameQueryContextLogger``) before the command prints the error's one line; ``VERSIONED_DEBUG=1`` keeps it."""
    if os.environ.get("VERSIONED_DEBUG"):
        return
    from pyspark.logger import PySparkLogger

    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True  # PySpark's own class: its calls pass keyword fields
