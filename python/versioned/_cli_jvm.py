"""How the command line starts its own local Spark session: quietly (a log4j configuration of errors only, the
JVM's startup lines filtered from stderr, PySpark's query-context loggers muted), and light (the client compiler only)
for metadata commands."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from typing import Any, Iterator, List, Optional

__all__ = ["local_session", "end_session", "writes_class_archive"]


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


class _ClassArchive:
    """The classes a command's JVM loads, kept between commands as a dynamic class-data-sharing archive (CDS,
    ``-XX:SharedArchiveFile``): a JVM that maps it starts in about half the time (the classes come parsed and
    verified from it instead of from Spark's ~280 jars). The first command with a new key (its Java, PySpark,
    connector jar and JVM options) writes the archive as its JVM exits (``-XX:ArchiveClassesAtExit``) into a file of
    its own; only once that JVM has exited normally is the file renamed into place, with its size in its name, so a
    command never maps an archive that is still being written or was cut short (the JVM would crash on one). The
    archives live in ``VERSIONED_CACHE_DIR`` (default ``$XDG_CACHE_HOME/versioned`` or ``~/.cache/versioned``);
    ``VERSIONED_CLI_CLASS_ARCHIVE=0`` turns them off. The JVM's own checks still apply: an archive whose class path
    no longer matches is ignored (and replaced once its key changes). CDS writes nothing to stdout or stderr here
    (``-Xlog:disable``; JVM errors still go to stderr).

    Example::

        archive = _ClassArchive.for_options("-XX:TieredStopAtLevel=1")
        java_options = archive.java_options() if archive else []
    """

    #: Days an archive of another key is kept after its last use (another PySpark or connector version).
    KEEP_DAYS = 7

    def __init__(self, directory: str, key: str) -> None:
        self.directory = directory
        self.key = key
        self.dumping: Optional[str] = None

    @staticmethod
    def for_options(java_options: str) -> "Optional[_ClassArchive]":
        """The archive for a JVM started with ``java_options``, or None when archives are off or cannot be kept."""
        if os.environ.get("VERSIONED_CLI_CLASS_ARCHIVE", "1").strip().lower() in ("0", "false", "no", "off"):
            return None
        import hashlib
        import shutil

        import pyspark

        import versioned

        parts = [java_options, pyspark.__version__, os.path.dirname(os.path.abspath(pyspark.__file__))]
        # the java Spark's launcher (spark-class) runs: $JAVA_HOME/bin/java, else the one on PATH
        home = os.environ.get("JAVA_HOME")
        java = os.path.join(home, "bin", "java") if home else (shutil.which("java") or "")
        try:
            for path in (versioned.jar_path(), os.path.realpath(java)):
                st = os.stat(path)
                parts += [path, str(st.st_size), str(st.st_mtime_ns)]
        except (OSError, FileNotFoundError):
            return None  # no jar or no java on PATH: the session's own start reports it
        base = os.environ.get("VERSIONED_CACHE_DIR") or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "versioned")
        try:
            os.makedirs(base, exist_ok=True)
        except OSError:
            return None
        return _ClassArchive(base, hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20])

    def _prefix(self) -> str:
        return f"cli-classes-{self.key}-"

    def _complete(self) -> Optional[str]:
        """This key's archive, if one is in place with the size its name records (others are removed)."""
        found = None
        for name in os.listdir(self.directory):
            path = os.path.join(self.directory, name)
            if name.startswith(self._prefix()) and name.endswith(".tmp"):  # left by a JVM that never exited normally
                with contextlib.suppress(OSError):
                    if os.path.getmtime(path) < time.time() - 3600:
                        os.remove(path)
            if not (name.startswith(self._prefix()) and name.endswith(".jsa")):
                continue
            try:
                whole = os.path.getsize(path) == int(name[len(self._prefix()):-4])
            except (OSError, ValueError):
                whole = False
            if whole and found is None:
                found = path
            else:
                with contextlib.suppress(OSError):
                    os.remove(path)
        return found

    def java_options(self) -> List[str]:
        """The JVM options that map this key's archive, or that write it when the JVM exits."""
        quiet = ["-Xlog:disable", "-Xlog:all=error:stderr"]
        try:
            found = self._complete()
        except OSError:
            return []
        if found is not None:
            with contextlib.suppress(OSError):
                os.utime(found)  # its last use, for the clean-up of old keys
            return [f"-XX:SharedArchiveFile={found}"] + quiet
        self.dumping = os.path.join(self.directory, f"{self._prefix()}writing-{os.getpid()}.tmp")
        return [f"-XX:ArchiveClassesAtExit={self.dumping}"] + quiet

    def publish(self, jvm: Any) -> None:
        """After the session stopped: ends the JVM that writes the archive (its gateway's stdin closed), waits for
        it, and puts the archive in place if the JVM exited normally; removes archives of other keys not used for
        :data:`KEEP_DAYS`."""
        if self.dumping is None:
            return
        tmp, self.dumping = self.dumping, None
        try:
            if jvm is not None and jvm.stdin is not None:
                jvm.stdin.close()  # Spark's gateway exits on end of input, writing the archive first
            size = os.path.getsize(tmp) if jvm is not None and jvm.wait(timeout=120) == 0 else 0
            if size > 0:
                os.replace(tmp, os.path.join(self.directory, f"{self._prefix()}{size}.jsa"))
            cutoff = time.time() - self.KEEP_DAYS * 86400
            for name in os.listdir(self.directory):
                path = os.path.join(self.directory, name)
                if name.startswith("cli-classes-") and not name.startswith(self._prefix()) and \
                        os.path.getmtime(path) < cutoff:
                    os.remove(path)
        except Exception:  # noqa: BLE001 - a cache: the command's result stands whatever happens here
            pass
        finally:
            with contextlib.suppress(OSError):
                os.remove(tmp)


#: The class archive of the session :func:`local_session` started in this process, until :func:`end_session`.
_archive: Optional[_ClassArchive] = None


def writes_class_archive() -> bool:
    """Whether the JVM of this process's session writes the class archive as it ends (the first command of a key).

    Example::

        if writes_class_archive():
            print("this command's end keeps its JVM's classes")
    """
    return _archive is not None and _archive.dumping is not None


def end_session(spark: Any) -> None:
    """Stops a session :func:`local_session` started, and keeps the class archive its JVM wrote (the first command of
    a new installation writes it; the next ones start from it).

    Example::

        spark = local_session()
        try:
            spark.sql("SELECT 1").collect()
        finally:
            end_session(spark)
    """
    global _archive
    gateway = getattr(spark.sparkContext, "_gateway", None)
    jvm = getattr(gateway, "proc", None)
    spark.stop()
    archive, _archive = _archive, None
    if archive is not None:
        archive.publish(jvm)


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
    global _archive
    _archive = _ClassArchive.for_options(" ".join(java))
    java += _archive.java_options() if _archive is not None else []
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
