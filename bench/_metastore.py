"""Read-only statistics from the embedded SQLite metastore, and fabrication of a long history.

Both follow docs/FORMAT.md (metastore schema version 1). Fabrication is the benchmark's way to get a
100,000-commit history in seconds: engine commits through py4j cost tens of milliseconds each (measured
and reported by run.py), so the rest are written as a second writer would, per FORMAT.md: one
``vc_images`` row and one ``vc_tables`` row per image (the table unchanged, linking the parent's objects),
correct image hashes, increasing ``seq``, then the branch moves by compare-and-swap. The engine then
resolves, logs and commits on top of that history like any other.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import struct
from typing import Any, Dict, List, Optional, Sequence, Tuple


def db_path(warehouse: str) -> str:
    return os.path.join(warehouse, "metastore.db")


def _connect(warehouse: str) -> sqlite3.Connection:
    c = sqlite3.connect(db_path(warehouse), timeout=60)
    c.execute("PRAGMA busy_timeout = 60000")
    return c


def H(*parts: str) -> str:
    """FORMAT.md: SHA-256 over each part as a 4-byte big-endian length and its UTF-8 bytes."""
    md = hashlib.sha256()
    for p in parts:
        b = p.encode("utf-8")
        md.update(struct.pack(">I", len(b)))
        md.update(b)
    return md.hexdigest()


def image_hash(parents: Sequence[str], author: str, message: str, created_ms: int,
               tables: Dict[str, str], actor: Optional[Tuple[str, str, str]] = None) -> str:
    """docs/FORMAT.md, "Hashes": the actor's parts (committer, app id, client) only when the image records one."""
    who = ("actor", *actor) if actor is not None else ()
    return H("image", ",".join(parents), author, message, str(created_ms), *who,
             *[f"{n}={h}" for n, h in sorted(tables.items())])


def _json(v) -> str:
    return json.dumps(v, separators=(",", ":"))


def object_stats(warehouse: str, ids: Sequence[str]) -> Dict[str, Dict[str, int]]:
    """{kind: {objects, rows, bytes}} over the given object ids."""
    out: Dict[str, Dict[str, int]] = {}
    c = _connect(warehouse)
    try:
        ids = list(set(ids))
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            q = f"SELECT kind, COUNT(*), SUM(row_count), SUM(size_bytes) FROM vc_objects WHERE id IN ({','.join('?' * len(chunk))}) GROUP BY kind"
            for kind, n, rows, size in c.execute(q, chunk):
                s = out.setdefault(kind, {"objects": 0, "rows": 0, "bytes": 0})
                s["objects"] += n
                s["rows"] += rows or 0
                s["bytes"] += size or 0
    finally:
        c.close()
    return out


def object_kinds(warehouse: str, ids: Sequence[str]) -> Dict[str, str]:
    """{object id: kind}."""
    out: Dict[str, str] = {}
    c = _connect(warehouse)
    try:
        ids = list(set(ids))
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            out.update(c.execute(f"SELECT id, kind FROM vc_objects WHERE id IN ({','.join('?' * len(chunk))})",
                                 chunk).fetchall())
    finally:
        c.close()
    return out


def _table_row(warehouse: str, repo: str, image: str, table: str) -> tuple:
    """(fragments JSON, compacted JSON or None) of one table version."""
    c = _connect(warehouse)
    try:
        return c.execute("SELECT fragments, compacted FROM vc_tables WHERE repo = ? AND image_hash = ? AND name = ?",
                         (repo, image, table)).fetchone()
    finally:
        c.close()


def max_chain(warehouse: str, repo: str, image: str, table: str) -> int:
    """Most DIFFs in one fragment of the representation a reader uses (compacted if present)."""
    row = _table_row(warehouse, repo, image, table)
    frags = json.loads(row[1] or row[0])
    kinds = object_kinds(warehouse, [o for f in frags for o in f["objects"]])
    return max((sum(1 for o in f["objects"] if kinds.get(o) == "DIFF") for f in frags), default=0)


def compacted_images(warehouse: str, repo: str, table: str) -> set:
    """Images whose table has a compacted representation (some fragments were re-snapshotted)."""
    c = _connect(warehouse)
    try:
        return {r[0] for r in c.execute("SELECT image_hash FROM vc_tables WHERE repo = ? AND name = ? AND "
                                        "compacted IS NOT NULL", (repo, table))}
    finally:
        c.close()


def repo_object_ids(warehouse: str, repo: str) -> List[str]:
    """Every object id any table version of ``repo`` refers to (logical or compacted)."""
    c = _connect(warehouse)
    try:
        ids = set()
        for frags, comp in c.execute("SELECT fragments, compacted FROM vc_tables WHERE repo = ?", (repo,)):
            for js in (frags, comp):
                if js:
                    for f in json.loads(js):
                        ids.update(f["objects"])
        return sorted(ids)
    finally:
        c.close()


