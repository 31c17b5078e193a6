"""Repositories, refs, revisions and history, read from the metastore: the connector's ``Resolver`` (every revision
Spark accepts, with the same errors) and ``History.log``, mirrored exactly.

Example::

    repo = open_warehouse("/data/wh").repository("shop")
    repo.resolve("main~2").hash
    [c.message for c in repo.log("v1", limit=5)]
"""

from __future__ import annotations

import datetime as _dt
import heapq
import json
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from versioned.reader._errors import fail
from versioned.reader._metastore import Metastore

_ANCESTRY = re.compile(r"^(.*?)((?:~\d*|\^\d*)*)$", re.DOTALL)
_STEP = re.compile(r"(~|\^)(\d*)")
_HEX = re.compile(r"^[0-9a-f]+$")
_INT_MAX = 2**31 - 1


@dataclass(frozen=True)
class Commit:
    """One image (commit) of a repository.

    Example::

        c = repo.resolve("main")
        print(c.short_hash, c.author, c.created, c.message, c.parents, c.tables_changed)
        print(c.committer, c.app_id, c.client)   # who committed it (None before metastore schema 6)
    """

    hash: str
    parents: Tuple[str, ...]
    created_ms: int
    author: str
    message: str
    seq: int
    tables_changed: Tuple[str, ...]
    committer: Optional[str] = None
    app_id: Optional[str] = None
    client: Optional[str] = None

    @property
    def created(self) -> _dt.datetime:
        """The commit time as an aware UTC datetime.

        Example::

            repo.resolve("main").created.isoformat()
        """
        return _dt.datetime.fromtimestamp(self.created_ms / 1000, tz=_dt.timezone.utc)

    @property
    def short_hash(self) -> str:
        """The first 12 hex digits of the hash.

        Example::

            repo.resolve("main").short_hash   # '3f1c2d4e5f60'
        """
        return self.hash[:12]


@dataclass(frozen=True)
class RefInfo:
    """A ref: ``name`` without its kind's prefix (``main``, ``v1``, ``ns:name``, ``origin/main``), ``kind``
    (branch, tag, lock, remote), the image it points at and when it was created.

    Example::

        [(r.name, r.image[:12]) for r in repo.branches()]
    """

    name: str
    kind: str
    image: str
    created_ms: int

    @property
    def created(self) -> _dt.datetime:
        """When the ref was created, as an aware UTC datetime.

        Example::

            repo.tags()[0].created
        """
        return _dt.datetime.fromtimestamp(self.created_ms / 1000, tz=_dt.timezone.utc)


_PREFIX = {"branch": "heads/", "tag": "tags/", "lock": "locks/", "remote": "remotes/"}
_IMAGE_COLS = "hash, parents, created_ms, author, message, seq, changed_tables, committer, app_id, client"


def _opt(v: object) -> Optional[str]:
    return None if v is None else str(v)


def _commit(row: Tuple[object, ...]) -> Commit:
    h, parents, created, author, message, seq, changed, committer, app_id, client = row
    return Commit(str(h), tuple(json.loads(str(parents or "[]"))), int(str(created)), str(author or ""),
                  str(message or ""), int(str(seq)), tuple(json.loads(str(changed or "[]"))), _opt(committer),
                  _opt(app_id), _opt(client))


def parse_timestamp(text: str) -> int:
    """Epoch milliseconds of a timestamp as the connector parses it: epoch milliseconds, an ISO-8601 instant, or
    ``yyyy-MM-dd[ HH:mm:ss[.SSS]]`` (UTC); anything else is ``INVALID_REVISION``.

    Example::

        >>> parse_timestamp("2026-01-31T12:00:00Z")
        1769860800000
    """
    t = text.strip()
    if re.fullmatch(r"[+-]?\d+", t):
        return int(t)
    iso = t[:-1] + "+00:00" if t.endswith("Z") else t
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})", t):
        try:
            return int(_dt.datetime.fromisoformat(iso).timestamp() * 1000)
        except ValueError:
            pass
    for candidate in (t.replace(" ", "T"),):
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?", candidate):
            try:
                d = _dt.datetime.fromisoformat(candidate).replace(tzinfo=_dt.timezone.utc)
                return int(d.timestamp() * 1000)
            except ValueError:
                pass
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", t):
        try:
            return int(_dt.datetime.fromisoformat(t).replace(tzinfo=_dt.timezone.utc).timestamp() * 1000)
        except ValueError:
            pass
    raise fail("INVALID_REVISION", f"Cannot parse timestamp '{text}'. Use ISO-8601 (2026-01-31T12:00:00Z), "
               "'yyyy-MM-dd HH:mm:ss' (UTC) or epoch millis.")


