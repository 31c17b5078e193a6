"""``verify`` without Spark, as the connector's ``Verifier``: every object that the versions reachable from some
refs need (logical and compacted representations), each whole file read against the checksum recorded when it was
written. One row per object: ``ok``, ``missing`` or ``corrupt``, and the ``table@image`` versions that need it;
then the reflog's hash chain (``_reflog``), as the connector's rows for it.

Example::

    rows = verify_repository(repo, ["main", "v1"])
    [r["object"] for r in rows if r["status"] != "ok"]
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Set, Tuple

from versioned.reader._errors import fail
from versioned.reader._objects import ObjectRecord, load_objects
from versioned.reader._reflog import entries, verify_reflog
from versioned.reader._store import object_file, verify_object

if TYPE_CHECKING:
    from versioned.reader._warehouse import Repository

OK, MISSING, CORRUPT = "ok", "missing", "corrupt"
_SHOWN_VERSIONS = 20


def reachable(repo: "Repository", heads: Sequence[str]) -> Set[str]:
    """``heads`` and every image reachable from them through all parents.

    Example::

        reachable(repo, [repo.resolve("main").hash])
    """
    parents: Dict[str, List[str]] = {str(h): json.loads(str(p or "[]")) for h, p in repo.meta.rows(
        "SELECT hash, parents FROM vc_images WHERE repo = ?", repo.name)}
    seen: Set[str] = set()
    todo = list(heads)
    while todo:
        h = todo.pop()
        if h not in seen:
            seen.add(h)
            todo.extend(parents.get(h, []))
    return seen


def objects_needed(repo: "Repository", images: Set[str]) -> Dict[str, List[Tuple[str, str]]]:
    """Every object the table versions of ``images`` need, with the ``(image, table)`` pairs that need it.

    Example::

        objects_needed(repo, {repo.resolve("v1").hash})
    """
    out: Dict[str, List[Tuple[str, str]]] = {}
    for image, table, fragments, compacted in repo.meta.rows(
            "SELECT image_hash, name, fragments, compacted FROM vc_tables WHERE repo = ?", repo.name):
        if str(image) not in images:
            continue
        layouts = [json.loads(str(fragments))] + ([json.loads(str(compacted))] if compacted else [])
        for oid in dict.fromkeys(o for layout in layouts for f in layout for o in f["objects"]):
            out.setdefault(oid, []).append((str(image), str(table)))
    return out


def verify_repository(repo: "Repository", refs: Optional[Sequence[str]] = None) -> List[Dict[str, Any]]:
    """One row per object the versions reachable from ``refs`` (default: every ref) need, sorted by object id:
    ``object``, ``kind``, ``status`` (ok, missing, corrupt), ``detail``, ``needed_by``. Reads every object whole;
    changes nothing.

    Example::

        bad = [r for r in verify_repository(repo) if r["status"] != "ok"]
    """
    wanted = [r.strip() for r in refs or [] if r and r.strip()]
    starts = [r.image for r in repo.refs()] if not wanted else [repo.resolve(r).hash for r in wanted]
    needed = objects_needed(repo, reachable(repo, list(dict.fromkeys(starts))))
    records = load_objects(repo.meta, sorted(needed), allow_missing=True)
    rows = []
    for oid in sorted(needed):
        rec = records.get(oid)
        status, detail = _check(repo, rec) if rec is not None else (MISSING, "no metastore row describes it")
        by = sorted({f"{table}@{image[:12]}" for image, table in needed[oid]})
        shown = by[:_SHOWN_VERSIONS] + ([f"... {len(by) - _SHOWN_VERSIONS} more"] if len(by) > _SHOWN_VERSIONS else [])
        rows.append({"object": oid, "kind": rec.kind if rec else None, "status": status, "detail": detail,
                     "needed_by": shown})
    return rows + reflog_rows(repo)


def reflog_rows(repo: "Repository") -> List[Dict[str, Any]]:
    """The rows ``verify`` adds for the reflog's hash chain, as the connector's: one ``ok`` row (object ``reflog``)
    for an intact chain, else one per entry found ``changed``, ``removed`` or ``reordered`` (object ``reflog@{N}``).

    Example::

        reflog_rows(repo)[0]["status"]   # 'ok'
    """
    es = entries(repo)
    problems = verify_reflog(repo, es)
    if not problems:
        return [{"object": "reflog", "kind": "reflog", "status": OK,
                 "detail": f"{len(es)} entries, chain intact", "needed_by": []}]
    return [{"object": f"reflog@{{{seq}}}", "kind": "reflog", "status": status, "detail": detail, "needed_by": []}
            for seq, status, detail in problems]


def _check(repo: "Repository", rec: ObjectRecord) -> Tuple[str, Optional[str]]:
    """An object's status, read whole at each of its places: ``ok`` when one holds it intact (the detail names the
    places that do not), else the first place's problem; a store that did not answer at every place raises."""
    places = [object_file(repo.warehouse.store, rec.id, loc) for loc in rec.locations] or \
        [object_file(repo.warehouse.store, rec.id, None)]
    problems: List[Tuple[str, str, str]] = []  # (status, path, why)
    intact = 0
    for fs, path in places:
        try:
            verify_object(fs, path, rec.id, rec.size_bytes, rec.checksum, whole=True)
            intact += 1
        except Exception as e:  # noqa: BLE001 - the reader's typed errors become the row's status
            error_class = getattr(e, "error_class", None)
            why = str(getattr(e, "message", e))
            if error_class == "OBJECT_MISSING":
                problems.append((MISSING, path, why))
            elif error_class == "OBJECT_CORRUPT":
                problems.append((CORRUPT, path, why))
            elif error_class == "STORAGE_ERROR":  # the store did not answer: not a verdict on the object
                problems.append(("unreachable", path, str(e.__cause__ or e)))
            else:
                raise
    if intact:
        if not problems:
            return OK, None
        return OK, f"intact at {intact} of {len(places)} places; " + "; ".join(f"{s} at {p}: {w}" for s, p, w in problems)
    verdicts = [p for p in problems if p[0] != "unreachable"]
    if not verdicts:
        raise fail("STORAGE_ERROR", f"verify could not read object {rec.id} ({', '.join(p for _, p, _ in problems)}): "
                   f"{'; '.join(w for _, _, w in problems)}. Its bytes were not checked; run verify again when the "
                   "store is reachable.")
    return verdicts[0][0], "; ".join(w for _, _, w in verdicts)
