"""The reader's fragment merge and key pruning, on Arrow tables made here (no Spark): the binary-search overlay of a
SNAP under DIFFs gives the rows of the general conflation, whether its result is a few slices or a gather; key
filters select rows before the merge exactly as after it; row groups are skipped by their key statistics."""

from __future__ import annotations

import random
from typing import Any, Dict, List, Tuple

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from versioned.reader import _table
from versioned.reader._prune import key_filters, range_may_match, row_groups


def _part(rows: List[Tuple[int, str, Any]], src: int) -> pa.Table:
    """An object's rows as _read_object returns them: id, v, _vchange, then __vsrc (its place in the chain)."""
    return pa.table({"id": pa.array([r[0] for r in rows], pa.int64()), "v": pa.array([r[1] for r in rows], pa.string()),
                     "_vchange": pa.array([r[2] for r in rows], pa.int8()),
                     "__vsrc": pa.array([src] * len(rows), pa.int32())})


def _chain(rng: random.Random, clustered: bool) -> List[pa.Table]:
    snap_keys = sorted(rng.sample(range(0, 5000), 1500))
    parts = [_part([(k, f"s{k}", None) for k in snap_keys], 0)]
    for src in range(1, rng.randint(2, 5)):
        if clustered:  # a contiguous range of keys, as a range update or an append does
            lo = rng.randrange(0, 5200)
            keys = list(range(lo, lo + rng.randint(0, 300)))
        else:
            keys = sorted(rng.sample(range(-50, 5100), rng.randint(0, 400)))
        parts.append(_part([(k, f"d{src}.{k}", rng.choice([0, 1, 2])) for k in keys], src))
    return parts


def _rows(t: pa.Table) -> List[Dict[str, Any]]:
    return t.select(["id", "v"]).to_pylist()


@pytest.mark.parametrize("clustered", [True, False])
def test_overlay_equals_the_general_merge(clustered: bool) -> None:
    rng = random.Random(36 if clustered else 37)
    slices = gathers = 0
    for _ in range(60):
        parts = _chain(rng, clustered)
        expected = _table._conflate(pa.concat_tables(parts), ["id"])
        got = _table._overlay(parts[0], parts[1:], "id")
        assert _rows(got) == _rows(expected)
        ids = got.column("id").to_pylist()
        assert ids == sorted(set(ids))
        if got.column("id").num_chunks > 1:
            slices += 1
        else:
            gathers += 1
    assert slices and (gathers or clustered)  # both ways of building the result were exercised


def test_overlay_of_deletes_only_and_of_nullable_keys() -> None:
    snap = _part([(1, "a", None), (2, "b", None)], 0)
    gone = _table._overlay(snap, [_part([(1, "x", 1)], 1), _part([(2, "y", 1)], 2)], "id")
    assert gone.num_rows == 0
    with_null = pa.table({"id": pa.array([None, 3], pa.int64()), "v": ["n", "c"],
                          "_vchange": pa.array([0, 0], pa.int8()), "__vsrc": pa.array([1, 1], pa.int32())})
    got = _table._overlay(snap, [with_null], "id")  # a null key: the general path
    assert got.column("id").to_pylist() == [None, 1, 2, 3]


def test_key_filters_select_before_the_merge_as_after_it() -> None:
    rng = random.Random(5)
    for _ in range(40):
        parts = _chain(rng, rng.random() < 0.5)
        lo = rng.randrange(-100, 5000)
        filters = [("id", ">=", lo), ("id", "<", lo + rng.randint(1, 800))]
        after = _table._conflate(pa.concat_tables(parts), ["id"])
        after = after.filter(_table._filter_mask(after, filters))
        early = key_filters(filters, ["id"], {"id": pa.int64()})
        assert early == filters
        pre = [p.filter(_table._filter_mask(p, early)) for p in parts]
        before = _table._overlay(pre[0], pre[1:], "id")
        assert _rows(before) == _rows(after)
    # a filter on a value column waits for the merge: a newer change may give the row another value
    assert key_filters([("v", "==", "x"), ("id", "!=", 3)], ["id"], {"id": pa.int64(), "v": pa.string()}) == []


def test_row_groups_are_skipped_by_their_key_statistics(tmp_path: Any) -> None:
    path = str(tmp_path / "o.parquet")
    pq.write_table(pa.table({"id": pa.array(range(10_000), pa.int64()), "s": [f"k{i:05d}" for i in range(10_000)]}),
                   path, row_group_size=1000)
    md = pq.ParquetFile(path).metadata
    types = {"id": pa.int64(), "s": pa.string()}
    assert row_groups(md, [("id", ">=", 4500), ("id", "<", 4600)], types) == [4]
    assert row_groups(md, [("id", "in", [10, 9999])], types) == [0, 9]
    assert row_groups(md, [("s", ">", "k08999")], types) == [9]
    assert row_groups(md, [("id", ">=", 0)], types) is None  # every group may match: nothing to skip
    assert row_groups(md, [("id", "<", 0)], types) == []
    assert not range_may_match(0, 100, True, "==", 100) and range_may_match(0, 100, False, "==", 100)