class History:
    """Refs, revisions and the commit graph of one repository (the connector's ``Resolver`` and ``History``).

    Example::

        History(meta, "shop").resolve("v1~1")
    """

    def __init__(self, meta: Metastore, repo: str) -> None:
        """Reads repository ``repo``; ``REPOSITORY_NOT_FOUND`` when the metastore has none of that name.

        Example::

            History(meta, "shop")
        """
        self.meta, self.repo = meta, repo
        if not meta.rows("SELECT 1 FROM vc_repositories WHERE name = ?", repo):
            raise fail("REPOSITORY_NOT_FOUND", f"Repository '{repo}' does not exist. List the repositories, or "
                       "create it by writing its first table.")

    # ---- refs
    @property
    def default_branch(self) -> str:
        """The repository's default branch.

        Example::

            repo.default_branch   # 'main'
        """
        return str(self.meta.value("SELECT default_branch FROM vc_repositories WHERE name = ?", self.repo))

    def refs(self, kind: Optional[str] = None) -> List[RefInfo]:
        """The refs of ``kind`` (branch, tag, lock, remote; None: all), by full name.

        Example::

            [r.name for r in repo.refs("tag")]
        """
        rows = self.meta.rows("SELECT name, kind, image_hash, created_ms FROM vc_refs WHERE repo = ? ORDER BY name",
                              self.repo)
        out = []
        for name, k, image, created in rows:
            if kind is None or k == kind:
                prefix = _PREFIX.get(str(k), "")
                short = str(name)[len(prefix):] if str(name).startswith(prefix) else str(name)
                out.append(RefInfo(short, str(k), str(image), int(str(created))))
        return out

    def _ref(self, full: str) -> Optional[str]:
        v = self.meta.value("SELECT image_hash FROM vc_refs WHERE repo = ? AND name = ?", self.repo, full)
        return None if v is None else str(v)

    # ---- images
    def image(self, h: str) -> Commit:
        """The image with full hash ``h``; ``IMAGE_NOT_FOUND`` if the repository has none.

        Example::

            repo.image(repo.resolve("main").hash)
        """
        rows = self.meta.rows(f"SELECT {_IMAGE_COLS} FROM vc_images WHERE repo = ? AND hash = ?", self.repo, h)
        if not rows:
            raise fail("IMAGE_NOT_FOUND", f"Image {h} not found in '{self.repo}'.")
        return _commit(rows[0])

    def branch_head(self, branch: str) -> str:
        """The image hash branch ``branch`` points at; ``REF_NOT_FOUND`` if there is no such branch.

        Example::

            repo.branch_head("main")
        """
        h = self._ref("heads/" + branch)
        if h is None:
            raise fail("REF_NOT_FOUND", f"Branch '{branch}' does not exist in repository '{self.repo}'. List the "
                       "branches (metadata table $refs, or the API's branches), or create it first (procedure "
                       "create_branch, or the API's create branch).")
        return h

    def resolve(self, spec: Optional[str] = None) -> Commit:
        """The image a revision names: a branch, tag, lock (``ns:name``), remote-tracking ref (``remotes/o/b`` or
        ``o/b``), a full hash or unique prefix of at least 4 hex digits, each optionally followed by ``~N``, ``^`` or
        ``^N``; None is the head of the default branch.

        Example::

            repo.resolve("main~2"); repo.resolve("v1^2"); repo.resolve("3f1c2d")
        """
        if spec is None:
            return self._unexpired(self.image(self.branch_head(self.default_branch)))
        if not spec.strip():
            raise fail("INVALID_REVISION", "An empty revision was given; name a branch, tag, lock or hash.")
        for ch in spec:
            if _is_control(ch) and not ch.isspace():
                clean = "".join(c for c in spec if not _is_control(c))
                raise fail("INVALID_REVISION", f"Revision '{clean}' holds a control character (U+{ord(ch):04X}); ref "
                           "names never do. Remove it.")
        m = _ANCESTRY.match(spec.strip())
        assert m is not None
        base, steps = m.group(1), m.group(2)
        img = self.image(self._resolve_base(base, spec))
        for step in _STEP.finditer(steps):
            digits = step.group(2)
            n = 1 if not digits else int(digits)
            if n > _INT_MAX:
                raise fail("INVALID_REVISION", f"Ancestry count in '{spec}' is too large.")
            if step.group(1) == "~":
                for _ in range(n):
                    img = self._parent(img, 1, spec)
            else:
                img = self._parent(img, n, spec)
        return self._unexpired(img)

    def as_of(self, timestamp: object, branch: Optional[str] = None) -> Commit:
        """The newest image on ``branch`` (default branch if None) created at or before ``timestamp`` (epoch
        milliseconds, a datetime, or text as :func:`parse_timestamp` reads it), following first parents.

        Example::

            repo.as_of("2026-01-31 12:00:00")
        """
        if isinstance(timestamp, _dt.datetime):
            ts = int((timestamp if timestamp.tzinfo else timestamp.replace(tzinfo=_dt.timezone.utc)).timestamp() * 1000)
        elif isinstance(timestamp, int):
            ts = timestamp
        else:
            ts = parse_timestamp(str(timestamp))
        b = branch or self.default_branch
        img = self.image(self.branch_head(b))
        while img.created_ms > ts:
            if not img.parents:
                raise fail("IMAGE_NOT_FOUND", f"Branch '{b}' of '{self.repo}' has no commit at or before "
                           f"{_instant(ts)}; its first commit is at {_instant(img.created_ms)}.")
            img = self.image(img.parents[0])
        return self._unexpired(img)

    def _unexpired(self, img: Commit) -> Commit:
        """``img``, or ``VERSION_EXPIRED`` when garbage collection expired it under a retention policy (its commit
        stays in the log, its tables are gone), as the connector's resolver says."""
        why = self.meta.value("SELECT reason FROM vc_expired WHERE repo = ? AND image_hash = ?", self.repo, img.hash)
        if why is not None:
            raise fail("VERSION_EXPIRED", f"Version {img.hash[:12]} of '{self.repo}' was expired by garbage collection: "
                       f"{why}. Its commit is still in the log, its tables are gone. Read a newer version, or keep more "
                       "history with the retention policy (procedure set_retention, or the API's set retention).")
        return img

    def _parent(self, img: Commit, n: int, spec: str) -> Commit:
        if n == 0:
            return img
        if n - 1 < len(img.parents):
            return self.image(img.parents[n - 1])
        raise fail("IMAGE_NOT_FOUND", f"Revision '{spec}' goes past the root of the history: image "
                   f"{img.short_hash} has no parent #{n}.")

    def _resolve_base(self, base: str, spec: str) -> str:
        def not_found() -> Exception:
            return fail("REF_NOT_FOUND", f"No branch, tag, lock or image matches '{spec}' in repository '{self.repo}'. "
                        "List the branches, tags and locks (metadata table $refs, or the API's ref listings), or use a "
                        "longer hash prefix.")

        if not base:
            raise fail("INVALID_REVISION", f"Revision '{spec}' names no ref.")
        if any(base.startswith(p) for p in ("heads/", "tags/", "locks/", "remotes/")):
            h = self._ref(base)
            if h is None:
                raise not_found()
            return h
        if ":" in base:
            h = self._ref("locks/" + base)
            if h is None:
                raise not_found()
            return h
        h = self._ref("heads/" + base) or self._ref("tags/" + base)
        if h is None and "/" in base:
            h = self._ref("remotes/" + base)
        if h is not None:
            return h
        prefix = base.lower()
        if not (4 <= len(prefix) <= 64 and _HEX.match(prefix)):
            raise not_found()
        hits = [str(r[0]) for r in self.meta.rows(
            "SELECT hash FROM vc_images WHERE repo = ? AND hash >= ? AND hash < ? ORDER BY hash",
            self.repo, prefix, prefix + "g")][:6]
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise not_found()
        raise fail("AMBIGUOUS_REF", f"Hash prefix '{base}' matches {len(hits)} or more images "
                   f"({', '.join(h[:12] for h in hits[:3])}...). Give more characters.")

    # ---- history
    def log(self, spec: Optional[str] = None, limit: Optional[int] = None) -> List[Commit]:
        """History reachable from ``spec`` (default: the default branch) through all parents, newest first (by
        creation time, then hash, as the connector's log), at most ``limit`` commits.

        Example::

            [c.short_hash for c in repo.log("main", limit=20)]
        """
        return self.log_of(self.resolve(spec), limit)

    def log_of(self, start: Commit, limit: Optional[int] = None) -> List[Commit]:
        """:meth:`log` from an image already resolved.

        Example::

            repo.log_of(repo.resolve("v1"), 5)
        """
        if limit is not None and limit <= 0:
            return []
        cache: Dict[str, Commit] = {}
        heap: List[Tuple[int, _Desc, Commit]] = []
        seen = {start.hash}
        heapq.heappush(heap, (-start.created_ms, _Desc(start.hash), start))
        out: List[Commit] = []
        while heap and (limit is None or len(out) < limit):
            c = heapq.heappop(heap)[2]
            out.append(c)
            if limit is not None and len(out) >= limit:
                break
            for p in c.parents:
                if p not in seen:
                    seen.add(p)
                    img = cache.get(p) or self._maybe_image(p)
                    if img is not None:
                        heapq.heappush(heap, (-img.created_ms, _Desc(img.hash), img))
        return out

    def _maybe_image(self, h: str) -> Optional[Commit]:
        rows = self.meta.rows(f"SELECT {_IMAGE_COLS} FROM vc_images WHERE repo = ? AND hash = ?", self.repo, h)
        return _commit(rows[0]) if rows else None


class _Desc:
    """A string that sorts in descending order (newest-first ties broken by the larger hash, as ``NewestFirst``)."""

    __slots__ = ("s",)

    def __init__(self, s: str) -> None:
        self.s = s

    def __lt__(self, other: "_Desc") -> bool:
        return self.s > other.s


def _is_control(ch: str) -> bool:
    o = ord(ch)
    return o < 0x20 or 0x7F <= o <= 0x9F


def _instant(ms: int) -> str:
    d = _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.timezone.utc)
    text = d.strftime("%Y-%m-%dT%H:%M:%S")
    if ms % 1000:
        text += f".{ms % 1000:03d}"
    return text + "Z"
