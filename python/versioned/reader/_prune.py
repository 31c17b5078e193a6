"""Key pruning (docs/FORMAT.md, "Pruning rules"): which fragments, objects and Parquet row groups a key filter
can skip, and which filters may select rows before the chain of a fragment is merged. A key filter gives the same
answer for every change of one key (they share the key), so it may select rows of each object before merging;
a filter on any other column waits for the merged rows (a newer change may give a row another value).

Example::

    >>> range_may_match(0, 100, True, ">=", 100)
    False
    >>> row_groups(pf.metadata, [("id", "==", 42)], {"id": pa.int64()})   # doctest: +SKIP
    [3]
"""

from __future__ import annotations

import operator
from typing import Any, Dict, List, Optional, Sequence, Tuple

import pyarrow as pa

#: A filter: ``(column, op, value)`` with op one of ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``in``.
Filter = Tuple[str, str, Any]

_PRUNING_OPS = ("==", "=", "<", "<=", ">", ">=", "in")


def comparable(value: Any) -> bool:
    """Whether a filter value is one the bounds are compared with (integers, strings, or collections of them).

    Example::

        >>> comparable([1, 2]), comparable(1.5), comparable(True)
        (True, False, False)
    """
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(comparable(v) for v in value)
    return isinstance(value, (int, str)) and not isinstance(value, bool)


def bound_value(v: Any, t: pa.DataType) -> Any:
    """A bound or statistic in the value encoding, comparable with a Python literal, or None when this reader
    does not compare values of that type (then nothing is pruned).

    Example::

        >>> bound_value(7, pa.int64()), bound_value(7, pa.float64())
        (7, None)
    """
    if v is None:
        return None
    if pa.types.is_integer(t) and isinstance(v, int) and not isinstance(v, bool):
        return v
    if pa.types.is_string(t) and isinstance(v, str):
        return v  # code point order equals the key order's unsigned UTF-8 byte order
    return None


def range_may_match(lo: Any, hi: Any, hi_exclusive: bool, op: str, value: Any) -> bool:
    """Whether a key range [lo, hi] (either end None: open) may hold a value satisfying ``op value``.

    Example::

        >>> range_may_match(10, 20, False, "in", [5, 15]), range_may_match(10, 20, False, "<", 10)
        (True, False)
    """
    try:
        if op == "in":
            return any(range_may_match(lo, hi, hi_exclusive, "==", v) for v in value)
        if op in ("==", "="):
            return (lo is None or value >= lo) and (hi is None or (value < hi if hi_exclusive else value <= hi))
        if op in (">", ">="):
            return hi is None or (operator.gt if op == ">" or hi_exclusive else operator.ge)(hi, value)
        if op in ("<", "<="):
            return lo is None or (operator.lt if op == "<" else operator.le)(lo, value)
    except TypeError:
        return True
    return True


def key_filters(filters: Sequence[Filter], keys: Sequence[str], types: Dict[str, pa.DataType]) -> List[Filter]:
    """The filters on key columns of a type whose equality is Arrow's (integers, strings, dates, timestamps):
    they may select the rows of every object before its fragment is merged.

    Example::

        >>> key_filters([("id", ">", 3), ("qty", "<", 9)], ["id"], {"id": pa.int64(), "qty": pa.int32()})
        [('id', '>', 3)]
    """
    return [f for f in filters if f[0] in keys and f[1] in _PRUNING_OPS and _simple(types[f[0]])]


def _simple(t: pa.DataType) -> bool:
    return bool(pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_date(t) or pa.types.is_timestamp(t))


def row_groups(metadata: Any, filters: Sequence[Filter], types: Dict[str, pa.DataType]) -> Optional[List[int]]:
    """The row groups of a Parquet file whose column statistics may hold rows matching every key filter, or None
    when all may (nothing to skip).

    Example::

        row_groups(pq.ParquetFile(f).metadata, [("id", ">=", 1000)], {"id": pa.int64()})   # [2, 3]
    """
    usable = [f for f in filters if comparable(f[2])]
    if not usable or metadata.num_row_groups == 0:
        return None
    index = {metadata.schema.column(i).path: i for i in range(metadata.num_columns)}
    keep: List[int] = []
    for g in range(metadata.num_row_groups):
        group = metadata.row_group(g)
        if all(_group_may_match(group, index.get(col), types[col], op, value) for col, op, value in usable):
            keep.append(g)
    return None if len(keep) == metadata.num_row_groups else keep


def _group_may_match(group: Any, column: Optional[int], t: pa.DataType, op: str, value: Any) -> bool:
    if column is None:
        return True  # a column the object predates: its rows are null, and the filter selects after reading
    stats = group.column(column).statistics
    if stats is None or not stats.has_min_max:
        return True
    lo, hi = bound_value(stats.min, t), bound_value(stats.max, t)
    if lo is None or hi is None:
        return True
    return range_may_match(lo, hi, False, op, value)


def upper_bound(filters: Sequence[Filter], column: str, t: pa.DataType) -> Optional[Tuple[Any, bool]]:
    """The tightest upper bound the filters put on ``column`` (integer or string): ``(value, inclusive)``, or None.
    Rows sorted by that column past the bound cannot match, so a reader of sorted rows may stop there.

    Example::

        >>> upper_bound([("id", "<", 10), ("id", "in", [3, 12])], "id", pa.int64())
        (10, False)
    """
    best: Optional[Tuple[Any, bool]] = None
    for col, op, value in filters:
        if col != column or not comparable(value):
            continue
        if op == "in":
            values = [bound_value(v, t) for v in value]
            if not values or any(v is None for v in values):
                continue
            candidate: Tuple[Any, bool] = (max(values), True)
        elif op in ("<", "<=", "==", "="):
            v = bound_value(value, t)
            if v is None:
                continue
            candidate = (v, op != "<")
        else:
            continue
        if best is None or candidate[0] < best[0] or (candidate[0] == best[0] and not candidate[1]):
            best = candidate
    return best
