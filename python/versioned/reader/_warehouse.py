"""Opening a warehouse without Spark: the object store and the metastore from the settings Spark takes
(``spark.versioned.warehouse``, ``spark.versioned.metastore.url``), checked to be one warehouse (docs/FORMAT.md,
"Warehouse identity") and of a metastore format this reader knows.

Example::

    wh = open_warehouse("/data/wh")
    wh.repositories()
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from versioned.reader._errors import fail
from versioned.reader._history import Commit, History, RefInfo
from versioned.reader._metastore import Metastore, check_schema, check_table_format, redact, sqlite_file
from versioned.reader._store import ObjectStore, locate_object
from versioned.reader._objects import load_objects

if TYPE_CHECKING:  # pyarrow is imported when a table is read, not to list refs or history
    import pyarrow as pa

    from versioned.reader._table import TableVersion

#: The connector's default warehouse (``spark.versioned.warehouse`` unset).
DEFAULT_WAREHOUSE = "./versioned-warehouse"
_MARKER = "_versioned/warehouse-id"


def default_metastore_url(warehouse: str) -> str:
    """The embedded SQLite metastore of a local warehouse (the connector's ``WarehouseConfig.embedded``).

    Example::

        >>> default_metastore_url("/data/wh")
        'jdbc:sqlite:/data/wh/metastore.db'
    """
    if "://" in warehouse and not warehouse.startswith("file:"):
        raise fail("INVALID_OPTION", f"Warehouse '{warehouse}' is not local, so the embedded SQLite metastore cannot "
                   "live in it. Set spark.versioned.metastore.url (e.g. jdbc:postgresql://host/db or "
                   "jdbc:sqlite:/path/metastore.db).")
    local = warehouse[len("file:"):] if warehouse.startswith("file:") else warehouse
    local = local[2:] if local.startswith("//") else local
    return "jdbc:sqlite:" + os.path.join(os.path.abspath(local), "metastore.db")


class Warehouse:
    """A warehouse opened read-only. Use :func:`open_warehouse`.

    Example::

        wh = open_warehouse("/data/wh", metastore_url="jdbc:postgresql://db/meta?user=reader")
        wh.repository("shop").table("orders").to_arrow()
    """

    def __init__(self, warehouse: str, metastore_url: Optional[str] = None) -> None:
        """Opens and checks the warehouse (see :func:`open_warehouse`).

        Example::

            Warehouse("/data/wh")
        """
        self.warehouse = warehouse
        self.metastore_url = metastore_url or default_metastore_url(warehouse)
        self.store = ObjectStore.open(warehouse)
        where = f"warehouse {warehouse} with metastore {redact(self.metastore_url)}"
        path = sqlite_file(self.metastore_url)
        if path is not None and not os.path.exists(path):
            marker = self.store.read_text(_MARKER)
            if marker is not None:
                raise fail("WAREHOUSE_MISMATCH", f"The metastore file {path} does not exist, but warehouse {warehouse} "
                           f"(id {marker}) holds data: the metastore was deleted or moved. Restore it (or set "
                           "spark.versioned.metastore.url to where it is now). Nothing was changed.")
            raise fail("WAREHOUSE_MISMATCH", f"There is no warehouse at {warehouse}: its metastore {path} does not "
                       "exist. Check spark.versioned.warehouse and spark.versioned.metastore.url (a read never creates "
                       "a warehouse).")
        self.meta = Metastore.open(self.metastore_url)
        self.schema_version = check_schema(self.meta)
        self.warehouse_id = self._check_identity(where)

    def _check_identity(self, where: str) -> str:
        recorded = self.meta.value("SELECT value FROM vc_meta WHERE key = ?", "warehouse_id")
        marker = self.store.read_text(_MARKER)
        if recorded is not None and marker is not None:
            if recorded == marker:
                return str(recorded)
            raise fail("WAREHOUSE_MISMATCH", f"The metastore belongs to warehouse {recorded}, but the object store is "
                       f"warehouse {marker} ({where}). Point spark.versioned.warehouse and spark.versioned.metastore.url "
                       "at the same warehouse. Nothing was changed.")
        if recorded is None and marker is not None:
            raise fail("WAREHOUSE_MISMATCH", f"The object store is warehouse {marker} and holds data, but the metastore "
                       f"does not know it: it is empty, new or another database ({where}). Restore the warehouse's "
                       "metastore or point spark.versioned.metastore.url at it. Nothing was changed.")
        if recorded is not None:
            if self.store.has_objects():
                raise fail("WAREHOUSE_MISMATCH", f"The metastore belongs to warehouse {recorded}, but the object store "
                           f"holds objects and no identity ({where}). Point spark.versioned.warehouse at warehouse "
                           f"{recorded}'s object store.")
            if self.meta.rows("SELECT 1 FROM vc_objects LIMIT 1"):
                raise fail("WAREHOUSE_MISMATCH", f"The metastore records objects of warehouse {recorded}, but the "
                           f"object store has none ({where}): it is the wrong location, or its objects were removed. "
                           "Point spark.versioned.warehouse at the warehouse's object store, or restore it. Nothing "
                           "was changed.")
            return str(recorded)  # no data yet: the connector records the marker on its first open; a reader writes nothing
        if self.store.has_objects():
            raise fail("WAREHOUSE_MISMATCH", f"The object store holds objects, but the metastore is empty ({where}): the "
                       "metastore was deleted or the URL names another database. Restore it or point "
                       "spark.versioned.metastore.url at it. Nothing was changed.")
        return ""

    def repositories(self) -> List[str]:
        """The repository names, sorted.

        Example::

            open_warehouse("/data/wh").repositories()   # ['shop']
        """
        return [str(r[0]) for r in self.meta.rows("SELECT name FROM vc_repositories ORDER BY name")]

    def repository(self, name: str) -> "Repository":
        """Repository ``name``; ``REPOSITORY_NOT_FOUND`` if there is none.

        Example::

            open_warehouse("/data/wh").repository("shop")
        """
        return Repository(self, name)

    def read_table(self, table: str, ref: Optional[str] = None, columns: Optional[List[str]] = None,
                   filters: Any = ()) -> "pa.Table":
        """``repo.table`` at ``ref`` (default: the default branch's head) as a :class:`pyarrow.Table`.

        Example::

            open_warehouse("/data/wh").read_table("shop.orders", "main~1", columns=["id"])
        """
        repo, _, name = table.partition(".")
        if not name:
            raise fail("INVALID_NAME", f"'{table}' is not REPOSITORY.TABLE.")
        return self.repository(repo).table(name, ref).to_arrow(columns, filters)

    def close(self) -> None:
        """Closes the metastore connection.

        Example::

            wh.close()
        """
        self.meta.close()

    def __enter__(self) -> "Warehouse":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Repository(History):
    """A repository of a :class:`Warehouse`: refs, revisions, history and tables, read without Spark.

    Example::

        repo = open_warehouse("/data/wh").repository("shop")
        repo.branches(); repo.log("main", limit=5); repo.table("orders", "v1").to_pandas()
    """

    def __init__(self, warehouse: Warehouse, name: str) -> None:
        """Use :meth:`Warehouse.repository`.

        Example::

            Repository(wh, "shop")
        """
        super().__init__(warehouse.meta, name)
        self.warehouse = warehouse
        self.name = name

    def branches(self) -> List[RefInfo]:
        """The branches, by name.

        Example::

            [b.name for b in repo.branches()]
        """
        return self.refs("branch")

    def tags(self) -> List[RefInfo]:
        """The tags, by name.

        Example::

            [t.name for t in repo.tags()]
        """
        return self.refs("tag")

    def locks(self) -> List[RefInfo]:
        """The locks (``namespace:name``), by name.

        Example::

            [lk.name for lk in repo.locks()]
        """
        return self.refs("lock")

    def remote_refs(self) -> List[RefInfo]:
        """The remote-tracking refs (``origin/main``, ``origin/tags/v1``), by name.

        Example::

            [r.name for r in repo.remote_refs()]
        """
        return self.refs("remote")

    def remotes(self) -> Dict[str, Dict[str, Any]]:
        """The remotes: name -> the stored location (warehouse, metastore_url, repository, fetched_seq).

        Example::

            repo.remotes()["origin"]["warehouse"]
        """
        rows = self.meta.rows("SELECT remote, url FROM vc_upstreams WHERE repo = ? ORDER BY remote", self.name)
        return {str(r): json.loads(str(u)) for r, u in rows}

    def _resolve_any(self, ref: Optional[str], as_of: Any) -> Commit:
        return self.as_of(as_of, ref) if as_of is not None else self.resolve(ref)

    def tables(self, ref: Optional[str] = None) -> List[str]:
        """The table names of the image ``ref`` names.

        Example::

            repo.tables("v1")   # ['customers', 'orders']
        """
        img = self.resolve(ref)
        return [str(r[0]) for r in self.meta.rows(
            "SELECT name FROM vc_tables WHERE repo = ? AND image_hash = ? ORDER BY name", self.name, img.hash)]

    def table(self, name: str, ref: Optional[str] = None, *, as_of: Any = None) -> "TableVersion":
        """Table ``name`` at revision ``ref`` (default: the default branch's head), or the newest commit of branch
        ``ref`` at or before ``as_of``; ``TABLE_NOT_FOUND`` if that image has no such table.

        Example::

            repo.table("orders", "main~2").to_arrow()
            repo.table("orders", as_of="2026-01-31 12:00:00").to_pandas()
        """
        img = self._resolve_any(ref, as_of)
        return self.table_at(img, name)

    def table_at(self, img: Commit, name: str) -> "TableVersion":
        """Table ``name`` of an image already resolved.

        Example::

            repo.table_at(repo.resolve("v1"), "orders")
        """
        rows = self.meta.rows("SELECT schema_json, primary_key, hidden_key, fragments, compacted, format_version "
                              "FROM vc_tables WHERE repo = ? AND image_hash = ? AND name = ?", self.name, img.hash, name)
        if not rows:
            names = self.meta.rows("SELECT name FROM vc_tables WHERE repo = ? AND image_hash = ? ORDER BY name",
                                   self.name, img.hash)
            raise fail("TABLE_NOT_FOUND", f"Table '{self.name}.{name}' does not exist at image {img.short_hash}. Its "
                       f"tables are: {', '.join(str(n[0]) for n in names) or '(none)'}.")
        from versioned.reader._table import TableVersion

        schema_json, pk, hidden, fragments, compacted, format_version = rows[0]
        check_table_format(f"{self.name}.{name}", format_version)
        frags = json.loads(str(fragments))
        comp = json.loads(str(compacted)) if compacted else None
        ids = sorted({o for f in (comp or frags) for o in f["objects"]} | {o for f in frags for o in f["objects"]})
        objects = load_objects(self.meta, ids)
        return TableVersion(self.name, name, img.hash, str(schema_json), list(json.loads(str(pk or "[]"))),
                            bool(int(str(hidden))), frags, comp, objects, self.warehouse.store)

    def show(self, ref: Optional[str] = None) -> Dict[str, Any]:
        """One image as the connector's ``show`` document: image, parents, author, message, created, created_ms,
        tables (name, hash, changed, schema, columns, primary_key, hidden_key, fragments, objects, bytes),
        changed_tables, dropped_tables.

        Example::

            repo.show("v1")["tables"][0]["schema"]
        """
        img = self.resolve(ref)
        rows = self.meta.rows("SELECT name, table_hash, changed, schema_json, primary_key, hidden_key, fragments, "
                              "compacted FROM vc_tables WHERE repo = ? AND image_hash = ? ORDER BY name",
                              self.name, img.hash)
        ids = sorted({o for r in rows for f in json.loads(str(r[6])) for o in f["objects"]})
        objects = load_objects(self.meta, ids) if ids else {}
        from versioned.reader._schema import ddl

        def frag(f: Dict[str, Any]) -> Dict[str, Any]:
            return {"lower": f.get("lower"), "objects": [
                {"id": o, "kind": objects[o].kind, "rows": objects[o].row_count, "bytes": objects[o].size_bytes}
                if o in objects else {"id": o} for o in f["objects"]]}

        tables = []
        for name, thash, changed, sj, pk, hidden, fr, _comp in rows:
            fl = json.loads(str(fr))
            distinct = sorted({o for f in fl for o in f["objects"]})
            fields = json.loads(str(sj))["fields"]
            tables.append({
                "name": name, "hash": thash, "changed": bool(int(str(changed))), "schema": ddl(str(sj)),
                "columns": [{"name": f["name"], "type": f["type"] if isinstance(f["type"], str) else f["type"]["type"],
                             "nullable": bool(f.get("nullable", True))} for f in fields],
                "primary_key": json.loads(str(pk or "[]")), "hidden_key": bool(int(str(hidden))),
                "fragments": [frag(f) for f in fl], "objects": len(distinct),
                "bytes": sum(objects[o].size_bytes for o in distinct if o in objects)})
        present = {str(r[0]) for r in rows}
        dropped: List[str] = []
        if img.parents:
            before = {str(r[0]) for r in self.meta.rows(
                "SELECT name FROM vc_tables WHERE repo = ? AND image_hash = ?", self.name, img.parents[0])}
            dropped = sorted(before - present)
        return {"image": img.hash, "parents": list(img.parents), "author": img.author, "message": img.message,
                "created": _iso(img.created_ms), "created_ms": img.created_ms, "tables": tables,
                "changed_tables": list(img.tables_changed), "dropped_tables": dropped}

    def diff(self, table: str, a: Optional[str], b: Optional[str]) -> "pa.Table":
        """The row diff of ``table`` from revision ``a`` to ``b``, as the connector's (docs/DIFF.md, "The row diff"),
        for change sets that fit in memory: keyed tables give ``_change`` (insert, update, delete), the key columns,
        then ``<c>_before`` and ``<c>_after`` per other column; key-less tables ``_change`` (insert, delete) and the
        columns, compared as whole rows with multiplicity. Fragments that both versions share (same bounds and
        objects) are not read. Across a change of schema the columns are aligned as the connector aligns them
        (added, dropped and widened columns; rows matched whole when the key changed); a table absent from one
        revision diffs against no rows.

        Example::

            repo.diff("orders", "v1", "main").to_pylist()
        """
        from versioned.reader._diff import diff_versions

        old, new = self._version_or_none(table, a), self._version_or_none(table, b)
        if old is None and new is None:
            return self.table(table, b).to_arrow()  # TABLE_NOT_FOUND, naming the tables that exist
        if old is None:
            assert new is not None
            old = new.with_fragments([])
        if new is None:
            new = old.with_fragments([])
        return diff_versions(f"{self.name}.{table}", old, new)

    def _version_or_none(self, table: str, ref: Optional[str]) -> Optional["TableVersion"]:
        img = self.resolve(ref)
        if not self.meta.rows("SELECT 1 FROM vc_tables WHERE repo = ? AND image_hash = ? AND name = ?", self.name,
                              img.hash, table):
            return None
        return self.table_at(img, table)

    def verify(self, refs: Optional[Sequence[str]] = None) -> List[Dict[str, Any]]:
        """The connector's ``verify``: one row per object that the versions reachable from ``refs`` (default: every
        branch, tag, lock and remote-tracking ref) need, each whole file checked against its checksum: ``object``,
        ``kind``, ``status`` (``ok``, ``missing``, ``corrupt``), ``detail`` and ``needed_by`` (``table@image``).

        Example::

            [r["object"] for r in repo.verify(["main", "v1"]) if r["status"] != "ok"]   # []
        """
        from versioned.reader._verify import verify_repository

        return verify_repository(self, refs)

    def verify_objects(self, ref: Optional[str] = None) -> List[Tuple[str, str]]:
        """Checks every object of every table at ``ref`` byte for byte (whole-file CRC-32C); returns the
        ``(object id, error class)`` of each damaged or missing one (empty: all sound); ``STORAGE_ERROR`` if the
        store does not answer (the objects were not checked).

        Example::

            repo.verify_objects("main")   # []
        """
        img = self.resolve(ref)
        bad: List[Tuple[str, str]] = []
        for t in self.tables(img.hash):
            tv = self.table_at(img, t)
            for rec in tv.objects.values():
                try:
                    locate_object(self.warehouse.store, rec.id, rec.locations, rec.size_bytes, rec.checksum, whole=True)
                except Exception as e:  # noqa: BLE001 - damage is collected; a store that did not answer raises
                    error_class = getattr(e, "error_class", None)
                    if error_class not in ("OBJECT_CORRUPT", "OBJECT_MISSING"):
                        raise
                    bad.append((rec.id, str(error_class)))
        return bad


def _iso(ms: int) -> str:
    from versioned.reader._history import _instant

    return _instant(ms)


def open_warehouse(warehouse: Optional[str] = None, metastore_url: Optional[str] = None) -> Warehouse:
    """Opens a warehouse read-only, without Spark: ``warehouse`` is the object store root (a local path, ``file:``
    or ``s3a://``; default ``./versioned-warehouse``), ``metastore_url`` the JDBC URL of its metastore (default: the
    embedded SQLite ``<warehouse>/metastore.db``), the values of ``spark.versioned.warehouse`` and
    ``spark.versioned.metastore.url``. Refused (``WAREHOUSE_MISMATCH``) when the two are not one warehouse;
    ``METASTORE_ERROR`` for a metastore that cannot be reached or is of a newer format.

    Example::

        from versioned.reader import open_warehouse
        repo = open_warehouse("/data/wh").repository("shop")
        repo.table("orders", "main~1").to_pandas()
    """
    return Warehouse(warehouse or DEFAULT_WAREHOUSE, metastore_url)
