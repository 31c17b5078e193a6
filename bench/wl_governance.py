"""Workloads: gates (issue 33): a k-row publish into the N-row table with checks vs the same merge without, and the
publish of a branch that changed many tables."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import urllib.parse
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
        if "gated" in self.args.governance_rows:
            self.gated_publish(repo)
        if "publish" in self.args.governance_rows:
            for metastore in self.args.publish_metastores:
                self.many_tables(self.args.publish_tables, metastore)

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

    def many_tables(self, counts: List[int], metastore: str = "sqlite") -> None:
        """A branch that changed T tables (1 row each) published into a protected main: one merge commit, every table at
        once. The tables are made in one transaction (one commit), changed on the branch in another; the publish is
        timed once the background compactions of those commits are done. `metastore`: the embedded SQLite file of a
        warehouse of its own, or a fresh PostgreSQL database (--postgres-url)."""
        sp = self.spark
        for count in counts:
            name = f"many{count}"
            warehouse = os.path.join(self.work, f"publish-{metastore}-{count}")
            url = _fresh_database(self.args.postgres_url, f"bench_publish_{count}_{os.getpid()}") \
                if metastore == "postgresql" else None
            saved = os.path.join(os.path.abspath(self.args.publish_reuse), f"{metastore}-{count}") \
                if self.args.publish_reuse else None
            restored = saved is not None and os.path.isfile(os.path.join(saved, "done"))
            t0 = time.perf_counter()
            warm_s = None
            if restored:  # the set-up a previous run saved (--publish-reuse): the same files, the same metastore rows
                # restored twice: a first copy is published untimed (this fresh driver has not yet run a publish or
                # read these tables' objects), then the second is timed
                warm_url = _restore(saved, warehouse + "-warm-up", _fresh_database(
                    self.args.postgres_url, f"bench_publish_{count}_{os.getpid()}_warm") if url else None)
                _restore(saved, warehouse, url)
                warm_s = timed(lambda: self.vpkg.Repository(sp, name, warehouse=warehouse + "-warm-up",
                                                            metastore_url=warm_url).publish("dev", delete_branch=True))[0]
            repo = self.vpkg.Repository(sp, name, warehouse=warehouse, metastore_url=url)
            if not restored:
                self.make_published_branch(repo, count)
                if saved:
                    shutil.rmtree(saved, ignore_errors=True)
                    shutil.copytree(warehouse, os.path.join(saved, "warehouse"))
                    if url:
                        _pg(["pg_dump", "-Fc", "-f", os.path.join(saved, "metastore.dump")], url)
                    open(os.path.join(saved, "done"), "w").close()
            setup = time.perf_counter() - t0
            load = os.getloadavg()
            cpu0 = _process_cpu_s(sp)
            t, out = timed(lambda: repo.publish("dev", delete_branch=True))
            cpu = _process_cpu_s(sp) - cpu0
            ok = out["status"] == "merged" and len(out["tables"]) == count and \
                all(r["action"] == "take" and r["upserts"] == 1 and r["deletes"] == 0 for r in out["tables"])
            rows = sp.read.format("versioned").option("warehouse", warehouse).options(
                **({"metastoreUrl": url} if url else {})).load(f"{name}.t{count - 1}").collect()
            ok = ok and [tuple(r) for r in rows] == [(1, "b")]
            self.add(f"publish_{count}_tables" + ("" if metastore == "sqlite" else f"_{metastore}"),
                     f"publish of a branch that changed {count:,} tables (1 row each) into a protected main "
                     f"({'embedded SQLite' if metastore == 'sqlite' else 'PostgreSQL'} metastore)", t, None, None,
                     "< 5 s", ok and t < 5.0,
                     f"one merge commit of {len(out['tables'])} tables (status {out['status']}, each 'take' +1/-0, the "
                     f"last table read back); driver process CPU {cpu:.2f} s; host load average "
                     f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1/5/15 min) before the publish; the tables were made "
                     f"in one transaction and changed in another, untimed ({fmt_s(setup)}"
                     f"{'' if warm_s is None else ', restored from the copy a previous run saved; another restored copy published first, untimed: ' + fmt_s(warm_s)})",
                     tables=count, metastore=metastore, cpu_s=cpu, load_avg=list(load), setup_s=setup, restored=restored, warm_up_s=warm_s)

    def make_published_branch(self, repo: Any, count: int) -> None:
        """Tables t0..t<count-1> made in one transaction on the default branch (one row each), changed on branch `dev`
        in another (one upsert each); the default branch protected; background compactions awaited."""
        sp = self.spark
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
        self.await_compactions()


def _process_cpu_s(spark: Any) -> float:
    """CPU time of the driver's JVM so far (every thread, user and system), in seconds, from /proc (Linux)."""
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _restore(saved: str, warehouse: str, url: Any) -> str:
    """The set-up saved in `saved` (--publish-reuse) copied into `warehouse` and, for PostgreSQL, the empty database of
    JDBC URL `url`; returns `url`."""
    shutil.copytree(os.path.join(saved, "warehouse"), warehouse)
    if url:
        _pg(["pg_restore", "--no-owner", "-d", _database(url), os.path.join(saved, "metastore.dump")], url)
    return url


def _pg(command: List[str], url: str) -> None:
    """Runs PostgreSQL client `command` (pg_dump, pg_restore) on the database of JDBC URL `url`."""
    parsed = urllib.parse.urlparse(url[len("jdbc:"):])
    params = dict(urllib.parse.parse_qsl(parsed.query))
    env = dict(os.environ, PGHOST=parsed.hostname or "localhost", PGPORT=str(parsed.port or 5432),
               PGDATABASE=parsed.path.lstrip("/"))
    env.update({k: params[p] for k, p in (("PGUSER", "user"), ("PGPASSWORD", "password")) if params.get(p)})
    subprocess.run(command, check=True, env=env)


def _database(url: str) -> str:
    """The database name of JDBC URL `url`."""
    return urllib.parse.urlparse(url[len("jdbc:"):]).path.lstrip("/")


def _fresh_database(admin_url: str, name: str) -> str:
    """Creates database `name` on the PostgreSQL server of JDBC URL `admin_url` (dropped first if it exists); returns
    the JDBC URL of the new database, with the same parameters."""
    import psycopg  # the bench's PostgreSQL rows need it (pip install psycopg)

    parsed = urllib.parse.urlparse(admin_url[len("jdbc:"):])
    params = dict(urllib.parse.parse_qsl(parsed.query))
    conninfo = dict(host=parsed.hostname or "localhost", port=parsed.port or 5432,
                    dbname=parsed.path.lstrip("/") or "postgres", user=params.get("user"), password=params.get("password"))
    with psycopg.connect(**{k: v for k, v in conninfo.items() if v is not None}, autocommit=True) as c:
        c.execute(f"DROP DATABASE IF EXISTS {name}")
        c.execute(f"CREATE DATABASE {name}")
    return urllib.parse.urlunparse(("jdbc:postgresql", parsed.netloc, "/" + name, "", parsed.query, ""))
