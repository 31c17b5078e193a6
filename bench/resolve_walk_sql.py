#!/usr/bin/env python3
"""The SQL of resolving ``<branch>~1000``, without the JVM (issue 35, "Metadata at scale"): on a chain of 200,000
images in ``vc_images`` as MetastoreSchema v1 creates it, on SQLite (a scratch file) and PostgreSQL (a scratch
database on ``$VERSIONED_TEST_POSTGRES_URL`` or ``bin/setup-postgres``'s server), the medians of

* the walk the resolver does today: one read of the newest 2,062 images' hashes and parents by ``seq`` (the first
  window of ``core/LogWindows`` for ``~1000``), the walk itself then in memory;
* a recursive query of the first parents (one round trip, each step a primary-key lookup), with the plan
  (PostgreSQL: ``EXPLAIN ANALYZE``).

    python3 bench/resolve_walk_sql.py [--images 200000] [--steps 1000] [--reps 7]

Prints the timings (client wall time, rows fetched included) and the load average.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sqlite3
import statistics
import subprocess
import tempfile
import time
from typing import Any, Callable, List

HERE = os.path.dirname(os.path.abspath(__file__))
DDL = ["""CREATE TABLE vc_images (repo VARCHAR(128) NOT NULL, hash CHAR(64) NOT NULL, parents TEXT NOT NULL,
  created_ms BIGINT NOT NULL, author TEXT NOT NULL, message TEXT NOT NULL, seq BIGINT NOT NULL,
  changed_tables TEXT NOT NULL, PRIMARY KEY (repo, hash))""", "CREATE INDEX vc_images_seq ON vc_images (repo, seq)"]
WALK = ("WITH RECURSIVE walk(h, p, n) AS (SELECT hash, parents, 0 FROM vc_images WHERE repo = ? AND hash = ? "
        "UNION ALL SELECT i.hash, i.parents, w.n + 1 FROM walk w JOIN vc_images i ON i.repo = ? AND i.hash = {first} "
        "WHERE w.n < ?) SELECT h, p, n FROM walk ORDER BY n DESC LIMIT 1")
WINDOW = "SELECT hash, parents FROM vc_images WHERE repo = ? AND seq >= ? AND seq <= ?"


def h(g: int) -> str:
    return hashlib.md5(str(g).encode()).hexdigest() + hashlib.md5(str(g + 1).encode()).hexdigest()


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def med(fn: Callable[[], Any], reps: int) -> float:
    fn()
    ts: List[float] = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1000


def sqlite(a: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as d:
        c = sqlite3.connect(os.path.join(d, "m.db"))
        for s in DDL:
            c.execute(s)
        c.executemany("INSERT INTO vc_images VALUES ('hist', ?, ?, ?, 'a', 'm', ?, '[]')",
                      ((h(g), "[]" if g == 1 else f'["{h(g - 1)}"]', g, g) for g in range(1, a.images + 1)))
        c.commit()
        head, window = h(a.images), 2 * a.steps + 62
        walk = WALK.format(first="json_extract(w.p, '$[0]')")
        assert c.execute(walk, ("hist", head, "hist", a.steps)).fetchone()[2] == a.steps
        w = med(lambda: c.execute(walk, ("hist", head, "hist", a.steps)).fetchone(), a.reps)
        r = med(lambda: c.execute(WINDOW, ("hist", a.images - window + 1, a.images)).fetchall(), a.reps)
        print(f"sqlite: recursive walk {w:.2f} ms; window of {window:,} rows {r:.2f} ms (load {load()})")


def postgres(a: argparse.Namespace) -> None:
    import psycopg

    sys_path = os.path.join(os.path.dirname(HERE), "python")
    import sys

    sys.path.insert(0, sys_path)
    from versioned.reader._metastore import _postgres_conninfo

    url = os.environ.get("VERSIONED_TEST_POSTGRES_URL") or subprocess.check_output(
        [os.path.join(os.path.dirname(HERE), "bin", "setup-postgres")], text=True).strip()
    base = _postgres_conninfo(url)
    name = f"bench_walk_{os.getpid()}"
    with psycopg.connect(base, autocommit=True) as c:
        c.execute(f"CREATE DATABASE {name}")
    try:
        head_, _, query = base.partition("?")
        with psycopg.connect(head_.rsplit("/", 1)[0] + f"/{name}" + (f"?{query}" if query else ""), autocommit=True) as c:
            for s in DDL:
                c.execute(s)
            c.execute("INSERT INTO vc_images SELECT 'hist', md5(g::text) || md5((g + 1)::text), CASE WHEN g = 1 THEN '[]' "
                      "ELSE '[\"' || md5((g - 1)::text) || md5(g::text) || '\"]' END, g, 'a', 'm', g, '[]' "
                      "FROM generate_series(1, %s) g", (a.images,))
            c.execute("ANALYZE vc_images")
            head, window = h(a.images), 2 * a.steps + 62
            walk = WALK.format(first="CAST(CAST(w.p AS json) ->> 0 AS CHAR(64))").replace("?", "%s")
            assert c.execute(walk, ("hist", head, "hist", a.steps)).fetchone()[2] == a.steps
            w = med(lambda: c.execute(walk, ("hist", head, "hist", a.steps)).fetchone(), a.reps)
            r = med(lambda: c.execute(WINDOW.replace("?", "%s"), ("hist", a.images - window + 1, a.images)).fetchall(), a.reps)
            plan = [row[0] for row in c.execute("EXPLAIN ANALYZE " + walk, ("hist", head, "hist", a.steps)).fetchall()]
            print(f"postgresql: recursive walk {w:.2f} ms; window of {window:,} rows {r:.2f} ms (load {load()})")
            print("  plan of the walk: " + " | ".join(p.strip() for p in plan if "Index Scan" in p or "Execution" in p))
    finally:
        with psycopg.connect(base, autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", type=int, default=200_000)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    print(f"load at start {load()}")
    sqlite(a)
    postgres(a)


if __name__ == "__main__":
    main()
