"""The benchmark's only access to the JVM (py4j). Not part of the versioned package.

Used for what the Python package does not expose:
* the engine itself (``versioned.core.Engine``): commit rate, refs and log without the Python API layer;
* one DIFF commit of mixed upserts and deletes (``CommitPlanner`` with ``WriteMode.Changes``, the path
  row-level DML uses internally), so a churn commit is one commit and does not re-scan the table;
* the custom driver metrics of the ``BatchScanExec`` node of a scan.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from py4j.protocol import Py4JError
from pyspark.sql import DataFrame, SparkSession

SCAN_METRICS = ("versionedFragmentsTotal", "versionedFragmentsScanned", "versionedObjectsScanned",
                "versionedBytesScanned")


def _first_module(jvm: Any, *names: str) -> Any:
    """The first of ``names`` (Scala objects, ``Name$``) that this connector version has."""
    from py4j.java_gateway import JavaPackage

    for name in names:
        found = _module(jvm, name)
        if not isinstance(found, JavaPackage):  # py4j answers an unknown class name with a package
            return found
    raise RuntimeError(f"none of {names} exists in this connector")


def _module(jvm: Any, dotted: str) -> Any:
    """A Scala ``object`` (its ``MODULE$``) by JVM class name, e.g. ``scala.None$``."""
    pkg, _, cls = dotted.rpartition(".")
    node = jvm
    for part in pkg.split("."):
        node = getattr(node, part)
    return getattr(getattr(node, cls), "MODULE$")


class Bridge:
    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self.jvm = spark._jvm
        self._engines: Dict[str, Any] = {}

    # ---- engine
    def engine(self, warehouse: str, metastore_url: Optional[str] = None) -> Any:
        """The engine of ``warehouse``: its embedded metastore, or the one at ``metastore_url`` (given on first use)."""
        if warehouse not in self._engines:
            core = self.jvm.versioned.core
            config = (core.WarehouseConfig(warehouse, metastore_url, "main") if metastore_url
                      else core.WarehouseConfig.embedded(warehouse))
            self._engines[warehouse] = core.Engine.apply(config, self.spark._jsc.hadoopConfiguration())
        return self._engines[warehouse]

    def spec(self, s: str) -> Any:
        return self.jvm.versioned.core.Revision.Spec(s)

    def resolve(self, warehouse: str, repo: str, spec: str) -> str:
        return self.engine(warehouse).resolve(repo, self.spec(spec)).hash()

    def create_branch(self, warehouse: str, repo: str, name: str, from_ref: str) -> str:
        return self.engine(warehouse).refs().createBranch(repo, name, self.spec(from_ref)).image()

    def create_tag(self, warehouse: str, repo: str, name: str, ref: str) -> str:
        return self.engine(warehouse).refs().createTag(repo, name, self.spec(ref)).image()

    def log_size(self, warehouse: str, repo: str, ref: str) -> int:
        """Runs the engine's log (no DataFrame) and returns the number of entries."""
        return int(self.engine(warehouse).history().log(repo, self.spec(ref), 2147483647).size())

    def empty_commit(self, warehouse: str, repo: str, branch: str, expected_head: str, message: str) -> str:
        """An engine commit that changes no table (the image links the parent's tables)."""
        empty = _module(self.jvm, "scala.collection.immutable.Map$").empty()
        no_lease = _module(self.jvm, "scala.None$")
        no_merge = _module(self.jvm, "scala.collection.immutable.Nil$")  # mergeParents: an ordinary commit
        args = [repo, branch, self.jvm.scala.Some(expected_head), empty, "bench", message, no_lease, no_merge]
        # allowEmpty (a commit that changes nothing must ask for it), then no probe (an ordinary commit)
        r = self.engine(warehouse).commit(*args, True, no_lease)
        return r.image().hash()

    # ---- one DIFF commit of mixed changes
    def commit_changes(self, warehouse: str, table: str, changes: DataFrame, branch: str = "main",
                       message: str = "bench changes") -> str:
        """Commits ``changes`` (table columns + ``_vchange`` BYTE: 3 upsert, 1 delete) as one commit.

        Returns the new head hash. Raises if the connector's internals changed shape."""
        jvm = self.jvm
        w = jvm.versioned.spark.write
        # the format kernel (versioned.core.format) holds WriteMode since round 10, the session package TableIdent
        mode = _first_module(jvm, "versioned.core.format.WriteMode$Changes$", "versioned.spark.write.WriteMode$Changes$")
        none = _module(jvm, "scala.None$")
        empty = _module(jvm, "scala.collection.immutable.Map$").empty()
        ident = _first_module(jvm, "versioned.spark.session.TableIdent$", "versioned.spark.TableIdent$").parse(table)
        args = [ident, jvm.scala.Some(branch), mode, none, False, "bench", message, empty]
        req = None
        # later versions append defaulted parameters: Options (expectedHead, deleteColumn), then beforeImages,
        # allowEmpty, then Options (writeId, deferred, stream, replaceWhere, ...)
        tails: List[List[Any]] = [[], [False]] + [[False, False] + [none] * n for n in range(8)]
        for extra, tail in ((e, t) for e in range(3) for t in tails):
            try:
                req = w.WriteRequest(*args, *([none] * extra), *tail)
                break
            except Py4JError as e:
                if "does not exist" not in str(e):
                    raise
        if req is None:
            raise RuntimeError("versioned.spark.write.WriteRequest has an unknown constructor")
        res = w.CommitPlanner.commit(self.engine(warehouse), req, changes._jdf)
        return res.image().hash()

    # ---- diff
    def diff(self, warehouse: str, table: str, from_ref: str, to_ref: str, fast_path: bool = True) -> DataFrame:
        """``TableDiff.diff`` between two revisions; ``fast_path=False`` compares every changed fragment whole
        (the path every diff took before the diff followed the change)."""
        jvm = self.jvm
        repo = table.split(".")[0]
        eng = self.engine(warehouse)
        loc = _module(jvm, "scala.collection.immutable.Map$").empty().updated("warehouse", warehouse)
        td = _module(jvm, "versioned.spark.diff.TableDiff$")
        jdf = td.diff(self.spark._jsparkSession, loc, table, eng.resolve(repo, self.spec(from_ref)),
                      eng.resolve(repo, self.spec(to_ref)), fast_path)
        return DataFrame(jdf, self.spark)

    # ---- scan metrics
    def scan_metrics(self, df: DataFrame) -> Optional[Dict[str, int]]:
        """Plans ``df`` (no job runs for a plain scan/filter) and returns the custom driver metrics of
        its versioned ``BatchScanExec`` node, or None when there is none."""
        plan = df._jdf.queryExecution().executedPlan()
        plan.execute()  # builds the RDD: BatchScanExec posts its driver metrics
        node = self._find_scan(plan)
        if node is None:
            return None
        metrics = node.metrics()
        out: Dict[str, int] = {}
        for name in SCAN_METRICS:
            opt = metrics.get(name)
            if opt.isDefined():
                out[name] = int(opt.get().value())
        return out

    def _find_scan(self, plan: Any) -> Any:
        stack: List[Any] = [plan]
        while stack:
            p = stack.pop()
            cls = p.getClass().getSimpleName()
            if cls == "BatchScanExec":
                return p
            if cls == "AdaptiveSparkPlanExec":
                stack.append(p.executedPlan())
                continue
            if cls.endswith("QueryStageExec"):
                stack.append(p.plan())
                continue
            ch = p.children()
            for i in range(ch.size()):
                stack.append(ch.apply(i))
        return None
