"""Per-table conflict resolution for ``merge``, ``cherry-pick`` and ``revert`` (``--ours TABLE`` / ``--theirs
TABLE``, as Dolt's ``conflicts resolve``), built on the merge's ``resolutions``: the conflicting keys of a table
are settled with the rows one side has for them (a key that side does not have is deleted). Also the row counts
of tables a merge takes whole from one side, which the engine reports as 0."""

from __future__ import annotations

import functools
import json
from typing import Any, Dict, List, Mapping, Optional

from versioned._cli_base import CommandError

__all__ = ["side_rows", "resolutions", "fill_take_counts"]


def side_rows(spark: Any, repository: str, table: str, ref: str, keys: List[str]) -> Any:
    """A resolution DataFrame for ``table``: for each key (JSON of the key columns, as conflicts report it) the
    row ``ref`` has for it with ``_delete`` false, or the key alone with ``_delete`` true when ``ref`` has none.

    Example::

        side_rows(spark, "shop", "products", "dev", ['{"id":7}'])   # dev's row 7, settling its conflicts
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType, StructField, StructType

    side = spark.read.versioned(f"{repository}.{table}", ref=ref)
    key_columns = list(json.loads(keys[0]))
    fields = {f.name: f for f in side.schema.fields}
    missing = [c for c in key_columns if c not in fields]
    if missing:
        raise CommandError(f"{table} at {ref} has no key column {', '.join(missing)}; settle its conflicts with "
                           "--strategy ours or --strategy theirs.", "INVALID_OPTION")
    key_schema = StructType([fields[c] for c in key_columns])
    # the keys parsed by Spark (typed as the table's key), then the side's rows of those keys in one filtered read:
    # a few rows on the driver, so the merge settles them there without a query over joins
    wanted = [tuple(r) for r in spark.createDataFrame([(k,) for k in keys], "k string")
              .select(F.from_json("k", key_schema).alias("k")).select("k.*").collect()]
    if len(key_columns) == 1:
        condition = F.col(key_columns[0]).isin([key[0] for key in wanted])
    else:
        condition = functools.reduce(lambda a, b: a | b, [
            functools.reduce(lambda a, b: a & b, [F.col(c) == F.lit(v) for c, v in zip(key_columns, key)])
            for key in wanted])
    present = side.where(condition).collect()
    found = {tuple(r[c] for c in key_columns) for r in present}
    rows = [tuple(r) + (False,) for r in present]
    rows += [tuple(dict(zip(key_columns, key)).get(c) for c in side.columns) + (True,) for key in wanted
             if key not in found]
    # a deleted key's other columns are nulls
    schema = StructType([StructField(f.name, f.dataType, True) for f in side.schema.fields] +
                        [StructField("_delete", BooleanType(), False)])
    return spark.createDataFrame(rows, schema)


def resolutions(spark: Any, repository: str, conflicts: List[Dict[str, Any]],
                sides: Mapping[str, str]) -> Dict[str, Any]:
    """Resolutions settling every conflict of the tables in ``sides`` (table -> the ref whose rows win) from a
    dry run's ``conflicts`` (rows with ``table`` and ``key``: the key columns, as an object or its JSON). A
    table-level conflict (a dropped table, a schema change) cannot be settled row by row: :class:`CommandError`.

    Example::

        resolutions(spark, "shop", rows_of(dry.conflicts), {"products": "dev"})
    """
    out: Dict[str, Any] = {}
    for table, ref in sides.items():
        mine = [c for c in conflicts if c["table"] == table]
        whole = [c for c in mine if not c.get("key")]
        if whole:
            raise CommandError(f"{table} has a table-level conflict ({whole[0]['kind']}) that rows cannot settle; "
                               "use --strategy ours or --strategy theirs.", "INVALID_OPTION")
        keys = sorted({c["key"] if isinstance(c["key"], str) else json.dumps(c["key"]) for c in mine})
        if keys:
            out[table] = side_rows(spark, repository, table, ref, keys)
    return out


def fill_take_counts(repo: Any, record: Dict[str, Any], before: Optional[str], after: Optional[str]) -> None:
    """Puts the real row counts into the ``take`` rows of a merge record: a table taken whole from one side is
    linked by reference, so the engine counts no rows (``take 0 0``); its upserts and deletes are what
    differs between the branch head ``before`` and ``after`` (the commit made, or the side it was taken from).

    Example::

        fill_take_counts(repo, record, before=head_before_revert, after=record["commit"])
    """
    if before is None or after is None:
        return
    for row in record["tables"]:
        if row.get("action") != "take":
            continue
        try:
            [summary] = repo.diff_summary(before, after, table=row["table"]).collect() or [None]
        except Exception:  # noqa: BLE001 - the engine's counts stay when the table cannot be compared
            continue
        if summary is None or summary["inserted"] is None:
            continue
        row["upserts"] = int(summary["inserted"]) + int(summary["updated"])
        row["deletes"] = int(summary["deleted"])
