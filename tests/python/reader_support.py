"""Helpers shared by the Spark-free reader's test modules."""

from __future__ import annotations

import os
from typing import List

from pyspark.sql import SparkSession

from versioned import Repository


def _root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _small(spark: SparkSession) -> Repository:
    spark.createDataFrame([(i, f"n{i}") for i in range(20)], "id long, name string").write.versioned(
        "b.t", primary_key="id", message="first")
    return Repository(spark, "b")


def _object_files(wh: str) -> List[str]:
    out = []
    for d, _, files in os.walk(os.path.join(wh, "objects")):
        out += [os.path.join(d, f) for f in files if f.endswith(".parquet")]
    return out
