"""s3a support for pip's PySpark, which ships Hadoop's client jars but not ``hadoop-aws`` nor the AWS SDK.

:func:`install_s3a_jars` downloads, once, the ``hadoop-aws`` release that matches the Hadoop bundled in the
installed PySpark (``pyspark/jars/hadoop-client-api-<version>.jar``) and the AWS SDK v2 modules it needs, at
the SDK version that ``hadoop-aws`` release declares (its parent pom's ``aws-java-sdk-v2.version``). They
are resolved from Maven Central with Spark's own resolver (``spark-submit --packages``, Ivy), with the
SDK's ``bundle`` (~640 MB) replaced by the modules s3a uses (``s3``, ``sts``, ``s3-transfer-manager`` and
their dependencies, ~15 MB); artifacts PySpark already ships (Netty, httpclient, SLF4J) are left out. The
jars are kept in a cache directory; later calls only read it.

Command line (prints the jars, comma-separated, for ``--jars`` / ``spark.jars``)::

    bin/install-s3a-jars [--cache-dir DIR]
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from typing import List, Optional, Set

__all__ = ["install_s3a_jars", "hadoop_version", "S3A_CACHE_ENV"]

S3A_CACHE_ENV = "VERSIONED_S3A_CACHE"
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
_SDK_MODULES = ("s3", "sts", "s3-transfer-manager")
_MANIFEST = "jars.txt"


def _pyspark_dir() -> str:
    import pyspark

    return os.path.dirname(os.path.abspath(pyspark.__file__))


def hadoop_version() -> str:
    """The Hadoop version bundled in the installed PySpark (from ``jars/hadoop-client-api-<version>.jar``).

    Example::

        >>> hadoop_version()
        '3.5.0'
    """
    found = glob.glob(os.path.join(_pyspark_dir(), "jars", "hadoop-client-api-*.jar"))
    if not found:
        raise RuntimeError(f"No hadoop-client-api jar in {_pyspark_dir()}/jars: is this a pip-installed PySpark?")
    return re.sub(r"^hadoop-client-api-(.+)\.jar$", r"\1", os.path.basename(sorted(found)[-1]))


def _pom_property(url: str, name: str) -> str:
    with urllib.request.urlopen(url, timeout=60) as response:
        pom = response.read().decode("utf-8")
    match = re.search(rf"<{re.escape(name)}>\s*([^<\s]+)\s*</{re.escape(name)}>", pom)
    if not match:
        raise RuntimeError(f"{url} does not declare {name}.")
    return match.group(1)


def _sdk_version(hadoop: str) -> str:
    """The AWS SDK v2 version hadoop-aws <hadoop> is built with (declared in its parent, hadoop-project)."""
    parent = f"{MAVEN_CENTRAL}/org/apache/hadoop/hadoop-project/{hadoop}/hadoop-project-{hadoop}.pom"
    return _pom_property(parent, "aws-java-sdk-v2.version")


def _default_cache(hadoop: str) -> str:
    base = os.environ.get(S3A_CACHE_ENV) or os.path.join(os.path.expanduser("~"), ".cache", "versioned", "s3a")
    return os.path.join(base, f"hadoop-{hadoop}")


def _cached(cache: str) -> Optional[List[str]]:
    manifest = os.path.join(cache, _MANIFEST)
    if not os.path.isfile(manifest):
        return None
    with open(manifest, encoding="utf-8") as f:
        jars = [os.path.join(cache, line.strip()) for line in f if line.strip()]
    return jars if jars and all(os.path.isfile(j) for j in jars) else None


def _shipped_by_spark() -> Set[str]:
    """Artifact names (without version) of the jars PySpark ships: never added twice."""
    names: Set[str] = set()
    for jar in os.listdir(os.path.join(_pyspark_dir(), "jars")):
        match = re.match(r"^(.+?)-\d", jar)
        if match:
            names.add(match.group(1))
    return names


def _resolve(hadoop: str, sdk: str, ivy: str) -> List[str]:
    """Resolves the packages with Spark's Ivy into ``ivy``/jars (an empty script is submitted: nothing runs)."""
    packages = [f"org.apache.hadoop:hadoop-aws:{hadoop}"] + [f"software.amazon.awssdk:{m}:{sdk}" for m in _SDK_MODULES]
    noop = os.path.join(ivy, "noop.py")
    with open(noop, "w", encoding="utf-8") as f:
        f.write("# resolves --packages only\n")
    submit = os.path.join(_pyspark_dir(), "bin", "spark-submit")
    cmd = [submit, "--master", "local[1]", "--packages", ",".join(packages),
           "--exclude-packages", "software.amazon.awssdk:bundle", "--conf", f"spark.jars.ivy={ivy}", noop]
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    jars = sorted(glob.glob(os.path.join(ivy, "jars", "*.jar")))
    if done.returncode != 0 or not any("hadoop-aws" in j for j in jars):
        raise RuntimeError(f"Resolving {','.join(packages)} from Maven Central failed (exit {done.returncode}):\n"
                           + "\n".join(done.stdout.splitlines()[-30:]))
    return jars


