"""Object records (``vc_objects`` rows and their ``vc_object_locations``), read from the metastore.

Example::

    load_objects(meta, ["ab12..."])["ab12..."].size_bytes
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from versioned.reader._errors import fail


@dataclass(frozen=True)
class ObjectRecord:
    """A ``vc_objects`` row (and its locations, in the order to try them, if stored outside ``objects/``).

    Example::

        rec.id, rec.kind, rec.size_bytes, rec.checksum
    """

    id: str
    kind: str
    row_count: int
    size_bytes: int
    min_values: Dict[str, Any]
    max_values: Dict[str, Any]
    checksum: Optional[str]
    locations: Tuple[str, ...]
    #: ``vc_objects.shared``: the object may hold keys of other fragments than one whose chain lists it
    shared: bool = False


def load_objects(meta: Any, ids: List[str], allow_missing: bool = False) -> Dict[str, ObjectRecord]:
    """The ``vc_objects`` rows (and locations) of ``ids``; ``OBJECT_MISSING`` if one has none, unless
    ``allow_missing`` (then it is left out).

    Example::

        load_objects(meta, ["ab12..."])
    """
    out: Dict[str, ObjectRecord] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        marks = ",".join("?" * len(chunk))
        places: Dict[str, List[str]] = {}
        for oid, location in meta.rows(f"SELECT object_id, location FROM vc_object_locations WHERE object_id IN ({marks}) "
                                       "ORDER BY object_id, ordinal", *chunk):
            places.setdefault(str(oid), []).append(str(location))
        for row in meta.rows(
                "SELECT id, kind, row_count, size_bytes, min_values, max_values, checksum, shared "
                f"FROM vc_objects WHERE id IN ({marks})", *chunk):
            oid, kind, rows, size, mins, maxs, checksum, shared = row
            out[str(oid)] = ObjectRecord(str(oid), str(kind), int(rows), int(size), json.loads(mins or "{}"),
                                         json.loads(maxs or "{}"), checksum, tuple(places.get(str(oid), ())),
                                         bool(int(shared or 0)))
    missing = [o for o in ids if o not in out]
    if missing and not allow_missing:
        raise fail("OBJECT_MISSING", f"Object {missing[0]} is missing: the metastore has no record of it. Verify the "
                   "repository (procedure verify, or the API's verify) to list the missing objects and the versions "
                   "that need them, then restore them from a backup or a remote copy.")
    return out
