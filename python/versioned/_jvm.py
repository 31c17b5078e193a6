"""The only module that talks to the JVM (py4j, ``_jvm``, ``_jdf``, ``_jsparkSession``).

It calls the static facade ``versioned.spark.api.VersionedApi`` (and the other ``versioned.spark.api`` objects);
every call turns Java exceptions into :mod:`versioned.errors` exceptions (:mod:`versioned._jvm_errors`). The
transaction handle is :mod:`versioned._jvm_tx`.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from py4j.java_collections import JavaList
from py4j.java_gateway import JavaClass, JavaObject
from pyspark.sql import DataFrame, SparkSession

from versioned._ops import DownloadOutcome, FetchOutcome, MergeOutcome, Ops, PushOutcome, RefKind, TransactionHandle, declare_client
from versioned._jvm_errors import translated_errors
from versioned.errors import UnsupportedOperation

API_CLASS = "versioned.spark.api.VersionedApi"
REFS_API_CLASS = "versioned.spark.api.RefsApi"
GOVERNANCE_API_CLASS = "versioned.spark.api.GovernanceApi"
RETENTION_API_CLASS = "versioned.spark.api.RetentionApi"


def _gateway(spark: SparkSession) -> Any:
    jsc = getattr(spark, "_sc", None)
    gw = getattr(jsc, "_gateway", None)
    if gw is None:
        raise UnsupportedOperation(
            "versioned needs a classic (JVM-backed) SparkSession; Spark Connect sessions are not supported.")
    return gw


def _api(spark: SparkSession, name: str = API_CLASS) -> Any:
    cls = getattr(_gateway(spark).jvm, name)
    if not isinstance(cls, JavaClass):
        raise UnsupportedOperation(
            f"The JVM does not have {name}: the versioned jar is not on the classpath. Build the session "
            "with versioned.configure_spark_with_versioned(SparkSession.builder).getOrCreate().")
    return cls


def _jclass(spark: SparkSession, fqn: str) -> Any:
    """The Java class ``fqn`` (which must exist), without asking the JVM for it. ``gateway.jvm.java.util.HashMap`` asks
    the JVM for ``java``, then ``java.util``, as classes first: each miss looks through every jar of the classpath
    (about a millisecond a call, a fixed cost of every small operation)."""
    return JavaClass(fqn, _gateway(spark)._gateway_client)


def _java_options(spark: SparkSession, options: Optional[Mapping[str, str]]) -> Any:
    m = _jclass(spark, "java.util.HashMap")()
    for k, v in (options or {}).items():
        if v is not None:
            m.put(str(k), str(v))
    return m


def _to_java(arg: Any) -> Any:
    if isinstance(arg, DataFrame):
        return arg._jdf
    return arg


def call(spark: SparkSession, options: Optional[Mapping[str, str]], method: str, *args: Any,
         api_class: str = API_CLASS) -> Any:
    """Calls ``VersionedApi.<method>(spark, options, *args)`` (or that of ``api_class``) and converts the result.

    Java DataFrames come back as :class:`pyspark.sql.DataFrame`, Java lists as Python lists.

    Example::

        call(spark, None, "createBranch", "shop", "dev", "main")   # the image hash
    """
    api = _api(spark, api_class)
    with translated_errors():
        result = getattr(api, method)(spark._jsparkSession, _java_options(spark, options), *map(_to_java, args))
    return _from_java(spark, result)


def _from_java(spark: SparkSession, value: Any) -> Any:
    if isinstance(value, JavaList):
        return list(value)
    if isinstance(value, JavaObject) and _jclass(spark, "py4j.reflection.TypeUtil").isInstanceOf(
            "org.apache.spark.sql.Dataset", value):
        return DataFrame(value, spark)
    return value


Options = Optional[Mapping[str, str]]


def call_frame(spark: SparkSession, options: Options, method: str, *args: Any) -> DataFrame:
    """:func:`call` for methods returning a DataFrame.

    Example::

        call_frame(spark, None, "branches", "shop").show()
    """
    result = call(spark, options, method, *args)
    if not isinstance(result, DataFrame):
        raise TypeError(f"{API_CLASS}.{method} returned {type(result).__name__}, not a DataFrame")
    return result


def call_str(spark: SparkSession, options: Options, method: str, *args: Any) -> str:
    """:func:`call` for methods returning a string.

    Example::

        call_str(spark, None, "resolve", "shop", "main~1")
    """
    return str(call(spark, options, method, *args))


def call_strings(spark: SparkSession, options: Options, method: str, *args: Any) -> List[str]:
    """:func:`call` for methods returning a list of strings.

    Example::

        call_strings(spark, None, "repositories")   # ['shop']
    """
    return [str(v) for v in call(spark, options, method, *args)]


def java_list(spark: SparkSession, values: Sequence[str]) -> Any:
    """A ``java.util.ArrayList`` of strings.

    Example::

        call_frame(spark, None, "verify", "shop", java_list(spark, ["main", "v1"]))
    """
    lst = _jclass(spark, "java.util.ArrayList")()
    for v in values:
        lst.add(v)
    return lst


def call_int(spark: SparkSession, options: Options, method: str, *args: Any) -> int:
    """:func:`call` for methods returning a number.

    Example::

        call_int(spark, None, "deleteWhere", "shop.orders", "id = 2", None, None, None)
    """
    return int(call(spark, options, method, *args))


def java_frames(spark: SparkSession, frames: Optional[Mapping[str, DataFrame]]) -> Any:
    """A ``java.util.HashMap`` of name to Java DataFrame, or None for no frames.

    Example::

        java_frames(spark, {"products": fixed_df})
    """
    if not frames:
        return None
    m = _jclass(spark, "java.util.HashMap")()
    for name, df in frames.items():
        if not isinstance(df, DataFrame):
            raise TypeError(f"expected a DataFrame for {name!r}, got {type(df).__name__}")
        m.put(str(name), df._jdf)
    return m


def call_outcome(spark: SparkSession, options: Options, method: str, *args: Any) -> MergeOutcome:
    """:func:`call` for methods returning a merge outcome (``versioned.spark.merge.MergeOutcome``), as the
    :class:`~versioned._ops.MergeOutcome` dict.

    Example::

        call_outcome(spark, None, "merge", "shop", "dev", None, "fail", "auto", False, None, None, None, False)
    """
    o = call(spark, options, method, *args)
    with translated_errors():
        return {
            "status": str(o.status()),
            "commit": optional_str(o.commit()),
            "fast_forward": bool(o.fastForward()),
            "base": optional_str(o.baseHash()),
            "conflict_count": int(o.conflictCount()),
            "tables": DataFrame(o.tables(), spark),
            "conflicts": DataFrame(o.conflicts(), spark),
        }


def call_on(spark: SparkSession, handle: Any, method: str, *args: Any) -> Any:
    """Calls ``handle.<method>(*args)`` on a JVM object a facade call returned (e.g. a transaction
    handle), with the same error translation and result conversion as :func:`call`.

    Example::

        call_on(spark, java_handle, "deleteWhere", "orders", "id = 2")
    """
    with translated_errors():
        result = getattr(handle, method)(*map(_to_java, args))
    return _from_java(spark, result)


def optional_str(value: Any) -> Optional[str]:
    """A Java string that may be null, as ``str`` or None.

    Example::

        >>> optional_str(None) is None
        True
    """
    return None if value is None else str(value)


def key_option(primary_key: Optional[Union[str, Sequence[str]]]) -> Optional[str]:
    """A primary key given as a column name, comma-separated names or a list of names, as the
    comma-separated string the JVM side takes (None: the table's key).

    Example::

        >>> key_option(["id", "day"])
        'id,day'
    """
    if primary_key is None or isinstance(primary_key, str):
        return primary_key
    return ",".join(primary_key)


class JvmOps(Ops):
    """The operations of :class:`~versioned.Repository` on a classic session: calls of the static facade
    ``versioned.spark.api.VersionedApi`` through py4j. Implements :class:`versioned._ops.Ops` (the methods are
    documented there), as :class:`versioned._connect.SqlOps` does for Spark Connect sessions.

    Example::

        ops = JvmOps(spark, {"warehouse": "/data/warehouse"})
        ops.create_branch("shop", "dev", None)
    """

    def __init__(self, spark: SparkSession, options: Options) -> None:
        """Calls on ``spark`` with the location ``options`` (warehouse, metastoreUrl; None: the session's).

        Example::

            JvmOps(spark, None).repositories()
        """
        self.spark = spark
        self.options = options
        declare_client(spark, "python")

    def _call(self, method: str, *args: Any) -> Any:
        return call(self.spark, self.options, method, *args)

    def _frame(self, method: str, *args: Any) -> DataFrame:
        return call_frame(self.spark, self.options, method, *args)

    def repositories(self) -> List[str]:
        return call_strings(self.spark, self.options, "repositories")

    def _ref(self, repo: str, ref: Optional[str]) -> str:
        """``ref``, or the repository's default branch when it is None (the facade takes no null revision)."""
        return ref if ref is not None else self.default_branch(repo)

    def resolve(self, repo: str, spec: Optional[str]) -> str:
        return str(self._call("resolve", repo, self._ref(repo, spec)))

    def default_branch(self, repo: str) -> str:
        return str(call(self.spark, self.options, "defaultBranch", repo, api_class=REFS_API_CLASS))

    def set_default_branch(self, repo: str, name: str) -> str:
        return str(call(self.spark, self.options, "setDefaultBranch", repo, name, api_class=REFS_API_CLASS))

    def refs(self, repo: str, kind: RefKind, namespace: Optional[str] = None) -> DataFrame:
        if kind == "lock":
            return self._frame("locks", repo, namespace)
        return self._frame("branches" if kind == "branch" else "tags", repo)

    def create_branch(self, repo: str, name: str, from_ref: Optional[str]) -> str:
        return str(self._call("createBranch", repo, name, self._ref(repo, from_ref)))

    def delete_branch(self, repo: str, name: str) -> None:
        self._call("deleteBranch", repo, name)

    def rename_branch(self, repo: str, name: str, new_name: str) -> None:
        self._call("renameBranch", repo, name, new_name)

    def reset(self, repo: str, branch: str, ref: str) -> str:
        return str(self._call("resetBranch", repo, branch, ref))

    def create_tag(self, repo: str, name: str, ref: Optional[str]) -> str:
        return str(self._call("createTag", repo, name, self._ref(repo, ref)))

    def delete_tag(self, repo: str, name: str) -> None:
        self._call("deleteTag", repo, name)

    def create_lock(self, repo: str, namespace: str, name: str, ref: Optional[str]) -> str:
        return str(self._call("createLock", repo, namespace, name, self._ref(repo, ref)))

    def release_lock(self, repo: str, namespace: str, name: str) -> None:
        self._call("releaseLock", repo, namespace, name)

    def log(self, repo: str, ref: Optional[str], limit: Optional[int]) -> DataFrame:
        return self._frame("log", repo, self._ref(repo, ref), -1 if limit is None else int(limit))

    def show(self, repo: str, ref: Optional[str]) -> str:
        return str(self._call("show", repo, self._ref(repo, ref)))

    def delete_where(self, table: str, condition: str, branch: Optional[str], message: Optional[str],
                     author: Optional[str]) -> int:
        return int(self._call("deleteWhere", table, condition, branch, message, author))

    def upsert(self, df: DataFrame, table: str, branch: Optional[str], message: Optional[str],
               author: Optional[str], keys: Optional[str], delete_column: Optional[str],
               before_images: Optional[bool] = None) -> str:
        return str(self._call("upsert", df, table, branch, message, author, keys, delete_column, before_images))

    def write_batch(self, df: DataFrame, table: str, query_id: str, batch_id: int, mode: str, branch: Optional[str],
                    message: Optional[str], author: Optional[str], keys: Optional[str], upsert: bool,
                    delete_column: Optional[str]) -> str:
        return str(self._call("writeBatch", df, table, query_id, batch_id, mode, branch, message, author, keys, upsert,
                              delete_column))

    def begin_transaction(self, repo: str, branch: Optional[str], message: Optional[str],
                          author: Optional[str]) -> TransactionHandle:
        from versioned._jvm_tx import JvmTransaction  # it calls back into this module

        return JvmTransaction(self.spark, self._call("beginTransaction", repo, branch, message, author))

    def merge(self, repo: str, source: str, into: Optional[str], strategy: str, fast_forward: str, dry_run: bool,
              message: Optional[str], author: Optional[str], resolutions: Optional[Mapping[str, DataFrame]],
              allow_unrelated: bool, squash: bool) -> MergeOutcome:
        return call_outcome(self.spark, self.options, "merge", repo, source, into, strategy, fast_forward, dry_run,
                            message, author, java_frames(self.spark, resolutions), allow_unrelated, squash)

    def pick(self, repo: str, commit: str, onto: Optional[str], parent: int, revert: bool, strategy: str,
             dry_run: bool, message: Optional[str], author: Optional[str],
             resolutions: Optional[Mapping[str, DataFrame]]) -> MergeOutcome:
        return call_outcome(self.spark, self.options, "revert" if revert else "cherryPick", repo, commit, onto,
                            parent, strategy, dry_run, message, author, java_frames(self.spark, resolutions))

    def diff(self, table: str, from_ref: str, to_ref: str) -> DataFrame:
        return self._frame("diff", table, from_ref, to_ref)

    def blame(self, table: str, ref: Optional[str]) -> DataFrame:
        return self._frame("blame", table, ref)

    def diff_summary(self, repo: str, from_ref: str, to_ref: str, table: Optional[str]) -> DataFrame:
        return self._frame("diffSummary", repo, from_ref, to_ref, table)

    def materialize(self, repo: str) -> DataFrame:
        return self._frame("materialize", repo)

    def compact(self, repo: str, branch: Optional[str], table: Optional[str]) -> DataFrame:
        return self._frame("compact", repo, branch, table)

    def gc(self, repo: Optional[str], retention_ms: int, force: bool, dry_run: bool) -> DataFrame:
        return self._frame("collectGarbage", repo, retention_ms, force, dry_run)

    def verify(self, repo: str, refs: Sequence[str]) -> DataFrame:
        return self._frame("verify", repo, java_list(self.spark, refs))

    def reflog(self, repo: str, ref: Optional[str], limit: int) -> DataFrame:
        return self._frame("reflog", repo, ref, int(limit))

    # ---- remotes (docs/REMOTES.md); fetch, clone and push results as dicts (versioned.remotes reads them)
    def _json(self, method: str, *args: Any) -> Any:
        """The JSON of the result's ``toJson()`` (``FetchResult``, ``PushResult``), parsed."""
        o = self._call(method, *args)
        with translated_errors():
            return json.loads(str(o.toJson()))

    def add_remote(self, repo: str, name: str, warehouse: str, metastore_url: str, repository: Optional[str]) -> None:
        self._call("addRemote", repo, name, warehouse, metastore_url, repository)

    def remotes(self, repo: str) -> DataFrame:
        return self._frame("remotes", repo)

    def remove_remote(self, repo: str, name: str) -> None:
        self._call("removeRemote", repo, name)

    def remote_refs(self, repo: str, remote: Optional[str]) -> DataFrame:
        return self._frame("remoteRefs", repo, remote)

    def clone(self, repository: str, warehouse: str, metastore_url: str, into: Optional[str], remote: str,
              download: str) -> FetchOutcome:
        fetched: FetchOutcome = self._json("cloneRepository", repository, warehouse, metastore_url, into, remote, download)
        return fetched

    def fetch(self, repo: str, remote: str, download: str) -> FetchOutcome:
        fetched: FetchOutcome = self._json("fetch", repo, remote, download)
        return fetched

    def download(self, repo: str, ref: Optional[str]) -> DownloadOutcome:
        done: DownloadOutcome = self._json("download", repo, ref)
        return done

    def pull(self, repo: str, remote: str, branch: Optional[str], strategy: str, fast_forward: str,
             message: Optional[str], author: Optional[str]) -> MergeOutcome:
        return call_outcome(self.spark, self.options, "pull", repo, remote, branch, strategy, fast_forward, message,
                            author)

    def push(self, repo: str, remote: str, branch: Optional[str], force: bool, tags: bool) -> PushOutcome:
        pushed: PushOutcome = self._json("push", repo, remote, branch, force, tags)
        return pushed

    def import_table(self, repo: str, from_repository: str, table: str, ref: Optional[str], as_table: Optional[str],
                     branch: Optional[str], remote: Optional[str], message: Optional[str],
                     author: Optional[str]) -> str:
        return str(self._call("importTable", repo, from_repository, table, ref, as_table, branch, remote, message,
                              author))

    # ---- governance (docs/GOVERNANCE.md)
    def _governance(self, method: str, *args: Any) -> Any:
        return call(self.spark, self.options, method, *args, api_class=GOVERNANCE_API_CLASS)

    def protect(self, repo: str, pattern: str, require_merge: bool, allow_force: bool, allow_delete: bool,
                checks: Sequence[str]) -> DataFrame:
        frame: DataFrame = self._governance("protect", repo, pattern, require_merge, allow_force, allow_delete,
                                            java_list(self.spark, checks))
        return frame

    def unprotect(self, repo: str, pattern: str) -> None:
        self._governance("unprotect", repo, pattern)

    def set_retention(self, repo: str, pattern: str, keep_days: Optional[int], keep_commits: Optional[int],
                      expire_branches_after_days: Optional[int]) -> DataFrame:
        frame: DataFrame = call(self.spark, self.options, "setRetention", repo, pattern, keep_days, keep_commits,
                                expire_branches_after_days, api_class=RETENTION_API_CLASS)
        return frame

    def remove_retention(self, repo: str, pattern: str) -> None:
        call(self.spark, self.options, "removeRetention", repo, pattern, api_class=RETENTION_API_CLASS)

    def retention(self, repo: str) -> DataFrame:
        frame: DataFrame = call(self.spark, self.options, "retention", repo, api_class=RETENTION_API_CLASS)
        return frame

    def protections(self, repo: str) -> DataFrame:
        frame: DataFrame = self._governance("protections", repo)
        return frame

    def add_check(self, repo: str, name: str, expression: str, table: Optional[str], severity: Optional[str]) -> DataFrame:
        frame: DataFrame = self._governance("addCheck", repo, name, expression, table, severity)
        return frame

    def remove_check(self, repo: str, name: str) -> None:
        self._governance("removeCheck", repo, name)

    def checks(self, repo: str) -> DataFrame:
        frame: DataFrame = self._governance("checks", repo)
        return frame

    def run_checks(self, repo: str, ref: Optional[str], names: Sequence[str]) -> DataFrame:
        frame: DataFrame = self._governance("runChecks", repo, ref, java_list(self.spark, names))
        return frame

    def publish(self, repo: str, branch: str, into: Optional[str], delete_branch: bool, dry_run: bool,
                message: Optional[str], author: Optional[str]) -> Dict[str, Any]:
        frame: DataFrame = self._governance("publish", repo, branch, into, delete_branch, dry_run, message, author)
        row: Dict[str, Any] = frame.collect()[0].asDict(recursive=True)
        return row

    def bisect(self, repo: str, check: str, good: str, bad: Optional[str]) -> Dict[str, Any]:
        frame: DataFrame = self._governance("bisect", repo, check, good, bad)
        row: Dict[str, Any] = frame.collect()[0].asDict(recursive=True)
        return row
