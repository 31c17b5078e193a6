"""A table version read without Spark (docs/FORMAT.md, "Reading a table version"): fragments in key order, each
the conflation of its chain of objects (newest change per key wins, a ``Delete`` hides its key), every object
verified against its checksum before its rows are used, fragments and objects pruned by key filters.

Example::

    t = repo.table("orders", "main~2")
    t.to_arrow(columns=["id", "total"], filters=[("id", ">=", 100), ("id", "<", 200)])
    for batch in t.batches():
        ...
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from versioned.reader._errors import fail, object_corrupt, read_failure
from versioned.reader._objects import ObjectRecord
from versioned.reader._prune import (Filter, bound_value, comparable, key_filters, range_may_match, row_groups,
                                     upper_bound)
from versioned.reader._schema import arrow_schema, ddl
from versioned.reader._store import ObjectStore, locate_object

_DUP = "_vdup"
_CHANGE = "_vchange"
_DELETE = 1
_OPS: Dict[str, Callable[[Any, Any], Any]] = {"==": pc.equal, "=": pc.equal, "!=": pc.not_equal, "<": pc.less,
                                              "<=": pc.less_equal, ">": pc.greater, ">=": pc.greater_equal}


class TableVersion:
    """One table of one image: its schema, key and fragments, readable as Arrow.

    Example::

        t = repo.table("orders")
        t.schema, t.primary_key, t.num_rows_upper_bound
        t.to_pandas()
    """

    def __init__(self, repo: str, name: str, image: str, schema_json: str, primary_key: List[str], hidden_key: bool,
                 fragments: List[Dict[str, Any]], compacted: Optional[List[Dict[str, Any]]],
                 objects: Dict[str, ObjectRecord], store: ObjectStore) -> None:
        """Built by :meth:`versioned.reader.Repository.table`.

        Example::

            repo.table("orders", "v1")
        """
        self.repo, self.name, self.image = repo, name, image
        self.schema_json = schema_json
        self.schema: pa.Schema = arrow_schema(schema_json)
        self.primary_key = primary_key
        self.hidden_key = hidden_key
        self.fragments = fragments
        self.compacted = compacted
        self.objects = objects
        self.store = store

    @property
    def ddl(self) -> str:
        """The schema as Spark DDL text (``id BIGINT NOT NULL,name STRING``).

        Example::

            repo.table("orders").ddl
        """
        return ddl(self.schema_json)

    @property
    def key_columns(self) -> List[str]:
        """The physical key: the primary key, or every user column and then ``_vdup`` for a key-less table.

        Example::

            repo.table("orders").key_columns   # ['id']
        """
        return list(self.primary_key) if not self.hidden_key else [*self.schema.names, _DUP]

    @property
    def num_rows_upper_bound(self) -> int:
        """The rows of the objects read (an upper bound of the table's rows; exact for SNAP-only chains).

        Example::

            repo.table("orders").num_rows_upper_bound
        """
        return sum(self.objects[o].row_count for f in self._layout() for o in f["objects"])

    def with_fragments(self, fragments: List[Dict[str, Any]]) -> "TableVersion":
        """This version restricted to ``fragments`` (of its logical ones; no compacted form): a part of its rows.

        Example::

            t.with_fragments(t.fragments[:1]).to_arrow()   # the rows of the first fragment
        """
        # each fragment keeps its own bounds (its upper is the next fragment's lower in this version, not in the
        # part): the read rule reads every object within them
        own = self.fragments
        uppers = {id(f): own[i + 1].get("lower") if i + 1 < len(own) else None for i, f in enumerate(own)}
        bounded = [dict(f, upper=uppers[id(f)]) if id(f) in uppers and "upper" not in f else f for f in fragments]
        return TableVersion(self.repo, self.name, self.image, self.schema_json, self.primary_key, self.hidden_key,
                            bounded, None, self.objects, self.store)

    def _layout(self) -> List[Dict[str, Any]]:
        # the compacted representation holds the same rows with shorter chains: prefer it (FORMAT.md)
        return self.compacted if self.compacted else self.fragments

    def batches(self, columns: Optional[Sequence[str]] = None, filters: Sequence[Filter] = ()) -> Iterator[pa.RecordBatch]:
        """The rows as record batches, fragment by fragment in key order: memory holds one fragment's objects at a
        time. ``columns`` projects, ``filters`` keep matching rows and prune fragments and objects by their keys.

        Example::

            for b in repo.table("orders").batches(columns=["id"], filters=[("id", "<", 10)]):
                print(b.num_rows)
        """
        wanted = self._columns(columns)
        self._check_filters(filters)
        out_schema = pa.schema([self.schema.field(c) for c in wanted])
        for frag_index, frag in enumerate(self._layout()):
            layout = self._layout()
            upper = frag["upper"] if "upper" in frag else layout[frag_index + 1]["lower"] if frag_index + 1 < len(layout) else None
            if not self._fragment_may_match(frag.get("lower"), upper, filters):
                continue
            table = self._read_fragment(frag["objects"], wanted, filters, (frag.get("lower"), upper))
            if table is None or table.num_rows == 0:
                continue
            yield from table.cast(out_schema).to_batches()

    def to_arrow(self, columns: Optional[Sequence[str]] = None, filters: Sequence[Filter] = ()) -> pa.Table:
        """The table version as one :class:`pyarrow.Table`, sorted by key.

        Example::

            repo.table("orders", "v1").to_arrow(columns=["id", "total"], filters=[("id", "==", 42)])
        """
        wanted = self._columns(columns)
        schema = pa.schema([self.schema.field(c) for c in wanted])
        return pa.Table.from_batches(list(self.batches(columns, filters)), schema=schema)

    def to_reader(self, columns: Optional[Sequence[str]] = None, filters: Sequence[Filter] = ()) -> pa.RecordBatchReader:
        """A :class:`pyarrow.RecordBatchReader` streaming :meth:`batches` (DuckDB and Polars scan it lazily).

        Example::

            import duckdb
            r = repo.table("orders").to_reader()
            duckdb.sql("SELECT count(*) FROM r").fetchall()
        """
        wanted = self._columns(columns)
        schema = pa.schema([self.schema.field(c) for c in wanted])
        return pa.RecordBatchReader.from_batches(schema, self.batches(columns, filters))

    def to_pandas(self, columns: Optional[Sequence[str]] = None, filters: Sequence[Filter] = ()) -> Any:
        """The table version as a pandas DataFrame (needs pandas).

        Example::

            df = repo.table("orders").to_pandas()
        """
        return self.to_arrow(columns, filters).to_pandas()

    def to_polars(self, columns: Optional[Sequence[str]] = None, filters: Sequence[Filter] = ()) -> Any:
        """The table version as a Polars DataFrame (needs polars).

        Example::

            df = repo.table("orders").to_polars()
        """
        try:
            import polars
        except ImportError as e:
            raise fail("UNSUPPORTED_OPERATION", "to_polars needs Polars: install the extra versioned-spark[polars].",
                       e) from e
        return polars.from_arrow(self.to_arrow(columns, filters))

    def to_duckdb(self, connection: Any = None, columns: Optional[Sequence[str]] = None,
                  filters: Sequence[Filter] = ()) -> Any:
        """A DuckDB relation over the table version's stream of batches (needs duckdb).

        Example::

            rel = repo.table("orders").to_duckdb()
            rel.aggregate("count(*)").fetchall()
        """
        try:
            import duckdb
        except ImportError as e:
            raise fail("UNSUPPORTED_OPERATION", "to_duckdb needs DuckDB: install the extra versioned-spark[duckdb].",
                       e) from e
        con = connection if connection is not None else duckdb.connect()
        return con.from_arrow(self.to_reader(columns, filters))

    # ---- reading
    def _columns(self, columns: Optional[Sequence[str]]) -> List[str]:
        if columns is None:
            return list(self.schema.names)
        unknown = [c for c in columns if c not in self.schema.names]
        if unknown:
            raise fail("INVALID_OPTION", f"Table {self.repo}.{self.name} has no column {', '.join(unknown)}; its columns "
                       f"are {', '.join(self.schema.names)}.")
        return list(columns)

    def _check_filters(self, filters: Sequence[Filter]) -> None:
        """Every filter as ``(column, operator, value)`` on a column of the table, with a supported operator and a
        value of the column's type (for ``in``, a collection of them); else ``INVALID_OPTION`` before any read."""
        for f in filters:
            if not isinstance(f, (tuple, list)) or len(f) != 3:
                raise fail("INVALID_OPTION", f"Filter {f!r} is not a (column, operator, value) triple.")
            col, op, value = f
            if col not in self.schema.names:
                raise fail("INVALID_OPTION", f"Filter {tuple(f)!r}: table {self.repo}.{self.name} has no column {col!r}; "
                           f"its columns are {', '.join(self.schema.names)}.")
            if op != "in" and op not in _OPS:
                raise fail("INVALID_OPTION", f"Filter operator '{op}' is not supported; use ==, !=, <, <=, >, >= or in.")
            t = self.schema.field(col).type
            try:
                if op == "in":
                    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
                        raise TypeError("not a collection")
                    pa.array(list(value), t)
                else:
                    pa.scalar(value, t)
            except (TypeError, ValueError, pa.ArrowException) as e:
                kind = "a collection of values" if op == "in" else "a value"
                raise fail("INVALID_OPTION", f"Filter {tuple(f)!r}: column {col!r} is {t}, and {value!r} is not {kind} "
                           f"of that type ({e}). Give {kind} of the column's type.") from None

    def _physical(self) -> pa.Schema:
        fields = list(self.schema)
        if self.hidden_key:
            fields.append(pa.field(_DUP, pa.int32(), False))
        return pa.schema(fields)

    def _read_fragment(self, object_ids: List[str], wanted: List[str], filters: Sequence[Filter],
                       bounds: Tuple[Optional[List[Any]], Optional[List[Any]]] = (None, None)) -> Optional[pa.Table]:
        keys = self.key_columns
        physical = self._physical()
        needed = [c for c in physical.names if c in set(keys) | set(wanted) | {f[0] for f in filters}]
        # key filters select the rows of every object before the merge (and skip row groups); the others after it
        early = key_filters(filters, keys, {c: physical.field(c).type for c in keys})
        late = [f for f in filters if f not in early]
        parts: List[pa.Table] = []
        kinds: List[str] = []
        for src, oid in enumerate(object_ids):
            rec = self.objects[oid]
            # a key predicate may skip any object by its key min/max; a DIFF is never skipped by non-key values
            if not self._object_may_match(rec, filters):
                continue
            t = self._read_object(rec, needed, physical, early)
            if not self._covers(rec, bounds):  # the read rule: an object's rows within the fragment's bounds
                t = t.filter(_within(t, keys, physical, bounds))
            if t.num_rows == 0:
                continue
            t = t.append_column("__vsrc", pa.repeat(pa.scalar(src, pa.int32()), t.num_rows))
            parts.append(t)
            kinds.append(rec.kind)
        if not parts:
            return None
        if len(parts) == 1 and kinds[0] == "SNAP":
            merged = parts[0]
        elif kinds[0] == "SNAP" and len(keys) == 1 and _simple_key(physical.field(keys[0]).type):
            merged = _overlay(parts[0], parts[1:], keys[0])
        elif len(parts) == 1 and len(keys) == 1 and kinds[0] == "DIFF":
            merged = _live(parts[0])  # one DIFF: one change per key, sorted already
        else:
            merged = _conflate(pa.concat_tables(parts, promote_options="default"), keys)
        mask = _filter_mask(merged, late)
        if mask is not None:
            merged = merged.filter(mask)
        return merged.select(wanted)

    def _read_object(self, rec: ObjectRecord, needed: List[str], physical: pa.Schema,
                     early: Sequence[Filter] = ()) -> pa.Table:
        """The object's ``needed`` columns (cast to the table's types, nulls for columns it predates) and
        ``_vchange``, of the row groups whose key statistics may match ``early``, whose rows it then selects."""
        fs, path = locate_object(self.store, rec.id, rec.locations, rec.size_bytes, rec.checksum)
        try:
            with fs.open_input_file(path) as f:
                pf = pq.ParquetFile(f, page_checksum_verification=True, coerce_int96_timestamp_unit="us")
                if pf.metadata.num_rows != rec.row_count:
                    raise object_corrupt(rec.id, f"{path} has {pf.metadata.num_rows} rows, {rec.row_count} were "
                                         "written")
                present = set(pf.schema_arrow.names)
                cols = [c for c in needed if c in present] + ([_CHANGE] if _CHANGE in present else [])
                groups = row_groups(pf.metadata, early, {c: physical.field(c).type for c in needed})
                first = self.key_columns[0]
                stop = upper_bound(early, first, physical.field(first).type) if first in present else None
                if stop is not None:  # rows are in key order: decode batches only until a key passes the bound
                    t, whole = _read_until(pf, cols, groups, first, stop)
                else:
                    t, whole = pf.read(columns=cols) if groups is None else pf.read_row_groups(groups, columns=cols), True
        except (OSError, pa.ArrowException) as e:
            raise read_failure(rec.id, path, e) from e
        expected = rec.row_count if groups is None else sum(pf.metadata.row_group(g).num_rows for g in groups)
        if whole and t.num_rows != expected:
            raise object_corrupt(rec.id, f"{path} has {t.num_rows} rows, {rec.row_count} were written")
        arrays = []
        names = []
        for c in needed:
            target = physical.field(c).type
            if c in t.column_names:
                arrays.append(t.column(c).cast(target))
            else:  # a column the object predates: null
                arrays.append(pa.nulls(t.num_rows, target))
            names.append(c)
        change = t.column(_CHANGE).cast(pa.int8()) if _CHANGE in t.column_names else pa.nulls(t.num_rows, pa.int8())
        arrays.append(change)
        names.append(_CHANGE)
        out = pa.Table.from_arrays(arrays, names=names)
        mask = _filter_mask(out, early)
        return out if mask is None else out.filter(mask)

    def _covers(self, rec: ObjectRecord, bounds: Tuple[Optional[List[Any]], Optional[List[Any]]]) -> bool:
        """Whether the object holds only keys within the fragment's bounds (FORMAT.md, the read rule): it is not
        shared (every object of a format 1 table), or its statistics show it: its per-column minima at or above the lower bound and maxima
        below the upper, compared where this reader compares values (integers, strings), else False."""
        lower, upper = bounds
        if not rec.shared or (lower is None and upper is None):
            return True  # an object that is not shared holds only its fragment's keys
        if self.hidden_key or rec.row_count == 0:
            return rec.row_count == 0  # key-less keys may be null, which the statistics do not show
        keys = self.key_columns

        def stat(values: Dict[str, Any]) -> Optional[List[Any]]:
            out = [bound_value(values.get(k), self._key_type(k)) for k in keys]
            return None if any(v is None for v in out) else out

        def bound(b: Optional[List[Any]]) -> Optional[List[Any]]:
            out = [bound_value(v, self._key_type(k)) for k, v in zip(keys, b or [])]
            return None if any(v is None for v in out) else out

        lo, hi = stat(rec.min_values), stat(rec.max_values)
        if lo is None or hi is None:
            return False
        if lower is not None:
            lb = bound(lower)
            if lb is None or lo < lb:
                return False
        if upper is not None:
            ub = bound(upper)
            if ub is None or not hi < ub:
                return False
        return True

    def _key_type(self, column: str) -> pa.DataType:
        return self._physical().field(column).type

    def _fragment_may_match(self, lower: Optional[List[Any]], upper: Optional[List[Any]],
                            filters: Sequence[Filter]) -> bool:
        keys = self.key_columns
        if not filters or not keys:
            return True
        lo = bound_value(lower[0], self._key_type(keys[0])) if lower else None
        hi = bound_value(upper[0], self._key_type(keys[0])) if upper else None
        # keys of the fragment have a first component in [lo, hi] (hi exclusive for one-column keys)
        exclusive = len(keys) == 1
        for col, op, value in filters:
            if col != keys[0] or not comparable(value):
                continue
            if not range_may_match(lo, hi, exclusive, op, value):
                return False
        return True

    def _object_may_match(self, rec: ObjectRecord, filters: Sequence[Filter]) -> bool:
        for col, op, value in filters:
            if col not in self.key_columns or not comparable(value):
                continue
            if col not in rec.min_values or col not in rec.max_values:
                continue
            lo = bound_value(rec.min_values[col], self._key_type(col))
            hi = bound_value(rec.max_values[col], self._key_type(col))
            if lo is None or hi is None:
                continue
            if not range_may_match(lo, hi, False, op, value):
                return False
        return True


#: rows decoded at a time when a key bound may end an object's read early
_BATCH_ROWS = 65536


def _read_until(pf: pq.ParquetFile, cols: List[str], groups: Optional[List[int]], key: str,
                stop: Tuple[Any, bool]) -> Tuple[pa.Table, bool]:
    """The rows of ``pf`` (sorted by ``key``) up to the first batch whose last key is past ``stop`` = (bound,
    inclusive), and whether every row was read."""
    bound, inclusive = stop
    parts: List[pa.RecordBatch] = []
    whole = True
    for batch in pf.iter_batches(batch_size=_BATCH_ROWS, row_groups=groups, columns=cols):
        parts.append(batch)
        last = batch.column(key)[-1].as_py() if batch.num_rows else None
        if last is not None and (last > bound or (last == bound and not inclusive)):
            whole = False
            break
    schema = pa.schema([pf.schema_arrow.field(c) for c in cols])
    return pa.Table.from_batches(parts, schema=schema), whole


def _filter_mask(t: pa.Table, filters: Sequence[Filter]) -> Optional[pa.ChunkedArray]:
    mask = None
    for col, op, value in filters:
        if op == "in":
            m = pc.is_in(t.column(col), value_set=pa.array(list(value), t.column(col).type))
        elif op in _OPS:
            m = _OPS[op](t.column(col), pa.scalar(value, t.column(col).type))
        else:
            raise fail("INVALID_OPTION", f"Filter operator '{op}' is not supported; use ==, !=, <, <=, >, >= or in.")
        m = pc.fill_null(m, False)
        mask = m if mask is None else pc.and_(mask, m)
    return mask


def key_order(t: pa.Table, keys: Sequence[str], then: Optional[str] = None) -> pa.Array:
    """The indices that sort ``t`` by ``keys`` ascending, nulls first (the key order), then by column ``then``.

    Example::

        t.take(key_order(t, ["id"]))
    """
    extra = [(then, "ascending")] if then else []
    try:  # nulls first per key since pyarrow 25; before, for the whole sort
        return pc.sort_indices(t, sort_keys=[(k, "ascending", "at_start") for k in keys] + extra)
    except (TypeError, ValueError, pa.ArrowInvalid):
        return pc.sort_indices(t, sort_keys=[(k, "ascending") for k in keys] + extra, null_placement="at_start")


def _within(t: pa.Table, keys: List[str], physical: pa.Schema,
            bounds: Tuple[Optional[List[Any]], Optional[List[Any]]]) -> pa.Array:
    """The mask of rows of ``t`` whose key lies within ``lower <= key < upper`` in the key order (nulls first; NaN
    equal to NaN and above every other value; -0.0 equal to 0.0)."""
    lower, upper = bounds
    below_upper = _below(t, keys, physical, upper) if upper is not None else None
    at_or_above_lower = pc.invert(_below(t, keys, physical, lower)) if lower is not None else None
    if below_upper is None:
        return at_or_above_lower if at_or_above_lower is not None else pa.array([True] * t.num_rows)
    return below_upper if at_or_above_lower is None else pc.and_(below_upper, at_or_above_lower)


def _below(t: pa.Table, keys: List[str], physical: pa.Schema, bound: List[Any]) -> pa.Array:
    """The mask of rows of ``t`` whose key is below ``bound`` (metastore values), column by column."""
    below: Optional[pa.Array] = None
    equal: Optional[pa.Array] = None  # equal on every column so far
    for k, v in zip(keys, bound):
        col = t.column(k).combine_chunks()
        lt, eq = _column_below(col, physical.field(k).type, v)
        here = lt if equal is None else pc.and_(equal, lt)
        below = here if below is None else pc.or_(below, here)
        equal = eq if equal is None else pc.and_(equal, eq)
    return below if below is not None else pa.array([False] * t.num_rows)


def _column_below(col: pa.Array, t: pa.DataType, v: Any) -> Tuple[pa.Array, pa.Array]:
    """Per row, whether the column's value is below ``v`` and whether it equals ``v``, in the key order."""
    nulls = pc.is_null(col)
    if v is None:
        return pa.array([False] * len(col)), nulls
    if pa.types.is_floating(t):
        v = float(v)  # statistics and bounds may hold "NaN", "Infinity", "-Infinity"
    if isinstance(v, float) and v != v:  # NaN: above everything but NaN
        nan = pc.fill_null(pc.is_nan(col), False)
        return pc.invert(nan), nan
    value = _bound_scalar(v, t)
    lt = pc.or_(nulls, pc.fill_null(pc.less(col, value), False))
    return lt, pc.fill_null(pc.equal(col, value), False)


def _bound_scalar(v: Any, t: pa.DataType) -> pa.Scalar:
    """A bound value (the metastore's value encoding) as an Arrow scalar of the key column's type."""
    if pa.types.is_date(t):
        return pa.array([int(v)], pa.int32()).cast(t)[0]
    if pa.types.is_timestamp(t):
        return pa.array([int(v)], pa.int64()).cast(pa.timestamp("us", tz=t.tz)).cast(t)[0]
    if pa.types.is_decimal(t):
        import decimal
        return pa.scalar(decimal.Decimal(str(v)), t)
    if pa.types.is_floating(t):
        return pa.scalar(float(v), t)
    return pa.scalar(v, t)


def _simple_key(t: pa.DataType) -> bool:
    """Key types whose equality is Arrow's (no floats: -0.0 and NaN follow the key order's rules)."""
    return bool(pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_date(t) or pa.types.is_timestamp(t))


def _overlay(snap: pa.Table, diffs: List[pa.Table], key: str) -> pa.Table:
    """A SNAP under DIFFs (oldest first), for a one-column key: the SNAP's rows whose key no DIFF touches, then the
    DIFFs' newest live rows, in key order (the same rows as :func:`_conflate`, without sorting the SNAP with its
    DIFFs)."""
    changes: Optional[pa.Table] = diffs[0] if len(diffs) == 1 else None
    if changes is None:  # each DIFF has one change per key, in key order: fold them, newest over older
        changes = diffs[0]
        for newer in diffs[1:]:
            changes = _merge_sorted(changes, newer, key, keep_deletes=True) if changes is not None else None
        if changes is None:
            changes = _conflate(pa.concat_tables(diffs, promote_options="default"), [key], keep_deletes=True)
    merged = _merge_sorted(snap, changes, key)
    if merged is not None:
        return merged
    touched = changes.column(key).combine_chunks()
    base = snap.filter(pc.invert(pc.fill_null(pc.is_in(snap.column(key), value_set=touched), False)))
    live = _live(changes)
    out = pa.concat_tables([base, live], promote_options="default")
    return out.take(key_order(out, [key]))


#: a merged fragment made of at most this many runs of consecutive rows is a list of slices (no copy)
_MAX_SLICES = 64


def _merge_sorted(snap: pa.Table, changes: pa.Table, key: str, keep_deletes: bool = False) -> Optional[pa.Table]:
    """Rows of ``snap`` (unique keys in key order) replaced by ``changes`` (the same, newer), for an integer key
    without nulls, by binary search (numpy): the untouched rows and the live changes (with ``keep_deletes``, every
    change) interleaved in key order, copied once (or, when they form few runs, not at all); None for other keys
    or without numpy."""
    sk, ck = snap.column(key), changes.column(key)
    if not pa.types.is_integer(sk.type) or sk.null_count or ck.null_count:
        return None
    try:
        import numpy as np
    except ImportError:
        return None
    s, c = sk.to_numpy(), ck.to_numpy()
    n = len(s)
    pos = np.searchsorted(s, c)  # where each changed key is, or would be, in the SNAP
    hit = pos < n
    hit[hit] = s[pos[hit]] == c[hit]
    keep = np.ones(n, dtype=bool)
    keep[pos[hit]] = False  # replaced or deleted by a change
    kept = np.flatnonzero(keep)
    live = np.arange(len(c)) if keep_deletes else np.flatnonzero(pc.fill_null(pc.not_equal(
        changes.column(_CHANGE), pa.scalar(_DELETE, pa.int8())), True).to_numpy(zero_copy_only=False))
    live_pos = pos[live]
    order = np.empty(len(kept) + len(live), dtype=np.int64)
    # a kept SNAP row follows every live change at or before its position; a change follows the kept rows before it
    order[np.arange(len(kept)) + np.searchsorted(live_pos, kept, side="right")] = kept
    order[np.searchsorted(kept, live_pos, side="left") + np.arange(len(live))] = n + live
    both = pa.concat_tables([snap, changes], promote_options="default")
    if not len(order):
        return both.slice(0, 0)
    breaks = np.flatnonzero(np.diff(order) != 1) + 1
    if len(breaks) < _MAX_SLICES:
        starts = np.concatenate([[0], breaks])
        ends = np.concatenate([breaks, [len(order)]])
        return pa.concat_tables([both.slice(int(order[a]), int(b - a)) for a, b in zip(starts, ends)]
                                or [both.slice(0, 0)])
    return both.take(pa.array(order))


def _live(t: pa.Table) -> pa.Table:
    """The rows of conflated changes that are not deletes."""
    return t.filter(pc.fill_null(pc.not_equal(t.column(_CHANGE), pa.scalar(_DELETE, pa.int8())), True))


def _conflate(t: pa.Table, keys: List[str], keep_deletes: bool = False) -> pa.Table:
    """The newest change of every key (largest ``__vsrc``), in key order; deletes dropped unless ``keep_deletes``."""
    if t.num_rows == 0:
        return t
    s = t.take(key_order(t, keys, then="__vsrc"))
    n = s.num_rows
    # last row of each run of equal keys: the next row has another key
    same_as_next = None
    for k in keys:
        col = s.column(k).combine_chunks()
        a, b = col.slice(0, n - 1), col.slice(1)
        eq = pc.fill_null(pc.equal(a, b), False)
        both_null = pc.and_(pc.is_null(a), pc.is_null(b))
        eq = pc.or_(eq, both_null)
        if pa.types.is_floating(col.type):
            eq = pc.or_(eq, pc.fill_null(pc.and_(pc.is_nan(a), pc.is_nan(b)), False))
        same_as_next = eq if same_as_next is None else pc.and_(same_as_next, eq)
    assert same_as_next is not None
    last = pa.concat_arrays([pc.invert(same_as_next), pa.array([True])])
    winners = s.filter(last)
    if keep_deletes:
        return winners
    alive = pc.fill_null(pc.not_equal(winners.column(_CHANGE), pa.scalar(_DELETE, pa.int8())), True)
    return winners.filter(alive)
