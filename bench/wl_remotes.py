"""Workload: remotes (docs/REMOTES.md) between two warehouses on this disk; runs last."""

from __future__ import annotations

import os
import shutil

import datagen as G
import remotes_bench
from common import fmt_b, median, force, parquet_bytes, timed


class RemotesWorkloads:
    def remotes_step(self) -> None:
        """Remotes (docs/REMOTES.md) between two warehouses on this disk, from the N-row repository as the other
        steps left it: a lazy clone (history only), a scan of the clone's head read in place, a clone that
        downloads every object (vs a plain copy of the same files), a push of k changed rows committed on the
        clone (as a new branch of the origin, vs the commit itself) and a fetch of k rows committed on the
        origin. Runs last: it adds branches to the origin."""
        sp, n, k, v = self.spark, self.n, self.args.k, self.vpkg
        if v is None or not hasattr(v, "clone"):
            self.add("clone_lazy", "remotes", None, None, None, "n/a", None, "no remotes in the python package")
            return
        origin_url = f"jdbc:sqlite:{self.wh}/metastore.db"
        lazy_wh, full_wh = os.path.join(self.work, "wh-clone"), os.path.join(self.work, "wh-clone-full")
        origin = v.Repository(sp, "bench")
        t_lazy, clone = timed(lambda: v.clone(sp, "bench", warehouse=self.wh, metastore_url=origin_url,
                                              local_warehouse=lazy_wh))
        commits, refs = clone.log("main").count(), clone.remote_refs().count()
        lazy_bytes = parquet_bytes(os.path.join(lazy_wh, "objects"))[0]
        self.add("clone_lazy", f"lazy clone of the N-row repository ({refs} branches and tags): history and object "
                 "metadata, no data", t_lazy, None, None, "info", None,
                 f"{commits} commits on main; {fmt_b(lazy_bytes)} of objects copied (they are read in place)",
                 commits=commits, refs=refs, object_bytes=lazy_bytes)
        same = G.checksum(self.read("bench.t", warehouse=lazy_wh)) == G.checksum(self.read("bench.t"))
        t_origin = median([timed(lambda: force(self.read("bench.t")))[0] for _ in range(self.scan_reps)])
        t_clone = median([timed(lambda: force(self.read("bench.t", warehouse=lazy_wh)))[0] for _ in range(self.scan_reps)])
        self.add("scan_lazy_clone", "full scan of the lazy clone's head (objects read in place at the origin) vs the "
                 "same scan in the origin", t_clone, t_origin, t_clone / t_origin, "info", None,
                 f"content {'equal' if same else 'MISMATCH'}; median of {self.scan_reps}", content_equal=same)
        t_full, _ = timed(lambda: v.clone(sp, "bench", warehouse=self.wh, metastore_url=origin_url,
                                          local_warehouse=full_wh, download="all"))
        full_bytes, full_files = parquet_bytes(os.path.join(full_wh, "objects"))
        t_copy, _ = timed(lambda: shutil.copytree(self.objects, os.path.join(self.work, "objects-copy")))
        self.add("clone_download", "clone downloading every object (Spark tasks, each object verified against its "
                 "checksum) vs a plain copy of the origin's object files", t_full, t_copy, t_full / t_copy, "info", None,
                 f"downloaded {fmt_b(full_bytes)} in {full_files} objects; the copy holds every object of the "
                 "warehouse", bytes=full_bytes, objects=full_files)
        ks = G.Stream(n, k)
        feed = ks.changes(sp, 6).withColumn("_del", G.F.col("_vchange") == G.DELETE).drop("_vchange")
        clone.create_branch("rp", from_ref="main")

        def commit_on_clone() -> None:
            (feed.write.format("versioned").option("upsert", "true").option("deleteColumn", "_del")
             .option("warehouse", lazy_wh).option("branch", "rp").option("message", "k on the clone")
             .mode("append").save("bench.t"))
        t_commit, _ = timed(commit_on_clone)
        t_push, pushed = timed(lambda: clone.push(branch="rp"))
        same = G.checksum(self.read("bench.t", ref="rp")) == G.checksum(self.read("bench.t", ref="rp", warehouse=lazy_wh))
        self.add("push_k", f"push of a branch with one commit of k={k:,} changed rows to the origin (uploads what it "
                 "lacks, then compare-and-swap) vs making that commit", t_push, t_commit, t_push / t_commit,
                 "≤ 2× the k-row commit", t_push <= 2 * t_commit,
                 f"{pushed.status}: {pushed.images} image, {pushed.uploaded} objects uploaded; content "
                 f"{'equal' if same else 'MISMATCH'}", uploaded=pushed.uploaded, content_equal=same)
        origin.create_branch("rf", from_ref="main")
        self.upsert_feed(ks.changes(sp, 7), "bench.t", branch="rf", message="k on the origin")
        t_fetch, fetched = timed(lambda: clone.fetch())
        same = G.checksum(self.read("bench.t", ref="origin/rf", warehouse=lazy_wh)) == \
            G.checksum(self.read("bench.t", ref="rf"))
        self.add("fetch_k", f"fetch of one new commit of k={k:,} changed rows (metadata only)", t_fetch, None, None,
                 "info", None, f"{fetched.images} image, {fetched.objects} object rows, "
                 f"{len(fetched.refs)} refs moved; content {'equal' if same else 'MISMATCH'}", content_equal=same)
        remotes_bench.history_rows(self)  # fetch of 1,000 and 10,000 small commits, lazy clone of 1,000 commits
