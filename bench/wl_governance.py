"""Workloads: gates (issue 33): a k-row publish into the N-row table with checks vs the same merge without, and the
publish of a branch that changed many tables."""

from __future__ import annotations

from typing import Any, List

import datagen as G
from common import fmt_s, log, median, timed

ROW_CHECKS = {"a_positive": "a IS NULL OR a >= 0", "b_positive": "b IS NULL OR b >= 0", "d_unit": "d IS NULL OR d < 1.0"}
QUERY_CHECK = ("a_bounded", "SELECT id FROM t WHERE a >= 1000000")


class GovernanceWorkloads:
    def governance(self) -> None:
        repo = self.repo_api("gov")
        if repo is None:
            log("governance: the Python package is not installed, no rows")
            return
        self.gated_publish(repo)
        self.many_tables(self.args.publish_tables)

    def gated_publish(self, repo: Any) -> None:
        """1,000 changed rows (0.6 updates, 0.2 deletes, 0.2 inserts) published into the N-row table with 3 row checks
        and 1 query check required, against the same merge into an unprotected branch (median of 3 each, each on a
        fresh branch of its own). The first gated publish evaluates the row checks on the whole table (its head has
        no passing run yet); the timed ones on the changed rows only (docs/GOVERNANCE.md, "Cost follows the change")."""
        sp, n, k = self.spark, self.n, 1000
        self.set_fragment_rows(n)
        self.write_versioned(G.base(sp, n), "gov.t", pk="id", message="load")
        for name, expression in ROW_CHECKS.items():
            repo.add_check(name, expression, table="t")
        repo.add_check(*QUERY_CHECK)
        main = repo.default_branch
        repo.create_branch("plain", from_ref=main)
        stream = G.Stream(n, k)

        def change(branch: str, i: int) -> None:
            self.apply_changes(stream.changes(sp, i), "gov.t", branch=branch, message=f"change {i}")

        def merge_plain(i: int) -> float:
            repo.create_branch(f"p{i}", from_ref="plain")
            change(f"p{i}", i)
            return timed(lambda: repo.merge(f"p{i}", into="plain", fast_forward="never"))[0]

        def publish_gated(i: int) -> float:
            repo.create_branch(f"g{i}", from_ref=main)
            change(f"g{i}", i)
            t, out = timed(lambda: repo.publish(f"g{i}"))
            assert out["status"] == "merged" and all(c["status"] == "pass" for c in out["checks"]), out
            return t

        repo.protect(main, checks=list(ROW_CHECKS) + [QUERY_CHECK[0]])
        first = publish_gated(0)  # the head has no passing run yet: row checks on the whole table
        merge_plain(0)  # warm-up of the plain path
        plain = [merge_plain(i) for i in (1, 2, 3)]
        gated = [publish_gated(i) for i in (4, 5, 6)]
        v, p = median(gated), median(plain)
        self.add("gated_publish", f"publish of {k:,} changed rows into the {n:,}-row table with 3 row checks and 1 "
                 f"query check vs the same merge without checks", v, p, v / p,
                 "— (context: checks cost the changed rows plus the query check)", None,
                 f"median of 3 (gated {', '.join(fmt_s(x) for x in gated)}; without checks "
                 f"{', '.join(fmt_s(x) for x in plain)}); the Parquet column is the merge without checks; the first gated "
                 f"publish (row checks on the whole table: its head had no passing run) took {fmt_s(first)}",
                 gated_s=gated, plain_s=plain, first_gated_s=first)

    def many_tables(self, counts: List[int]) -> None:
        """A branch that changed T tables (1 row each) published into a protected main: one merge commit, every table at
        once. The tables are made in one transaction (one commit), changed on the branch in another."""
        sp = self.spark
        for count in counts:
            name = f"many{count}"
            repo = self.repo_api(name)
            one = sp.createDataFrame([(1, "a")], "id BIGINT, v STRING")
            with repo.transaction(message=f"{count} tables") as tx:
                for i in range(count):
                    tx.write(one, f"t{i}", mode="append", primary_key="id")
            main = repo.default_branch
            repo.create_branch("dev", from_ref=main)
            changed = sp.createDataFrame([(1, "b")], "id BIGINT, v STRING")
            with repo.transaction(branch="dev", message=f"{count} changes") as tx:
                for i in range(count):
                    tx.upsert(changed, f"t{i}")
            repo.protect(main)
            t, out = timed(lambda: repo.publish("dev", delete_branch=True))
            ok = out["status"] == "merged" and len(out["tables"]) == count
            self.add(f"publish_{count}_tables", f"publish of a branch that changed {count:,} tables (1 row each) into "
                     f"a protected main", t, None, None, "< 5 s", ok and t < 5.0,
                     f"one merge commit of {len(out['tables'])} tables (status {out['status']}); the tables were made in "
                     f"one transaction and changed in another, untimed", tables=count)
