"""The README's tour runs as written: its Python block twice in a row (each in a fresh Python process, as a
user pastes it), and its SQL block through the catalog."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import List

from pyspark.sql import SparkSession

from conftest import ROOT


def _blocks(language: str) -> List[str]:
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def test_the_python_tour_runs_twice_in_a_row(tmp_path) -> None:
    tour = _blocks("python")[0]
    assert "versioned.Repository" in tour
    script = tmp_path / "tour.py"
    script.write_text(tour + "\nspark.stop()\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for run in (1, 2):
        done = subprocess.run([sys.executable, str(script)], cwd=str(tmp_path), env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, f"run {run} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        assert "restock" in done.stdout  # the log shows the transaction's commit


def test_the_sql_tour_runs(spark: SparkSession) -> None:
    [sql] = [b for b in _blocks("sql") if "CREATE TABLE vc.shop.items" in b]
    spark.conf.set("spark.sql.catalog.vc", "versioned.spark.catalog.VersionedCatalog")
    statements = [s.strip() for s in re.sub(r"--[^\n]*", "", sql).split(";") if s.strip()]
    assert len(statements) >= 6
    results = [spark.sql(s).collect() for s in statements]
    assert sorted(tuple(r) for r in spark.sql("SELECT * FROM vc.shop.items").collect()) == [(1, "a"), (2, "B")]
    assert any(r["table"] == "items" for r in results[-1])