def head_objects(warehouse: str, repo: str, image: str, table: str) -> Dict[str, List[str]]:
    """{"fragments": [...ids], "compacted": [...ids]} of one table version."""
    row = _table_row(warehouse, repo, image, table)
    frags = [o for f in json.loads(row[0]) for o in f["objects"]]
    comp = [o for f in json.loads(row[1]) for o in f["objects"]] if row[1] else []
    return {"fragments": frags, "compacted": comp}


def verify_image_hash(warehouse: str, repo: str, image: str) -> bool:
    """Recomputes an engine-written image hash with :func:`image_hash` (checks this writer's hashing)."""
    c = _connect(warehouse)
    try:
        parents, created, author, message, committer, app_id, client = c.execute(
            "SELECT parents, created_ms, author, message, committer, app_id, client FROM vc_images "
            "WHERE repo = ? AND hash = ?", (repo, image)).fetchone()
        tables = dict(c.execute("SELECT name, table_hash FROM vc_tables WHERE repo = ? AND image_hash = ?",
                                (repo, image)).fetchall())
    finally:
        c.close()
    actor = None if committer is None else (committer, app_id or "", client or "")
    return image_hash(json.loads(parents), author, message, int(created), tables, actor) == image


def fabricate_history(warehouse: str, repo: str, branch: str, count: int, batch: int = 20000) -> str:
    """Appends ``count`` images to ``branch`` that leave every table unchanged. Returns the new head."""
    c = _connect(warehouse)
    try:
        return _fabricate(c, "?", repo, branch, count, batch, begin="BEGIN IMMEDIATE")
    finally:
        c.close()


def fabricate_history_postgres(conninfo: str, repo: str, branch: str, count: int, batch: int = 20000) -> str:
    """The same on a PostgreSQL metastore (``conninfo``: a libpq URI)."""
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as c:
        return _fabricate(c, "%s", repo, branch, count, batch, begin="BEGIN")


def _fabricate(c: Any, ph: str, repo: str, branch: str, count: int, batch: int, begin: str) -> str:
    """Images as the engine writes them (docs/FORMAT.md: parents, seq, image hash, every table linked), in batches of
    one transaction each, then one compare-and-swap of the branch. No reflog entry: benchmark scaffolding only."""
    def q(sql: str) -> str:
        return sql.replace("?", ph)

    def one(sql: str, params: tuple) -> tuple:
        cur = c.execute(q(sql), params)
        return tuple(cur.fetchone())

    full = f"heads/{branch}"
    head, = one("SELECT image_hash FROM vc_refs WHERE repo = ? AND name = ?", (repo, full))
    created, = one("SELECT created_ms FROM vc_images WHERE repo = ? AND hash = ?", (repo, head))
    seq, = one("SELECT MAX(seq) FROM vc_images WHERE repo = ?", (repo,))
    cols = ("name", "schema_json", "primary_key", "hidden_key", "table_hash", "fragments", "compacted")
    tables = [dict(zip(cols, r)) for r in c.execute(
        q(f"SELECT {', '.join(cols)} FROM vc_tables WHERE repo = ? AND image_hash = ?"), (repo, head)).fetchall()]
    table_hashes = {t["name"]: t["table_hash"] for t in tables}
    author = "bench"
    start = cur = head
    done = 0

    def many(sql: str, rows: List[tuple]) -> None:
        cursor = c.cursor()
        cursor.executemany(q(sql), rows)

    while done < count:
        images, rows = [], []
        for _ in range(min(batch, count - done)):
            done += 1
            seq += 1
            created += 1
            msg = f"fabricated commit {done}"
            h = image_hash([cur], author, msg, created, table_hashes)
            images.append((repo, h, _json([cur]), created, author, msg, seq, "[]"))
            for t in tables:
                rows.append((repo, h, t["name"], t["schema_json"], t["primary_key"], t["hidden_key"],
                             t["table_hash"], t["fragments"], None, 0))
            cur = h
        c.execute(begin)
        many("INSERT INTO vc_images (repo, hash, parents, created_ms, author, message, seq, changed_tables)"
             " VALUES (?,?,?,?,?,?,?,?)", images)
        many("INSERT INTO vc_tables (repo, image_hash, name, schema_json, primary_key, hidden_key,"
             " table_hash, fragments, compacted, changed) VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
        c.execute("COMMIT")
    c.execute(begin)
    moved = c.execute(q("UPDATE vc_refs SET image_hash = ? WHERE repo = ? AND name = ? AND image_hash = ?"),
                      (cur, repo, full, start)).rowcount
    c.execute("COMMIT")
    if moved != 1:
        raise RuntimeError(f"branch {branch} of {repo} moved while fabricating history")
    return str(cur)


def sizes(warehouse: str) -> int:
    """Bytes of the metastore files (db + WAL)."""
    total = 0
    for suffix in ("", "-wal", "-shm"):
        p = db_path(warehouse) + suffix
        if os.path.exists(p):
            total += os.path.getsize(p)
    return total
