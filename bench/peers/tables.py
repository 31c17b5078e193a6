"""The two peers behind one small interface: a Delta Lake table (deletion vectors on) and an Iceberg v2 table
(merge-on-read or copy-on-write). Everything goes through SQL or the DataFrame API of the peer's session.

Each table is created empty with the benchmark's schema and its properties, then filled by an append, so the
data layout is the one the caller gives (sorted by key, a fixed number of files: see runner.layout).
"""

from __future__ import annotations

import os
from typing import Dict, Optional

from pyspark.sql import DataFrame, SparkSession

SCHEMA = "id BIGINT, a INT, b BIGINT, s STRING, d DOUBLE"
MERGE_BODY = ("AS t USING {src} AS s ON t.id = s.id "
              "WHEN MATCHED AND s._vchange = 1 THEN DELETE "
              "WHEN MATCHED THEN UPDATE SET a = s.a, b = s.b, s = s.s, d = s.d "
              "WHEN NOT MATCHED AND s._vchange = 3 THEN INSERT (id, a, b, s, d) VALUES (s.id, s.a, s.b, s.s, s.d)")


def data_bytes(path: str, skip_dir: Optional[str] = None) -> int:
    """Bytes of the data files under ``path``: Parquet data/delete files and Delta's deletion vectors
    (``.bin``); logs, manifests and Hadoop's ``.crc`` side files are not counted."""
    total = 0
    for d, dirs, names in os.walk(path):
        if skip_dir and skip_dir in dirs:
            dirs.remove(skip_dir)
        for n in names:
            if (n.endswith(".parquet") or n.endswith(".bin")) and not n.startswith("."):
                total += os.path.getsize(os.path.join(d, n))
    return total


class PeerTable:
    """One table of a peer. ``version()`` returns an opaque handle usable by ``read``/``restore``/``changes``."""

    has_branches = False
    has_change_feed = False

    def __init__(self, spark: SparkSession, name: str) -> None:
        self.spark = spark
        self.name = name

    def merge(self, changes: DataFrame, branch: Optional[str] = None) -> None:
        """One MERGE of ``changes`` (table columns + ``_vchange``: 3 upsert, 1 delete)."""
        changes.createOrReplaceTempView("peer_changes")
        self.spark.sql(f"MERGE INTO {self.target(branch)} " + MERGE_BODY.format(src="peer_changes"))

    def target(self, branch: Optional[str]) -> str:
        raise NotImplementedError


class Delta(PeerTable):
    label = "Delta"

    def __init__(self, spark: SparkSession, name: str, root: str, change_feed: bool = False) -> None:
        super().__init__(spark, name)
        self.path = os.path.join(root, name)
        self.ref = f"delta.`{self.path}`"
        self.change_feed = change_feed
        self.has_change_feed = change_feed

    def create(self, df: DataFrame) -> None:
        props = "'delta.enableDeletionVectors' = 'true'"
        if self.change_feed:
            props += ", 'delta.enableChangeDataFeed' = 'true'"
        self.spark.sql(f"CREATE TABLE {self.ref} ({SCHEMA}) USING delta TBLPROPERTIES ({props})")
        df.write.format("delta").mode("append").save(self.path)

    def target(self, branch: Optional[str]) -> str:
        if branch:
            raise NotImplementedError("Delta has no branches")
        return self.ref

    def version(self) -> int:
        return int(self.spark.sql(f"DESCRIBE HISTORY {self.ref} LIMIT 1").first()["version"])

    def read(self, version: Optional[int] = None) -> DataFrame:
        r = self.spark.read.format("delta")
        if version is not None:
            r = r.option("versionAsOf", version)
        return r.load(self.path)

    def restore(self, version: int) -> None:
        self.spark.sql(f"RESTORE TABLE {self.ref} TO VERSION AS OF {version}")

    def changes(self, start: int, end: int) -> DataFrame:
        """Change data feed of versions start+1 .. end, with ``_kind`` in insert / update / delete
        (update = post-images; pre-images dropped)."""
        from pyspark.sql import functions as F
        cdf = (self.spark.read.format("delta").option("readChangeFeed", "true").option("startingVersion", start + 1)
               .option("endingVersion", end).load(self.path))
        kind = F.when(F.col("_change_type") == "update_postimage", F.lit("update")).otherwise(F.col("_change_type"))
        return cdf.filter(F.col("_change_type") != "update_preimage").withColumn("_kind", kind)

    def overwrite(self, df: DataFrame) -> None:
        df.write.format("delta").mode("overwrite").save(self.path)

    def bytes(self) -> int:
        return data_bytes(self.path, skip_dir="_delta_log")

    def history_count(self) -> int:
        return self.spark.sql(f"DESCRIBE HISTORY {self.ref}").count()


