"""The commit graph of ``versioned log --graph``: lanes drawn from each commit's parents, git style.

Pure Python (no Spark), so it can be tested on its own.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

__all__ = ["topo_order", "graph_lines"]


def topo_order(commits: Sequence[Tuple[str, Sequence[str], float]]) -> List[str]:
    """Orders ``(hash, parents, created)`` newest first with every child before its parents.

    Example::

        >>> topo_order([("a", [], 1.0), ("b", ["a"], 2.0), ("c", ["a"], 3.0)])
        ['c', 'b', 'a']
    """
    known = {h: (list(p), t) for h, p, t in commits}
    children: Dict[str, int] = {h: 0 for h in known}
    for h, (parents, _) in known.items():
        for p in parents:
            if p in children:
                children[p] += 1
    ready = [h for h, n in children.items() if n == 0]
    out: List[str] = []
    while ready:
        ready.sort(key=lambda h: (known[h][1], h))
        h = ready.pop()  # newest ready commit
        out.append(h)
        for p in known[h][0]:
            if p in children:
                children[p] -= 1
                if children[p] == 0:
                    ready.append(p)
    return out


def _row(marks: Dict[int, str]) -> str:
    cells = [" "] * (max(marks) + 1 if marks else 0)
    for pos, ch in marks.items():
        cells[pos] = ch
    return "".join(cells).rstrip()


Track = Tuple[int, int]  # (column now, column to reach)


def _moves(tracks: Sequence[Track]) -> List[str]:
    """Connector rows moving every track one column per row toward its target: ``|`` for a track that
    stays, ``/`` left, ``\\`` right (a track crossing a lane shows as ``|/|`` rows, git style).

    Example::

        >>> _moves([(0, 0), (2, 0), (1, 1)])
        ['| |/', '|/|']
    """
    at = [pos for pos, _ in tracks]
    rows: List[str] = []
    while any(a != t for a, (_, t) in zip(at, tracks)):
        marks: Dict[int, str] = {}
        for i, (_, target) in enumerate(tracks):
            a = at[i]
            if a == target:
                marks[2 * a] = "|"
            elif target < a:
                marks[2 * a - 1], at[i] = "/", a - 1
            else:
                marks[2 * a + 1], at[i] = "\\", a + 1
        rows.append(_row(marks))
    return rows


def _crossing(tracks: Sequence[Track]) -> bool:
    """Whether a track moving left and one moving right would cross (their paths overlap)."""
    lefts = [(t, p) for p, t in tracks if t < p]
    rights = [(p, t) for p, t in tracks if t > p]
    return any(max(lo1, lo2) < min(hi1, hi2) for lo1, hi1 in lefts for lo2, hi2 in rights)


def graph_lines(commits: Sequence[Tuple[str, Sequence[str]]]) -> List[Tuple[str, Optional[str]]]:
    """Draws ``(hash, parents)`` given in :func:`topo_order` order. Returns ``(graph, hash)`` lines: the
    commit's own line (hash set) and connector lines (hash None) where lanes fork, join or shift.

    Every lane waits for one commit, and every parent edge is drawn: a parent that already has a lane
    (another child's, or the other side of a merge) is joined at once, a new parent gets a lane right of
    the commit's (the first parent keeps the commit's lane). A new head opens a lane on the right.

    Example::

        >>> for g, h in graph_lines([("m", ["c", "d"]), ("d", ["b"]), ("c", ["b"]), ("b", ["a"]), ("a", [])]):
        ...     print(f"{g} {h or ''}".rstrip())
        * m
        |\\
        | * d
        * | c
        |/
        * b
        * a
    """
    lanes: List[str] = []
    out: List[Tuple[str, Optional[str]]] = []
    for h, parents in commits:
        if h not in lanes:
            lanes.append(h)
        col = lanes.index(h)
        out.append((_row({2 * i: "*" if i == col else "|" for i in range(len(lanes))}), h))
        others = lanes[:col] + lanes[col + 1:]
        fresh = [p for i, p in enumerate(parents) if p not in others and p not in parents[:i]]
        new = lanes[:col] + fresh + lanes[col + 1:]
        grow = max(0, len(fresh) - 1)  # lanes right of the commit move right to make room for new parents
        final = [(i, new.index(lanes[i])) for i in range(len(lanes)) if i != col]
        unique = list(dict.fromkeys(parents))
        together = final + [(col, new.index(p)) for p in unique]
        if not _crossing(together):
            rows = _moves(together)
        else:  # first the commit's edges (the other lanes only make room), then the lanes close up

            def room(i: int) -> int:
                return i if i < col else i + grow

            edges = [(col, new.index(p) if p in fresh else room(lanes.index(p))) for p in unique]
            rows = _moves([(i, room(i)) for i, _ in final] + edges) + _moves([(room(i), t) for i, t in final])
        out.extend((r, None) for r in rows)
        lanes = new
    return out
