"""Building a SparkSession that can read and write the ``versioned`` format."""

from __future__ import annotations

import os
from typing import Optional

from pyspark.sql import SparkSession

from versioned.errors import InvalidOption

__all__ = ["JAR_NAME", "jar_path", "configure_spark_with_versioned", "set_log_level"]

JAR_NAME = "versioned-spark-assembly.jar"
WAREHOUSE_CONF = "spark.versioned.warehouse"
METASTORE_URL_CONF = "spark.versioned.metastore.url"


def jar_path() -> str:
    """Absolute path of the connector jar bundled in this package.

    Raises :class:`FileNotFoundError` when the package was installed without the jar
    (run ``bin/build-jar`` before ``pip install .``).

    Example::

        >>> jar_path().endswith("versioned-spark-assembly.jar")
        True
    """
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jars", JAR_NAME)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"{path} is missing: the versioned connector jar was not bundled. Build it with bin/build-jar "
            "(sbt spark/assembly) and reinstall the package.")
    return path


def configure_spark_with_versioned(
    builder: SparkSession.Builder,
    warehouse: Optional[str] = None,
    metastore_url: Optional[str] = None,
    s3a: bool = False,
) -> SparkSession.Builder:
    """Adds the bundled connector jar to ``spark.jars`` and sets the warehouse configuration.

    Args:
        builder: a ``SparkSession.builder`` (other settings are kept; existing ``spark.jars`` are extended).
        warehouse: directory or URI of the warehouse (``spark.versioned.warehouse``); for a local
            directory, the SQLite metastore lives inside it.
        metastore_url: JDBC URL of the metastore (``spark.versioned.metastore.url``), e.g.
            ``jdbc:postgresql://host/db``; needed when the warehouse is not local.
        s3a: also add ``hadoop-aws`` and the AWS SDK matching PySpark's Hadoop (downloaded once from
            Maven Central by :func:`versioned.s3a.install_s3a_jars`), for ``s3a://`` warehouses and remotes.

    Returns:
        the same builder, for chaining. The error hook of :func:`versioned.install` for classic sessions is
        installed too, so plain DataFrame and SQL calls raise :mod:`versioned.errors` types.

    Example::

        from pyspark.sql import SparkSession
        from versioned import configure_spark_with_versioned

        spark = configure_spark_with_versioned(
            SparkSession.builder.master("local[2]"), warehouse="/tmp/warehouse"
        ).getOrCreate()
        # a warehouse on S3 (metastore on PostgreSQL), with hadoop-aws and the AWS SDK added:
        # configure_spark_with_versioned(SparkSession.builder, warehouse="s3a://bucket/wh",
        #     metastore_url="jdbc:postgresql://meta.internal/versioned", s3a=True)
    """
    if warehouse is not None and not str(warehouse).strip():
        raise InvalidOption("warehouse must not be empty.")
    from versioned._jvm_errors import install_error_translation

    install_error_translation()  # plain DataFrame and SQL calls raise versioned.errors types too
    jar = jar_path()
    existing = getattr(builder, "_options", {}).get("spark.jars")
    jars = [j for j in str(existing).split(",") if j.strip()] if existing else []
    if s3a:
        from versioned.s3a import install_s3a_jars

        wanted = install_s3a_jars() + [jar]
    else:
        wanted = [jar]
    jars += [j for j in wanted if j not in jars]
    builder = builder.config("spark.jars", ",".join(jars))
    if warehouse is not None:
        builder = builder.config(WAREHOUSE_CONF, str(warehouse))
    if metastore_url is not None:
        builder = builder.config(METASTORE_URL_CONF, metastore_url)
    return builder


def set_log_level(spark: SparkSession, level: str = "INFO") -> None:
    """Shows the connector's log lines (logger ``versioned``) at ``level`` on a classic session's driver.

    Every commit, compaction, garbage collection and merge logs one INFO line under the ``versioned``
    logger (``versioned.core.Engine`` for commits). PySpark's console filter keeps lines below WARN out even
    after ``spark.sparkContext.setLogLevel("INFO")``; a level set on the logger itself passes it. On a Spark
    Connect client, set it on the server (``logger.versioned.name = versioned`` and
    ``logger.versioned.level = info`` in its ``log4j2.properties``).

    Example::

        >>> set_log_level(spark, "INFO")   # then: INFO Engine: versioned: commit shop@main 3f1c... tables=[t] ...
    """
    if level.upper() not in ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF"):
        raise InvalidOption(f"Unknown log level {level!r}: use TRACE, DEBUG, INFO, WARN, ERROR, FATAL or OFF.")
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        raise InvalidOption("set_log_level needs a classic session; on Spark Connect configure the server's log4j2.")
    log4j = jvm.org.apache.logging.log4j
    log4j.core.config.Configurator.setLevel("versioned", log4j.Level.getLevel(level.upper()))