class Iceberg(PeerTable):
    has_branches = True
    has_change_feed = True

    def __init__(self, spark: SparkSession, name: str, root: str, mode: str) -> None:
        super().__init__(spark, name)
        self.mode = mode  # merge-on-read | copy-on-write
        self.label = "Iceberg MoR" if mode == "merge-on-read" else "Iceberg CoW"
        self.ident = f"db.{name}"
        self.ref = f"ice.db.{name}"
        self.path = os.path.join(root, "db", name)

    def create(self, df: DataFrame) -> None:
        m = self.mode
        self.spark.sql(f"CREATE TABLE {self.ref} ({SCHEMA}) USING iceberg TBLPROPERTIES ('format-version' = '2', "
                       f"'write.delete.mode' = '{m}', 'write.update.mode' = '{m}', 'write.merge.mode' = '{m}', "
                       "'write.parquet.compression-codec' = 'snappy')")
        df.writeTo(self.ref).append()

    def target(self, branch: Optional[str]) -> str:
        return f"{self.ref}.branch_{branch}" if branch else self.ref

    def version(self) -> int:
        return int(self.spark.sql(f"SELECT snapshot_id FROM {self.ref}.refs WHERE name = 'main'").first()[0])

    def read(self, version: Optional[int] = None) -> DataFrame:
        if version is None:
            return self.spark.table(self.ref)
        return self.spark.sql(f"SELECT * FROM {self.ref} VERSION AS OF {version}")

    def restore(self, version: int) -> None:
        self.spark.sql(f"CALL ice.system.rollback_to_snapshot('{self.ident}', {version})")

    def changes(self, start: int, end: int) -> DataFrame:
        """Changelog view between two snapshots (start exclusive), updates computed from the key, with ``_kind``
        in insert / update / delete (update = UPDATE_AFTER; UPDATE_BEFORE dropped)."""
        from pyspark.sql import functions as F
        view = f"{self.name}_changes"
        self.spark.sql(f"CALL ice.system.create_changelog_view(table => '{self.ident}', options => "
                       f"map('start-snapshot-id', '{start}', 'end-snapshot-id', '{end}'), "
                       f"identifier_columns => array('id'), changelog_view => '{view}')")
        ch = self.spark.table(view)
        kind = (F.when(F.col("_change_type") == "UPDATE_AFTER", F.lit("update"))
                .otherwise(F.lower(F.col("_change_type"))))
        return ch.filter(F.col("_change_type") != "UPDATE_BEFORE").withColumn("_kind", kind)

    def overwrite(self, df: DataFrame) -> None:
        from pyspark.sql import functions as F
        df.writeTo(self.ref).overwrite(F.lit(True))

    def bytes(self) -> int:
        return data_bytes(os.path.join(self.path, "data"))

    def history_count(self) -> int:
        return self.spark.sql(f"SELECT * FROM {self.ref}.history").count()

    def create_branch(self, name: str) -> None:
        self.spark.sql(f"ALTER TABLE {self.ref} CREATE BRANCH {name}")

    def create_tag(self, name: str) -> None:
        self.spark.sql(f"ALTER TABLE {self.ref} CREATE TAG {name}")

    def resolve_main(self) -> int:
        return self.version()

    def fast_forward(self, branch: str) -> None:
        self.spark.sql(f"CALL ice.system.fast_forward('{self.ident}', 'main', '{branch}')")


SYSTEMS: Dict[str, str] = {"delta": "Delta", "iceberg-mor": "Iceberg MoR", "iceberg-cow": "Iceberg CoW"}


def make(system: str, spark: SparkSession, name: str, root: str, change_feed: bool = False) -> PeerTable:
    """A table ``name`` of ``system`` (delta | iceberg-mor | iceberg-cow) under ``root``."""
    if system == "delta":
        return Delta(spark, name, root, change_feed=change_feed)
    return Iceberg(spark, name, root, "merge-on-read" if system == "iceberg-mor" else "copy-on-write")
