"""Remote rows about long histories (docs/REMOTES.md, "Fetching 10,000 new commits must take seconds"): a
lazy clone of a 1,000-commit repository and fetches of 1,000 and 10,000 new small commits. Called by the
remotes step of run.py (``history_rows(suite)``); needs the Python package.

The origin is its own warehouse (``<work>/wh-hist``, SQLite metastore) with repository ``hist``: one real
write of a 1,000-row keyed table, then commits that leave the table as it is (each is a full image with its
table row, as any commit of another table would be). The first 1,000 are engine commits (``Engine.commit``
through py4j, ~10 ms each); the 10,000 of the second fetch are appended directly in the metastore per
docs/FORMAT.md (``_metastore.fabricate_history``, the log step's method, whose image hashes are checked),
since 10,000 py4j commits would take minutes. Every fetch is checked: the clone's ``origin/main`` is the
origin's head and its log has as many commits as the origin's.
"""

from __future__ import annotations

import os
import time
from typing import Any

import _metastore as MS
import datagen as G
from common import fmt_s, timed


def history_rows(suite: Any, first: int = 1000, second: int = 10000) -> None:
    """Adds rows clone_lazy_1k, fetch_1k and fetch_10k to the suite's results."""
    sp, v, bridge = suite.spark, suite.vpkg, suite.bridge
    wh = os.path.join(suite.work, "wh-hist")
    url = f"jdbc:sqlite:{wh}/metastore.db"
    local = os.path.join(suite.work, "wh-hist-clone")
    local2 = os.path.join(suite.work, "wh-hist-clone-2")
    suite.write_versioned(G.base(sp, 1000), "hist.t", pk="id", warehouse=wh, message="load")
    origin = v.Repository(sp, "hist", warehouse=wh, metastore_url=url)
    clone = v.clone(sp, "hist", warehouse=wh, metastore_url=url, local_warehouse=local)  # 1 commit

    def commits(repo: Any) -> int:
        return repo.log("main").count()

    def check(what: str, fetched: Any, expected_images: int) -> str:
        head = origin.resolve("main")
        ok = clone.resolve("origin/main") == head and fetched.images == expected_images
        total = bridge.log_size(local, "hist", "remotes/origin/main")
        ok = ok and total == commits(origin)
        return f"{what}: {fetched.images:,} images, {total:,} commits on origin/main, " + \
            ("head and count equal the origin's" if ok else "MISMATCH with the origin")

    head = origin.resolve("main")
    t0 = time.perf_counter()
    for i in range(first):
        head = bridge.empty_commit(wh, "hist", "main", head, f"small commit {i}")
    made_ms = (time.perf_counter() - t0) / first * 1000

    t_fetch, fetched = timed(clone.fetch)
    note = check(f"{first:,} engine commits ({made_ms:.0f} ms each to make)", fetched, first)
    suite.add("fetch_1k", f"fetch of {first:,} new small commits (metadata only)", t_fetch, None, None, "seconds",
              t_fetch < 10, note, images=fetched.images, commits=first, content_equal="MISMATCH" not in note)

    t_clone, clone2 = timed(lambda: v.clone(sp, "hist", warehouse=wh, metastore_url=url, local_warehouse=local2))
    n2 = bridge.log_size(local2, "hist", "main")
    same = n2 == commits(origin) and bridge.resolve(local2, "hist", "main") == origin.resolve("main")
    suite.add("clone_lazy_1k", f"lazy clone of a {n2:,}-commit repository (history and object metadata, no data)",
              t_clone, None, None, "info", None, f"{n2:,} commits; head and count "
              f"{'equal the origin' if same else 'MISMATCH'}", commits=n2, content_equal=same)

    t_fab, _ = timed(lambda: MS.fabricate_history(wh, "hist", "main", second))
    hash_ok = MS.verify_image_hash(wh, "hist", origin.resolve("main"))
    t_fetch, fetched = timed(clone.fetch)
    note = check(f"{second:,} commits appended in the metastore in {fmt_s(t_fab)} (image hash check "
                 f"{'ok' if hash_ok else 'MISMATCH'})", fetched, second)
    suite.add("fetch_10k", f"fetch of {second:,} new small commits (metadata only)", t_fetch, None, None,
              "seconds", t_fetch < 10, note, images=fetched.images, commits=second,
              content_equal="MISMATCH" not in note and hash_ok)
