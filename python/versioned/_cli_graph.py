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


def _row(width: int, marks: Dict[int, str]) -> str:
    cells = [" "] * max(0, 2 * width - 1)
    for pos, ch in marks.items():
        while pos >= len(cells):
            cells.append(" ")
        cells[pos] = ch
    return "".join(cells).rstrip()


def graph_lines(commits: Sequence[Tuple[str, Sequence[str]]]) -> List[Tuple[str, Optional[str]]]:
    """Draws ``(hash, parents)`` given in :func:`topo_order` order. Returns ``(graph, hash)`` lines: the
    commit's own line (hash set) and connector lines (hash None) where lanes fork, join or shift.

    Example::

        >>> for g, h in graph_lines([("d", ["b"]), ("c", ["b"]), ("b", ["a"]), ("a", [])]):
        ...     print(g, h or "")
        * d
        | * c
        |/
        * b
        * a
    """
    lanes: List[Optional[str]] = []
    out: List[Tuple[str, Optional[str]]] = []
    for h, parents in commits:
        if h not in lanes:
            if None in lanes:
                lanes[lanes.index(None)] = h
            else:
                lanes.append(h)
        col = lanes.index(h)
        if lanes.count(h) > 1:  # other children's lanes join this commit first
            joined: List[Optional[str]] = []
            marks: Dict[int, str] = {}
            for i, lane in enumerate(lanes):
                if lane is None:
                    continue
                if lane == h and i != col:
                    marks[2 * i - 1] = "/"
                    continue
                j = len(joined)
                marks[2 * j if j == i else 2 * i - 1] = "|" if j == i else "/"
                joined.append(lane)
            out.append((_row(len(lanes), marks), None))
            lanes = joined
            col = lanes.index(h)
        out.append((_row(len(lanes), {2 * i: ("*" if i == col else "|")
                                       for i, lane in enumerate(lanes) if lane is not None}), h))
        # where each old lane goes
        new: List[Optional[str]] = []
        marks = {}
        moved = False
        for i, lane in enumerate(lanes):
            if lane is None:
                continue
            if i == col:
                if parents:
                    marks[2 * len(new)] = "|"
                    if len(new) != i:
                        moved = True
                    new.append(parents[0])
                    for extra in parents[1:]:
                        if extra in lanes or extra in new:
                            continue
                        marks[2 * len(new) - 1] = "\\"
                        new.append(extra)
                        moved = True
                continue
            if lane == h:  # another child's lane joins this commit
                marks[2 * i - 1] = "/"
                moved = True
                continue
            j = len(new)
            if j == i:
                marks[2 * j] = "|"
            elif j < i:
                marks[2 * i - 1] = "/"
                moved = True
            else:
                marks[2 * i + 1] = "\\"
                moved = True
            new.append(lane)
        if moved and new:
            out.append((_row(max(len(new), len(lanes)), marks), None))
        lanes = new
    return out
