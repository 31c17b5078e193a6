"""The row diff without Spark (docs/DIFF.md, "The row diff" and "Across schema changes"), for change sets that fit
in memory: two versions of a table, fragments both share left unread when their schemas are the same, columns
aligned as the connector's ``DiffShape`` aligns them when not (the union of both versions' columns, a column one
version lacks null on that side, a widened type compared as the wider type, rows matched by key when the key is
the same, else as whole rows over the columns both have).

Example::

    diff_versions(repo.table("orders", "v1"), repo.table("orders", "main"), "shop.orders").to_pylist()
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import pyarrow as pa

from versioned.reader._errors import fail

if TYPE_CHECKING:
    from versioned.reader._table import TableVersion

_CHANGE = "_change"


@dataclass(frozen=True)
class Shape:
    """How two versions' rows are matched and what columns the diff has (the connector's ``DiffShape``).

    Example::

        Shape(by_key=True, keys=[pa.field("id", pa.int64())], values=[pa.field("name", pa.string())])
    """

    by_key: bool
    keys: List[pa.Field]
    values: List[pa.Field]
    common: List[str] = field(default_factory=list)
    exact: bool = False
    renamed: Dict[str, str] = field(default_factory=dict)  # new key column name -> its name in the older version

    def result_schema(self) -> pa.Schema:
        """``_change``, then the keys and ``<c>_before`` / ``<c>_after`` per value (by key), else the values.

        Example::

            shape.result_schema().names   # ['_change', 'id', 'name_before', 'name_after']
        """
        fields = [pa.field(_CHANGE, pa.string(), False)]
        if not self.by_key:
            return pa.schema(fields + [f.with_nullable(True) for f in self.values])
        fields += [f.with_nullable(True) for f in self.keys]
        for v in self.values:
            fields += [pa.field(f"{v.name}_before", v.type), pa.field(f"{v.name}_after", v.type)]
        return pa.schema(fields)


def shape_of(label: str, old: "TableVersion", new: "TableVersion") -> Shape:
    """The shape of a diff from ``old`` to ``new``; ``SCHEMA_MISMATCH`` when a column changed to a type with no
    common wider type, or when rows must be matched whole and a common column cannot be compared.

    Example::

        shape_of("shop.orders", repo.table("orders", "v1"), repo.table("orders"))
    """
    a, b = old.schema, new.schema
    if _same_columns(a, b) and old.primary_key == new.primary_key and old.hidden_key == new.hidden_key:
        if new.hidden_key:
            return Shape(False, [], list(b), list(b.names), exact=True)
        keys = [b.field(k) for k in new.primary_key]
        return Shape(True, keys, [f for f in b if f.name not in new.primary_key], exact=True)
    renames = _key_renames(old, new)
    olds = set(renames.values())
    names = list(dict.fromkeys(list(b.names) + [n for n in a.names if n not in olds]))

    def union_field(n: str) -> pa.Field:
        x = a.field(renames.get(n, n)) if renames.get(n, n) in a.names else None
        y = b.field(n) if n in b.names else None
        if x is not None and y is not None:
            t = wider(x.type, y.type)
            if t is None:
                raise fail("SCHEMA_MISMATCH", f"Cannot diff {label}: column '{n}' changed type from {x.type} to "
                           f"{y.type}, and neither widens to the other, so their values cannot be compared. Diff each "
                           "side of the type change separately, or rename the column when changing its type (a rename "
                           "shows as a dropped and an added column).")
            return pa.field(n, t)
        f = y if y is not None else x
        assert f is not None
        return pa.field(n, f.type)

    union = [union_field(n) for n in names]
    old_names = {v: k for k, v in renames.items()}
    same_key = (not old.hidden_key and not new.hidden_key
                and {old_names.get(k, k) for k in old.primary_key} == set(new.primary_key))
    if same_key:
        keys = [next(f for f in union if f.name == k) for k in new.primary_key]
        return Shape(True, keys, [f for f in union if f.name not in new.primary_key], renamed=renames)
    common = [n for n in names if n in a.names and n in b.names]
    for f in union:
        if f.name in common and _has_map(f.type):
            raise fail("SCHEMA_MISMATCH", f"Cannot diff {label}: its key changed ({_describe(old)} to "
                       f"{_describe(new)}), so rows are matched as whole rows, and column '{f.name}' has type {f.type}, "
                       "which cannot be compared. Diff the versions before and after the key change separately.")
    return Shape(False, [], union, common)


def _same_columns(a: pa.Schema, b: pa.Schema) -> bool:
    return a.names == b.names and all(x.type == y.type for x, y in zip(a, b))


def _describe(t: "TableVersion") -> str:
    return "no primary key" if t.hidden_key else f"primary key ({', '.join(t.primary_key)})"


def _has_map(t: pa.DataType) -> bool:
    if pa.types.is_map(t):
        return True
    return any(_has_map(t.field(i).type) for i in range(t.num_fields)) if t.num_fields else False


def _key_renames(old: "TableVersion", new: "TableVersion") -> Dict[str, str]:
    """Key columns ``new`` renamed from ``old``'s (new name -> old name), as the connector's ``keyRenames``."""
    if old.hidden_key or new.hidden_key or len(old.primary_key) != len(new.primary_key):
        return {}
    an, bn = list(old.schema.names), list(new.schema.names)
    pairs = [(o, n) for o, n in zip(old.primary_key, new.primary_key) if o != n]
    ok = all(o not in bn and n not in an and an.index(o) == bn.index(n)
             and wider(old.schema.field(o).type, new.schema.field(n).type) is not None for o, n in pairs)
    return {n: o for o, n in pairs} if pairs and ok else {}


_RANK = {pa.int8(): 1, pa.int16(): 2, pa.int32(): 3, pa.int64(): 4}


def wider(a: pa.DataType, b: pa.DataType) -> Optional[pa.DataType]:
    """The type both ``a`` and ``b`` convert to without loss, if any (integral and decimal widening, float to
    double, integral or decimal with floating point to double, date to timestamp), as the connector's.

    Example::

        >>> wider(pa.int32(), pa.int64()), wider(pa.string(), pa.bool_())
        (DataType(int64), None)
    """
    ra, rb = _RANK.get(a, 0), _RANK.get(b, 0)
    floating = (pa.float32(), pa.float64())
    if a == b:
        return b
    if ra and rb:
        return a if ra >= rb else b
    if (a in floating and (b in floating or rb or pa.types.is_decimal(b))) or \
            (b in floating and (ra or pa.types.is_decimal(a))):
        return pa.float64()
    if pa.types.is_decimal(a) or pa.types.is_decimal(b):
        x, y = _as_decimal(a), _as_decimal(b)
        if x is None or y is None:
            return None
        scale = max(x[1], y[1])
        digits = max(x[0] - x[1], y[0] - y[1])
        return pa.decimal128(min(38, digits + scale), scale)
    if pa.types.is_date32(a) and pa.types.is_timestamp(b):
        return b
    if pa.types.is_date32(b) and pa.types.is_timestamp(a):
        return a
    return None


def _as_decimal(t: pa.DataType) -> Optional[Tuple[int, int]]:
    if pa.types.is_decimal(t):
        return int(t.precision), int(t.scale)
    return {1: (3, 0), 2: (5, 0), 3: (10, 0), 4: (20, 0)}.get(_RANK.get(t, 0))


def _aligned(t: pa.Table, version: "TableVersion", fields: List[pa.Field], renamed: Dict[str, str]) -> pa.Table:
    """``t`` (a version's rows) as ``fields``: cast to their types, null where the version lacks the column."""
    cols = []
    for f in fields:
        own = f.name if f.name in version.schema.names else renamed.get(f.name)
        if own is not None and own in t.column_names:
            c = t.column(own)
            cols.append(c if c.type == f.type else c.cast(f.type))
        else:
            cols.append(pa.nulls(t.num_rows, f.type))
    return pa.Table.from_arrays(cols, schema=pa.schema([f.with_nullable(True) for f in fields]))


def diff_versions(label: str, old: "TableVersion", new: "TableVersion") -> pa.Table:
    """The row diff from ``old`` to ``new`` (see the module): by key, ``_change`` (insert, update, delete), the
    key columns, ``<c>_before`` and ``<c>_after``; else ``_change`` (insert, delete) and the columns.

    Example::

        diff_versions("shop.orders", repo.table("orders", "v1"), repo.table("orders")).num_rows
    """
    from versioned.reader._table import key_order

    shape = shape_of(label, old, new)
    if shape.exact:
        ta, tb = (t.to_arrow() for t in _unshared(old, new))
    else:
        ta, tb = old.to_arrow(), new.to_arrow()
    schema = shape.result_schema()
    if not shape.by_key:
        out = _bag_diff(_aligned(ta, old, shape.values, {}), _aligned(tb, new, shape.values, {}), shape, schema)
        return out.take(key_order(out, [f.name for f in shape.values])) if out.num_rows else out
    fields = shape.keys + shape.values
    keys = [f.name for f in shape.keys]
    values = [f.name for f in shape.values]
    before = {tuple(r[k] for k in keys): r for r in _aligned(ta, old, fields, shape.renamed).to_pylist()}
    rows: List[Dict[str, Any]] = []
    for r in _aligned(tb, new, fields, {}).to_pylist():
        k = tuple(r[c] for c in keys)
        prev = before.pop(k, None)
        if prev is None:
            rows.append(_row("insert", keys, values, None, r))
        elif any(not _same(prev[v], r[v]) for v in values):
            rows.append(_row("update", keys, values, prev, r))
    rows += [_row("delete", keys, values, prev, None) for prev in before.values()]
    out = pa.Table.from_pylist(rows, schema=schema)
    return out.take(key_order(out, keys)) if out.num_rows else out


def _row(change: str, keys: List[str], values: List[str], before: Optional[Dict[str, Any]],
         after: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    either = after if after is not None else before
    assert either is not None
    out: Dict[str, Any] = {_CHANGE: change, **{k: either[k] for k in keys}}
    for v in values:
        out[f"{v}_before"] = None if before is None else before[v]
        out[f"{v}_after"] = None if after is None else after[v]
    return out


def _same(x: Any, y: Any) -> bool:
    """Null-safe equality with NaN equal to NaN (Spark's ``<=>``)."""
    if isinstance(x, float) and isinstance(y, float) and x != x and y != y:
        return True
    return bool(x == y)


def _unshared(old: "TableVersion", new: "TableVersion") -> Tuple["TableVersion", "TableVersion"]:
    """The two versions without the fragments they share (same bounds, same objects: the same rows)."""
    def spans(t: "TableVersion") -> List[Tuple[str, str, Tuple[str, ...]]]:
        f = t.fragments
        return [(json.dumps(f[i].get("lower")), json.dumps(f[i + 1].get("lower")) if i + 1 < len(f) else "end",
                 tuple(f[i]["objects"])) for i in range(len(f))]

    shared = set(spans(old)) & set(spans(new))
    return (old.with_fragments([f for f, s in zip(old.fragments, spans(old)) if s not in shared]),
            new.with_fragments([f for f, s in zip(new.fragments, spans(new)) if s not in shared]))


def _bag_diff(ta: pa.Table, tb: pa.Table, shape: Shape, schema: pa.Schema) -> pa.Table:
    """Whole rows matched over the common columns with multiplicity: copies gained are inserts, copies lost
    deletes, each carrying its own side's columns."""
    common = shape.common or ta.column_names

    def key(r: Dict[str, Any]) -> Tuple[Any, ...]:
        return tuple((type(r[c]).__name__, repr(r[c])) for c in common)

    rows_a, rows_b = ta.to_pylist(), tb.to_pylist()
    by_a: Dict[Tuple[Any, ...], List[Dict[str, Any]]] = {}
    by_b: Dict[Tuple[Any, ...], List[Dict[str, Any]]] = {}
    for r in rows_a:
        by_a.setdefault(key(r), []).append(r)
    for r in rows_b:
        by_b.setdefault(key(r), []).append(r)
    ca, cb = Counter({k: len(v) for k, v in by_a.items()}), Counter({k: len(v) for k, v in by_b.items()})
    out = [{_CHANGE: "insert", **r} for k in by_b for r in by_b[k][ca.get(k, 0):]]
    out += [{_CHANGE: "delete", **r} for k in by_a for r in by_a[k][cb.get(k, 0):]]
    return pa.Table.from_pylist(out, schema=schema)
