"""configure_spark_with_versioned, jar_path, repositories and install()."""

from __future__ import annotations

import os

import pytest
from pyspark.sql import DataFrameReader, DataFrameWriter, SparkSession

import versioned
from versioned import InvalidOption
from conftest import frame, rows_of


def test_jar_path_is_bundled_jar() -> None:
    path = versioned.jar_path()
    assert os.path.isfile(path)
    assert path.endswith(os.path.join("versioned", "jars", "versioned-spark-assembly.jar"))


def test_configure_adds_jar_and_conf() -> None:
    b = SparkSession.Builder()
    out = versioned.configure_spark_with_versioned(b, warehouse="/tmp/wh", metastore_url="jdbc:sqlite:/tmp/m.db")
    assert out is b
    assert b._options["spark.jars"] == versioned.jar_path()
    assert b._options["spark.versioned.warehouse"] == "/tmp/wh"
    assert b._options["spark.versioned.metastore.url"] == "jdbc:sqlite:/tmp/m.db"


def test_configure_keeps_existing_jars_and_is_idempotent() -> None:
    b = SparkSession.Builder().config("spark.jars", "/opt/other.jar")
    versioned.configure_spark_with_versioned(b)
    versioned.configure_spark_with_versioned(b)
    assert b._options["spark.jars"].split(",") == ["/opt/other.jar", versioned.jar_path()]
    assert "spark.versioned.warehouse" not in b._options


def test_configure_rejects_empty_warehouse() -> None:
    with pytest.raises(InvalidOption):
        versioned.configure_spark_with_versioned(SparkSession.Builder(), warehouse=" ")


def test_session_has_jar(spark: SparkSession) -> None:
    assert versioned.jar_path() in spark.conf.get("spark.jars")


def test_repositories(spark: SparkSession, warehouse: str) -> None:
    assert versioned.repositories(spark) == []
    frame(spark, [(1, "a")]).write.versioned("b_repo.t", primary_key="id")
    frame(spark, [(1, "a")]).write.versioned("a_repo.t", primary_key="id")
    assert versioned.repositories(spark) == ["a_repo", "b_repo"]
    assert versioned.repositories(spark, warehouse=warehouse) == ["a_repo", "b_repo"]


def test_reads_and_listings_of_a_warehouse_that_does_not_exist_create_nothing(spark: SparkSession, tmp_path) -> None:
    missing = str(tmp_path / "mistyped")
    assert versioned.repositories(spark, warehouse=missing) == []
    repo = versioned.Repository(spark, "shop", warehouse=missing)
    for read in (repo.branches, repo.tags, repo.locks, repo.log, repo.resolve, lambda: repo.default_branch,
                 lambda: repo.show("x"), lambda: repo.delete_where("t", "true"), lambda: repo.create_branch("dev")):
        with pytest.raises(versioned.RepositoryNotFound):
            read()
    with pytest.raises(versioned.NotFoundError):
        spark.read.format("versioned").option("warehouse", missing).load("shop.t").collect()
    # SQL through a catalog whose warehouse does not exist: names are looked up, nothing is created
    spark.conf.set("spark.sql.catalog.nowhere", "versioned.spark.catalog.VersionedCatalog")
    spark.conf.set("spark.sql.catalog.nowhere.warehouse", missing)
    assert spark.sql("SHOW NAMESPACES IN nowhere").collect() == []
    with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND"):
        spark.sql("SELECT * FROM nowhere.shop.t").collect()
    assert not os.path.exists(missing)


def test_explicit_warehouse_overrides_conf(spark: SparkSession, warehouse: str, tmp_path) -> None:
    other = str(tmp_path / "other")
    spark.conf.set("spark.versioned.warehouse", other)
    frame(spark, [(1, "a")]).write.versioned("elsewhere.t", primary_key="id")
    spark.conf.set("spark.versioned.warehouse", warehouse)
    assert versioned.repositories(spark) == []
    assert versioned.repositories(spark, warehouse=other) == ["elsewhere"]
    repo = versioned.Repository(spark, "elsewhere", warehouse=other)
    assert repo.create_branch("dev") == repo.resolve("main")
    assert [r["name"] for r in repo.branches().collect()] == ["dev", "main"]
    assert repo.delete_where("t", "id = 1") == 1
    assert len(repo.log().collect()) == 2
    with pytest.raises(versioned.RepositoryNotFound):
        versioned.Repository(spark, "elsewhere").branches()


def test_install_is_idempotent(spark: SparkSession) -> None:
    versioned.install()
    writer, reader = DataFrameWriter.versioned, DataFrameReader.versioned
    versioned.install()
    versioned.install()
    assert DataFrameWriter.versioned is writer and DataFrameReader.versioned is reader
    assert versioned.is_installed()
    frame(spark, [(1, "a")]).write.versioned("r.t", primary_key="id")
    assert rows_of(spark.read.versioned("r.t")) == [(1, "a")]
    assert len(versioned.Repository(spark, "r").log().collect()) == 1


def test_uninstall_and_reinstall(spark: SparkSession) -> None:
    versioned.uninstall()
    try:
        assert not versioned.is_installed()
        assert not hasattr(spark.read, "versioned")
        versioned.uninstall()  # no-op
    finally:
        versioned.install()
    assert versioned.is_installed() and hasattr(spark.read, "versioned")


def test_plain_format_works_without_helpers(spark: SparkSession) -> None:
    frame(spark, [(1, "a")]).write.format("versioned").option("primaryKey", "id").mode("append").save("r.t")
    assert rows_of(spark.read.format("versioned").load("r.t")) == [(1, "a")]


def test_set_log_level_enables_the_connector_loggers(classic_spark):
    """set_log_level sets the ``versioned`` logger itself (PySpark's console filter passes loggers with a level)."""
    engine_logger = classic_spark._jvm.org.apache.logging.log4j.LogManager.getLogger("versioned.core.Engine")
    versioned.set_log_level(classic_spark, "INFO")
    try:
        assert engine_logger.isInfoEnabled()
    finally:
        versioned.set_log_level(classic_spark, "WARN")
    assert not engine_logger.isInfoEnabled()
    with pytest.raises(InvalidOption):
        versioned.set_log_level(classic_spark, "LOUD")
