"""The reflog's hash chain checked without Spark, as the connector's ``Reflog.verify`` (docs/FORMAT.md, "Reflog";
docs/AUDIT.md): each entry's hash covers its fields and the previous entry's hash, and ``vc_reflog_heads`` records
the last entry. The rows it gives are the ones the connector's ``verify`` adds for the reflog.

Example::

    problems = verify_reflog(repo)   # [] when the chain is intact
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

if TYPE_CHECKING:
    from versioned.reader._warehouse import Repository

GENESIS = "0" * 64
CHANGED, REMOVED, REORDERED = "changed", "removed", "reordered"


@dataclass(frozen=True)
class Entry:
    """One ``vc_reflog`` row."""

    seq: int
    ref: str
    old_image: Optional[str]
    new_image: Optional[str]
    operation: str
    who: str
    app_id: str
    client: str
    detail: str
    at_ms: int
    prev_hash: str
    entry_hash: str


def hash_of(repo: str, e: Entry) -> str:
    """The hash an entry must have: SHA-256 over its fields, each as a 4-byte big-endian length and its UTF-8 bytes.

    Example::

        hash_of("shop", entry) == entry.entry_hash
    """
    md = hashlib.sha256()
    for part in ("reflog", e.prev_hash, repo, str(e.seq), e.ref, e.old_image or "", e.new_image or "", e.operation,
                 e.who, e.app_id, e.client, e.detail, str(e.at_ms)):
        b = part.encode("utf-8")
        md.update(struct.pack(">i", len(b)))
        md.update(b)
    return md.hexdigest()


def entries(repo: "Repository") -> List[Entry]:
    """The repository's reflog, oldest first (none on a metastore older than schema version 4)."""
    rows = repo.meta.rows("SELECT seq, ref, old_image, new_image, operation, who, app_id, client, detail, at_ms, "
                          "prev_hash, entry_hash FROM vc_reflog WHERE repo = ? ORDER BY seq ASC", repo.name)
    return [Entry(int(r[0]), str(r[1]), _opt(r[2]), _opt(r[3]), str(r[4]), str(r[5] or ""), str(r[6] or ""),
                  str(r[7] or ""), str(r[8] or ""), int(r[9]), str(r[10]), str(r[11])) for r in rows]


def _opt(v: object) -> Optional[str]:
    return None if v is None else str(v)


def verify_reflog(repo: "Repository", es: Optional[List[Entry]] = None) -> List[Tuple[int, str, str]]:
    """The chain's problems as ``(seq, status, detail)``, by ``seq``: an entry whose hash is not its fields' is
    changed (reordered when its fields hash right at the place the chain gives it), a gap in ``seq`` or a head past
    the last entry is a removal, an entry whose hash is not the one the next entry (or the head) recorded was changed
    and re-hashed. ``es``: the entries when the caller read them already (:func:`entries`).

    Example::

        [status for _, status, _ in verify_reflog(repo)]   # e.g. ["changed"]
    """
    es = entries(repo) if es is None else es
    heads = repo.meta.rows("SELECT seq, entry_hash FROM vc_reflog_heads WHERE repo = ?", repo.name)
    head = (int(heads[0][0]), str(heads[0][1])) if heads else (0, GENESIS)
    by_prev: Dict[str, Entry] = {}
    for e in es:
        by_prev.setdefault(e.prev_hash, e)
    chain_seq: Dict[str, int] = {}
    h, n = GENESIS, 0
    while h in by_prev and n < len(es):
        h, n = by_prev[h].entry_hash, n + 1
        chain_seq[h] = n
    found: Dict[int, Tuple[int, str, str]] = {}

    def report(seq: int, status: str, detail: str) -> None:
        found.setdefault(seq, (seq, status, detail))

    prev_seq, prev_hash = 0, GENESIS
    for e in es:
        if e.seq != prev_seq + 1:
            report(prev_seq + 1, REMOVED, f"entries {prev_seq + 1} to {e.seq - 1} are missing")
        if hash_of(repo.name, e) != e.entry_hash:
            s = chain_seq.get(e.entry_hash)
            if s is not None and s != e.seq and hash_of(repo.name, replace(e, seq=s)) == e.entry_hash:
                report(e.seq, REORDERED, f"entry {e.seq} is entry {s} of the chain, moved")
            else:
                report(e.seq, CHANGED, f"entry {e.seq} ({e.ref}, {e.operation}) does not match its hash")
        elif e.prev_hash != prev_hash and e.seq == prev_seq + 1 and prev_seq > 0 and e.seq not in found:
            report(prev_seq, CHANGED, f"entry {prev_seq} does not have the hash entry {e.seq} recorded (changed and re-hashed)")
        prev_seq, prev_hash = e.seq, e.entry_hash
    if head[0] > prev_seq:
        report(prev_seq + 1, REMOVED, f"entries {prev_seq + 1} to {head[0]} are missing (the head is at {head[0]})")
    elif head[0] < prev_seq:
        report(head[0] + 1, CHANGED, f"entries after {head[0]} were added by hand (the head is at {head[0]})")
    elif prev_seq > 0 and head[1] != prev_hash:
        report(prev_seq, CHANGED, f"entry {prev_seq} is not the last entry the head recorded")
    return [found[s] for s in sorted(found)]