def install_s3a_jars(cache_dir: Optional[str] = None) -> List[str]:
    """Makes s3a:// usable by this PySpark: downloads (once) ``hadoop-aws`` matching its Hadoop and the AWS
    SDK modules it needs into ``cache_dir`` and returns their paths, to add to ``spark.jars`` (which
    :func:`versioned.configure_spark_with_versioned` does with ``s3a=True``).

    Args:
        cache_dir: where the jars are kept (default: ``$VERSIONED_S3A_CACHE/hadoop-<version>``, else
            ``~/.cache/versioned/s3a/hadoop-<version>``). A complete cache is reused without network access.

    Returns:
        absolute paths of the jars.

    Raises:
        RuntimeError: Maven Central cannot be reached or the resolution failed (the message has the log).

    Example::

        from versioned.s3a import install_s3a_jars
        jars = install_s3a_jars()
        spark = SparkSession.builder.config("spark.jars", ",".join(jars + [versioned.jar_path()])).getOrCreate()
    """
    hadoop = hadoop_version()
    cache = os.path.abspath(cache_dir or _default_cache(hadoop))
    jars = _cached(cache)
    if jars is not None:
        return jars
    os.makedirs(cache, exist_ok=True)
    shipped = _shipped_by_spark()
    work = tempfile.mkdtemp(prefix="ivy-", dir=cache)
    try:
        names = []
        for jar in _resolve(hadoop, _sdk_version(hadoop), work):
            name = os.path.basename(jar)  # <group>_<artifact>-<version>.jar
            group, _, rest = name.partition("_")
            artifact = re.sub(r"-\d[^-]*(-[A-Za-z]+)?\.jar$", "", rest)
            if artifact in shipped and not group.startswith(("software.amazon", "org.apache.hadoop")):
                continue
            shutil.copyfile(jar, os.path.join(cache, name + ".tmp"))
            os.replace(os.path.join(cache, name + ".tmp"), os.path.join(cache, name))
            names.append(name)
        with open(os.path.join(cache, _MANIFEST + ".tmp"), "w", encoding="utf-8") as f:
            f.write("\n".join(names) + "\n")
        os.replace(os.path.join(cache, _MANIFEST + ".tmp"), os.path.join(cache, _MANIFEST))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return [os.path.join(cache, n) for n in names]


def main(argv: Optional[List[str]] = None) -> int:
    """``bin/install-s3a-jars [--cache-dir DIR]``: installs the jars, prints them comma-separated; returns the
    exit status.

    Example::

        main(["--cache-dir", "/tmp/s3a-jars"])   # prints /tmp/s3a-jars/org.apache.hadoop_hadoop-aws-....jar,...
    """
    import argparse

    parser = argparse.ArgumentParser(prog="install-s3a-jars", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache-dir", default=None, help="where to keep the jars")
    args = parser.parse_args(argv)
    print(",".join(install_s3a_jars(args.cache_dir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