def _object(store_root: Any, oid: str, table: pa.Table, kind: str) -> Any:
    from versioned.reader._objects import ObjectRecord

    folder = store_root / "objects" / oid[:2]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{oid}.parquet"
    pq.write_table(table, str(path), row_group_size=50_000)
    return ObjectRecord(oid, kind, table.num_rows, path.stat().st_size, {}, {}, None, ())


def test_a_key_bound_ends_the_read_of_sorted_objects_early_with_the_same_rows(tmp_path: Any,
                                                                           monkeypatch: Any) -> None:
    """A SNAP of 120,000 keys under a DIFF: filtered reads equal the full read filtered, and reads bounded above
    stop decoding once the keys pass the bound."""
    from versioned.reader._store import ObjectStore

    ids = list(range(0, 360_000, 3))
    snap = pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array([f"s{i}" for i in ids])})
    changed = list(range(30_000, 90_000, 7))
    diff = pa.table({"id": pa.array(changed, pa.int64()), "v": pa.array([f"d{i}" for i in changed]),
                     "_vchange": pa.array([1 if i % 2 else 2 for i in changed], pa.int8())})
    objects = {"aa" + "0" * 62: _object(tmp_path, "aa" + "0" * 62, snap, "SNAP"),
               "bb" + "0" * 62: _object(tmp_path, "bb" + "0" * 62, diff, "DIFF")}
    schema_json = ('{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}},'
                   '{"name":"v","type":"string","nullable":true,"metadata":{}}]}')
    version = _table.TableVersion("r", "t", "img", schema_json, ["id"], False,
                                  [{"lower": None, "objects": list(objects)}], None, objects,
                                  ObjectStore(str(tmp_path)))
    full = version.to_arrow().to_pylist()
    expected = {i: f"s{i}" for i in ids}
    for i in changed:  # _vchange 1: a delete; otherwise the change's row
        if i % 2:
            expected.pop(i, None)
        else:
            expected[i] = f"d{i}"
    assert full == [{"id": i, "v": expected[i]} for i in sorted(expected)]
    stops: List[bool] = []
    real = _table._read_until

    def spy(*args: Any) -> Any:
        out = real(*args)
        stops.append(out[1])
        return out

    monkeypatch.setattr(_table, "_BATCH_ROWS", 4096)
    monkeypatch.setattr(_table, "_read_until", spy)
    rng = random.Random(11)
    cases: List[List[Any]] = [[("id", "<", 40_000)], [("id", "<=", 45_003), ("id", ">", 44_000)],
                              [("id", "==", 60_000)], [("id", "in", [3, 31_115, 300_000])], [("id", ">=", 359_000)],
                              [("id", "<", -1)]]
    for _ in range(10):
        lo = rng.randrange(0, 360_000)
        cases.append([("id", ">=", lo), ("id", "<", lo + rng.randrange(1, 20_000))])
    ops = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
           "==": lambda a, b: a == b, "in": lambda a, b: a in b}
    for filters in cases:
        want = [r for r in full if all(ops[op](r[c], v) for c, op, v in filters)]
        assert version.to_arrow(filters=filters).to_pylist() == want, filters
    assert False in stops  # some reads ended before the end of the object


def _key_order(v: Any) -> Tuple[int, float]:
    """One key value in the key order (FORMAT.md): nulls first, NaN last and equal to NaN, -0.0 equal to 0.0."""
    if v is None:
        return (0, 0.0)
    if isinstance(v, float) and v != v:
        return (2, 0.0)
    return (1, float(v))


def test_within_bounds_is_the_key_order_of_the_read_rule() -> None:
    """The read rule's row mask (lower <= key < upper, column by column) against an oracle, on two-column keys with
    nulls, NaN, -0.0 and infinities, and bounds as the metastore encodes them."""
    rng = random.Random(35)
    values: List[Any] = [None, float("nan"), -0.0, 0.0, 1.5, -2.0, float("inf"), float("-inf")]
    physical = pa.schema([pa.field("a", pa.int64()), pa.field("b", pa.float64())])
    for _ in range(200):
        rows = [(rng.choice([None, 1, 2, 3]), rng.choice(values)) for _ in range(rng.randint(0, 30))]
        t = pa.table({"a": pa.array([r[0] for r in rows], pa.int64()), "b": pa.array([r[1] for r in rows], pa.float64())})

        def bound() -> Any:
            if rng.random() < 0.3:
                return None
            b = rng.choice(values[1:])
            return [rng.choice([1, 2, 3]), "NaN" if b != b else "Infinity" if b == float("inf") else b]

        lower, upper = bound(), bound()

        def key(r: Tuple[Any, Any]) -> Tuple[Tuple[int, float], ...]:
            return tuple(_key_order(v) for v in r)

        def parsed(b: List[Any]) -> Tuple[Any, Any]:
            return (b[0], float(b[1]))

        expected = [(lower is None or key(r) >= key(parsed(lower))) and (upper is None or key(r) < key(parsed(upper)))
                    for r in rows]
        assert _table._within(t, ["a", "b"], physical, (lower, upper)).to_pylist() == expected, (rows, lower, upper)
