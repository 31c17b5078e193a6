"""Spark Connect support: every operation as SQL (``CALL <catalog>.system.*`` procedures and metadata
tables), and the translation of Spark Connect errors into :mod:`versioned.errors` exceptions.

A Spark Connect client has no JVM, so :mod:`versioned._jvm` cannot be used. Instead this module
registers, at run time, a catalog backed by ``versioned.spark.catalog.VersionedCatalog`` for the
warehouse a :class:`~versioned.Repository` names (``spark.sql.catalog.<name>`` is a session setting,
so a client may set it) and sends SQL with named parameter markers, so values are never spliced into
SQL text. The server needs the connector jar (``--jars``); nothing else has to be configured there.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from pyspark.sql import DataFrame, SparkSession

from versioned._ops import DownloadOutcome, FetchOutcome, MergeOutcome, Ops, PushOutcome, RefKind, TransactionHandle, declare_client
from versioned.errors import VersionedError, error_for_class, known_error_classes, pyspark_kind, with_pyspark_variant

CATALOG_CLASS = "versioned.spark.catalog.VersionedCatalog"
_CATALOG_PREFIX = "versioned_api"
_OPTION_KEYS = ("warehouse", "metastoreUrl")
_registered: Dict[int, Set[str]] = {}


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` is a Spark Connect session (it has no JVM on the client).

    Example::

        ops = SqlOps(spark, None) if is_connect(spark) else JvmOps(spark, None)
    """
    return type(spark).__module__.startswith("pyspark.sql.connect")


def catalog(spark: SparkSession, options: Optional[Mapping[str, str]]) -> str:
    """The name of a catalog for the location in ``options`` (warehouse, metastoreUrl; none: the session's
    ``spark.versioned.*`` settings), registered in the session the first time it is needed.

    Example::

        spark.sql(f"SHOW NAMESPACES IN {catalog(spark, {'warehouse': '/data/warehouse'})}").show()
    """
    location = {k: str(v) for k, v in (options or {}).items() if k in _OPTION_KEYS and v is not None}
    if location:
        digest = hashlib.sha1(repr(sorted(location.items())).encode()).hexdigest()[:12]
        name = f"{_CATALOG_PREFIX}_{digest}"
    else:
        name = _CATALOG_PREFIX
    done = _registered.setdefault(id(spark), set())
    if name not in done:
        spark.conf.set(f"spark.sql.catalog.{name}", CATALOG_CLASS)
        for key, value in location.items():
            spark.conf.set(f"spark.sql.catalog.{name}.{key}", value)
        done.add(name)
    return name


def _quote(identifier: str) -> str:
    return "`" + identifier.replace("`", "``") + "`"


def _unquote(identifier: str) -> str:
    """A name as Spark prints it (``SHOW NAMESPACES`` backtick-quotes a name that is not a plain identifier,
    doubling backticks inside it) as the name itself; a plain name is returned unchanged.

    Example::

        >>> _unquote("`my-repo`"), _unquote("shop"), _unquote("`a``b`")
        ('my-repo', 'shop', 'a`b')
    """
    if len(identifier) >= 2 and identifier.startswith("`") and identifier.endswith("`"):
        return identifier[1:-1].replace("``", "`")
    return identifier


def procedure(spark: SparkSession, options: Optional[Mapping[str, str]], proc: str, **args: Any) -> DataFrame:
    """``CALL <catalog>.system.<name>(arg => value, ...)``; None arguments are left out (their default).
    Values are passed as named parameters of their SQL type: booleans, whole numbers, numbers, a mapping as a
    ``MAP<STRING, STRING>``, anything else as a string.

    Example::

        procedure(spark, None, "create_branch", repository="shop", branch="dev", from_ref=None).collect()
        procedure(spark, None, "gc", repository="shop", older_than_seconds=3600.0, dry_run=True).collect()
    """
    params: Dict[str, Any] = {}
    parts: List[str] = []
    for key, value in args.items():
        if value is None or (isinstance(value, Mapping) and not value):
            continue
        if isinstance(value, Mapping):
            # a map literal of named string parameters (Spark Connect takes literals as parameters, not columns)
            names: List[str] = []
            for i, (k, v) in enumerate(value.items()):
                params[f"{key}_k{i}"], params[f"{key}_v{i}"] = str(k), str(v)
                names += [f":{key}_k{i}", f":{key}_v{i}"]
            parts.append(f"{key} => map({', '.join(names)})")
            continue
        params[key] = value if isinstance(value, (bool, int, float)) else str(value)
        parts.append(f"{key} => :{key}")
    call = ", ".join(parts)
    return spark.sql(f"CALL {catalog(spark, options)}.system.{proc}({call})", args=params)


def table(spark: SparkSession, options: Optional[Mapping[str, str]], repo: str, name: str) -> DataFrame:
    """The catalog table (or metadata table, e.g. ``$log@<hash>``) ``name`` of repository ``repo``.

    Example::

        table(spark, None, "shop", "$refs").show()
    """
    return spark.table(f"{catalog(spark, options)}.{_quote(repo)}.{_quote(name)}")


_catalog_table = table  # for methods whose parameter is named `table`


def first(df: DataFrame) -> Any:
    """The first row of a procedure's result (procedures run when called; this only fetches the row).

    Example::

        first(procedure(spark, None, "resolve", repository="shop", ref="main"))["image"]
    """
    rows = df.collect()
    return rows[0] if rows else None


_JVM_TRACE = "\n\nJVM stacktrace:"
_CLASS_PREFIX = re.compile(r"^\(([\w.$]+)\)\s*")


def condition_of(exc: BaseException) -> Optional[str]:
    """The Spark error condition of a PySpark exception (``getCondition``, or the older ``getErrorClass``),
    or None.

    Example::

        try:
            spark.sql("SELECT * FROM no_such_table")
        except Exception as e:
            assert condition_of(e) == "TABLE_OR_VIEW_NOT_FOUND"
    """
    for getter in ("getCondition", "getErrorClass"):
        fn = getattr(exc, getter, None)
        if callable(fn):
            try:
                condition = fn()
            except Exception:  # a getter that fails is no condition
                condition = None
            if condition:
                return str(condition)
    return None


def _versioned_error(exc: BaseException) -> Optional[VersionedError]:
    condition = condition_of(exc)
    if not condition or condition not in known_error_classes():
        return None
    message = str(getattr(exc, "_message", None) or str(exc))
    message = _CLASS_PREFIX.sub("", message.split(_JVM_TRACE, 1)[0]).strip()
    return _connect_variant(error_for_class(str(condition), message), exc)


def _connect_variant(error: VersionedError, original: Optional[BaseException] = None) -> VersionedError:
    """``error`` as the Connect client's own PySpark exception of its kind (e.g.
    ``pyspark.errors.exceptions.connect.AnalysisException``), keeping the PySpark state of ``original`` (the
    exception the client made of the same failure, if any); ``error`` itself when the client is not installed.

    Example::

        e = _connect_variant(error_for_class("REF_NOT_FOUND", "no such ref"))
        assert isinstance(e, pyspark.errors.exceptions.connect.AnalysisException)
    """
    try:
        from pyspark.errors.exceptions import connect
    except ImportError:  # the Connect client's dependencies are not installed
        return error
    kind = pyspark_kind(type(error))
    return with_pyspark_variant(error, getattr(connect, kind) if kind else connect.SparkConnectGrpcException, original)


_translation_installed = False


def install_error_translation() -> None:
    """Makes Spark Connect raise :mod:`versioned.errors` exceptions for versioned errors: the server sends
    each error's condition (``REF_NOT_FOUND``, ...), and this maps it to the matching Python type (which is
    also the Connect client's PySpark exception of its kind, e.g.
    ``pyspark.errors.exceptions.connect.AnalysisException``) for every call on a Connect session (this
    package's and plain DataFrame/SQL calls). Idempotent; a no-op when the Spark Connect client is not
    installed. :func:`versioned.install` calls it.

    Example::

        install_error_translation()
        spark.sql("SELECT * FROM vc.shop.products VERSION AS OF 'nope'").collect()   # raises RefNotFound
    """
    global _translation_installed
    if _translation_installed:
        return
    try:
        from pyspark.sql.connect.client import core
    except ImportError:  # the Connect client's dependencies (grpcio, ...) are not installed
        return
    from pyspark.errors.exceptions.connect import SparkConnectException

    original = core.convert_exception

    def convert(*args: Any, **kwargs: Any) -> SparkConnectException:
        converted = original(*args, **kwargs)
        try:
            mapped = _versioned_error(converted)
        except Exception:  # never let the translation itself fail a call
            mapped = None
        # The versioned type is also the Connect client's exception of its kind (a SparkConnectException).
        return mapped if isinstance(mapped, SparkConnectException) else converted

    core.convert_exception = convert
    _translation_installed = True


def _parse_table_details(rows: Any) -> List[Tuple[str, str, int, int]]:
    return [(r["table"], r["action"], int(r["upserts"]), int(r["deletes"])) for r in (rows or [])]


class SqlOps(Ops):
    """The operations of :class:`~versioned.Repository` on a Spark Connect session, as SQL: procedures
    (``CALL <catalog>.system.*``) and metadata tables (``$refs``, ``$log@<image>``). Implements
    :class:`versioned._ops.Ops` (the methods are documented there), as :class:`versioned._jvm.JvmOps` does for
    classic sessions.

    Example::

        ops = SqlOps(spark, {"warehouse": "/data/warehouse"})
        ops.create_branch("shop", "dev", None)
    """

    def __init__(self, spark: SparkSession, options: Optional[Mapping[str, str]]) -> None:
        """Sends SQL on the Connect session ``spark`` for the location ``options`` (warehouse, metastoreUrl;
        None: the session's settings), and installs the Connect error translation
        (:func:`install_error_translation`; docs/CONNECT.md).

        Example::

            SqlOps(spark, None).repositories()
        """
        install_error_translation()
        self.spark = spark
        self.options = dict(options or {})
        declare_client(spark, "connect")

    def _call(self, proc: str, **args: Any) -> DataFrame:
        return procedure(self.spark, self.options, proc, **args)

    def _image(self, proc: str, **args: Any) -> str:
        return str(first(self._call(proc, **args))["image"])

    def repositories(self) -> List[str]:
        # SHOW NAMESPACES quotes a name that is not a plain identifier (`my-repo`): the names themselves, as on classic
        rows = self.spark.sql(f"SHOW NAMESPACES IN {catalog(self.spark, self.options)}").collect()
        return sorted(name for name in (_unquote(str(r[0])) for r in rows) if name != "system")

    def resolve(self, repo: str, spec: Optional[str]) -> str:
        return self._image("resolve", repository=repo, ref=spec)

    def default_branch(self, repo: str) -> str:
        try:
            return str(first(self._call("default_branch", repository=repo))["name"])
        except Exception as exc:
            if condition_of(exc) != "REF_NOT_FOUND":
                raise
        # A repository without commits has a default branch but not the branch yet: its namespace says the name.
        namespace = f"{catalog(self.spark, self.options)}.{_quote(repo)}"
        rows = self.spark.sql(f"DESCRIBE NAMESPACE EXTENDED {namespace}").collect()
        found = re.search(r"\(defaultBranch,([^)]*)\)", next((str(r[1]) for r in rows if r[0] == "Properties"), ""))
        if found is None:
            raise error_for_class("REF_NOT_FOUND", f"Repository '{repo}' has no default branch.")
        return found.group(1)

    def set_default_branch(self, repo: str, name: str) -> str:
        return self._image("default_branch", repository=repo, branch=name)

    def refs(self, repo: str, kind: RefKind, namespace: Optional[str] = None) -> DataFrame:
        where, params = "kind = :kind", {"kind": str(kind)}
        if namespace is not None:
            where, params = where + " AND startswith(name, :prefix)", {**params, "prefix": f"{namespace}:"}
        source = f"{catalog(self.spark, self.options)}.{_quote(repo)}.{_quote('$refs')}"
        return self._analyzed(lambda: self.spark.sql(
            f"SELECT name, kind, image, created FROM {source} WHERE {where} ORDER BY name", args=params), repo)

    def _analyzed(self, make: Callable[[], DataFrame], repo: str) -> DataFrame:
        """The DataFrame ``make()`` returns, once the server has analyzed it: a metadata table of a repository
        that does not exist is :class:`~versioned.errors.RepositoryNotFound` here (the server's, also the Connect
        client's ``AnalysisException``), as on a classic session, not a ``TABLE_OR_VIEW_NOT_FOUND``. The
        name is checked by the server as the query is analyzed (``INVALID_NAME``)."""
        try:
            df = make()
            df.schema
        except Exception as exc:
            if condition_of(exc) == "TABLE_OR_VIEW_NOT_FOUND" and repo not in self.repositories():
                raise _connect_variant(error_for_class("REPOSITORY_NOT_FOUND", f"Repository '{repo}' does not exist. "
                                                       "Create it with a first write, or check the name."), exc) from None
            raise
        return df

    def create_branch(self, repo: str, name: str, from_ref: Optional[str]) -> str:
        return self._image("create_branch", repository=repo, branch=name, from_ref=from_ref)

    def delete_branch(self, repo: str, name: str) -> None:
        self._call("delete_branch", repository=repo, branch=name)

    def rename_branch(self, repo: str, name: str, new_name: str) -> None:
        self._call("rename_branch", repository=repo, branch=name, new_name=new_name)

    def reset(self, repo: str, branch: str, ref: str) -> str:
        return self._image("reset_branch", repository=repo, branch=branch, ref=ref)

    def create_tag(self, repo: str, name: str, ref: Optional[str]) -> str:
        return self._image("create_tag", repository=repo, tag=name, ref=ref)

    def delete_tag(self, repo: str, name: str) -> None:
        self._call("delete_tag", repository=repo, tag=name)

    def create_lock(self, repo: str, namespace: str, name: str, ref: Optional[str]) -> str:
        return self._image("create_lock", repository=repo, namespace=namespace, name=name, ref=ref)

    def release_lock(self, repo: str, namespace: str, name: str) -> None:
        self._call("release_lock", repository=repo, namespace=namespace, name=name)

    def log(self, repo: str, ref: Optional[str], limit: Optional[int]) -> DataFrame:
        # Pinned to the image `ref` names now, as on a classic session.
        head = self.resolve(repo, ref)
        df = self._analyzed(lambda: table(self.spark, self.options, repo, f"$log@{head}"), repo)
        return df if limit is None or limit < 0 else df.limit(int(limit))

    def show(self, repo: str, ref: Optional[str]) -> str:
        return str(first(self._call("show", repository=repo, ref=ref))["json"])

    def delete_where(self, table: str, condition: str, branch: Optional[str], message: Optional[str],
                     author: Optional[str]) -> int:
        repo, name = table.split(".", 1)
        row = first(self._call("delete_where", repository=repo, table=name, condition=condition, branch=branch,
                               message=message, author=author))
        return int(row["deleted"])

    def upsert(self, df: DataFrame, table: str, branch: Optional[str], message: Optional[str],
               author: Optional[str], keys: Optional[str], delete_column: Optional[str],
               before_images: Optional[bool] = None) -> str:
        return self._committed(df, table, "append", branch, {
            "upsert": "true", "message": message or None, "author": author, "primaryKey": keys,
            "deleteColumn": delete_column,
            "beforeImages": None if before_images is None else str(bool(before_images)).lower()})

    def write_batch(self, df: DataFrame, table: str, query_id: str, batch_id: int, mode: str, branch: Optional[str],
                    message: Optional[str], author: Optional[str], keys: Optional[str], upsert: bool,
                    delete_column: Optional[str]) -> str:
        return self._committed(df, table, mode, branch, {
            "streamQueryId": query_id, "streamBatchId": str(batch_id), "upsert": str(bool(upsert)).lower(),
            "message": message or None, "author": author, "primaryKey": keys, "deleteColumn": delete_column})

    def _committed(self, df: DataFrame, table: str, mode: str, branch: Optional[str],
                   options: Mapping[str, Optional[str]]) -> str:
        # the write's own id: the server keeps the commit of this write under it, never another write's
        write_id = uuid.uuid4().hex
        w = df.write.format("versioned").option("writeId", write_id)
        for key, value in {**self.options, "branch": branch, **options}.items():
            if value is not None:
                w = w.option(key, value)
        w.mode(mode).save(table)
        row = first(self._call("last_commit", write_id=write_id))
        if row is not None:
            return str(row["commit"])
        # This write recorded no commit of its own: report the branch head (no branch: the default one), as a
        # classic session does.
        return self._image("resolve", repository=table.split(".", 1)[0], ref=branch)

    def begin_transaction(self, repo: str, branch: Optional[str], message: Optional[str],
                          author: Optional[str]) -> TransactionHandle:
        from versioned._connect_tx import SqlTransaction

        return SqlTransaction(self, first(self._call("begin_transaction", repository=repo, branch=branch,
                                                     message=message, author=author)))

    def _outcome(self, row: Any) -> MergeOutcome:
        from versioned.merging import CONFLICT_SCHEMA, TABLE_SCHEMA

        conflicts = [tuple(c) for c in (row["conflict_details"] or [])]
        return {
            "status": str(row["status"]),
            "commit": row["commit"],
            "fast_forward": bool(row["fast_forward"]),
            "base": row["base"],
            "conflict_count": int(row["conflicts"]),
            "tables": self.spark.createDataFrame(_parse_table_details(row["table_details"]), TABLE_SCHEMA),
            "conflicts": self.spark.createDataFrame(conflicts, CONFLICT_SCHEMA),
        }

    def _with_views(self, resolutions: Optional[Mapping[str, DataFrame]],
                    run: Callable[[Optional[Mapping[str, str]]], DataFrame]) -> MergeOutcome:
        """Runs ``run(views_by_table)`` with each resolution DataFrame as a temporary view (the procedure
        reads them by name), and drops the views afterwards, also when the call fails."""
        import uuid

        views: Dict[str, str] = {}
        try:
            for name, df in (resolutions or {}).items():
                if not isinstance(df, DataFrame):
                    raise TypeError(f"expected a DataFrame for {name!r}, got {type(df).__name__}")
                view = f"versioned_resolution_{uuid.uuid4().hex}"
                df.createOrReplaceTempView(view)
                views[str(name)] = view
            return self._outcome(first(run(views or None)))
        finally:
            for view in views.values():
                self.spark.catalog.dropTempView(view)

    def merge(self, repo: str, source: str, into: Optional[str], strategy: str, fast_forward: str, dry_run: bool,
              message: Optional[str], author: Optional[str], resolutions: Optional[Mapping[str, DataFrame]],
              allow_unrelated: bool, squash: bool) -> MergeOutcome:
        return self._with_views(resolutions, lambda views: self._call(
            "merge", repository=repo, source=source, target=into, strategy=strategy, fast_forward=fast_forward,
            dry_run=dry_run, message=message, author=author, allow_unrelated=allow_unrelated, resolutions=views,
            squash=squash))

    def pick(self, repo: str, commit: str, onto: Optional[str], parent: int, revert: bool, strategy: str,
             dry_run: bool, message: Optional[str], author: Optional[str],
             resolutions: Optional[Mapping[str, DataFrame]]) -> MergeOutcome:
        return self._with_views(resolutions, lambda views: self._call(
            "revert" if revert else "cherry_pick", repository=repo, commit=commit, branch=onto,
            parent=parent if parent > 0 else None, strategy=strategy, dry_run=dry_run, message=message,
            author=author, resolutions=views))

    def diff(self, table: str, from_ref: str, to_ref: str) -> DataFrame:
        repo, name = table.split(".", 1)
        return self._call("diff", repository=repo, table=name, from_ref=from_ref, to_ref=to_ref)

    def blame(self, table: str, ref: Optional[str]) -> DataFrame:
        # the metadata table `t$blame`, pinned to the image `ref` names now (as on a classic session)
        repo, name = table.split(".", 1)
        head = self.resolve(repo, ref)
        return self._analyzed(lambda: _catalog_table(self.spark, self.options, repo, f"{name}$blame@{head}"), repo)

    def diff_summary(self, repo: str, from_ref: str, to_ref: str, table: Optional[str]) -> DataFrame:
        return self._call("diff_summary", repository=repo, from_ref=from_ref, to_ref=to_ref, table=table)

    def materialize(self, repo: str) -> DataFrame:
        return self._call("materialize", repository=repo)

    def compact(self, repo: str, branch: Optional[str], table: Optional[str]) -> DataFrame:
        return self._call("compact", repository=repo, branch=branch, table=table)

    def gc(self, repo: Optional[str], retention_ms: int, force: bool, dry_run: bool) -> DataFrame:
        seconds = None if retention_ms < 0 else retention_ms / 1000.0
        if repo is None:
            return self._call("gc_warehouse", older_than_seconds=seconds, force=force, dry_run=dry_run)
        return self._call("gc", repository=repo, older_than_seconds=seconds, force=force, dry_run=dry_run)

    def verify(self, repo: str, refs: Sequence[str]) -> DataFrame:
        return self._call("verify", repository=repo, refs=",".join(refs) if refs else None)

    def reflog(self, repo: str, ref: Optional[str], limit: int) -> DataFrame:
        return self._call("reflog", repository=repo, ref=ref, limit=limit if limit > 0 else None)

    # ---- remotes (docs/REMOTES.md): the procedures' rows as the dicts JvmOps returns
    def add_remote(self, repo: str, name: str, warehouse: str, metastore_url: str, repository: Optional[str]) -> None:
        first(self._call("add_remote", repository=repo, name=name, warehouse=warehouse, metastore_url=metastore_url,
                         remote_repository=repository))

    def remotes(self, repo: str) -> DataFrame:
        return self._call("remotes", repository=repo)

    def remove_remote(self, repo: str, name: str) -> None:
        first(self._call("remove_remote", repository=repo, name=name))

    def remote_refs(self, repo: str, remote: Optional[str]) -> DataFrame:
        where: str = "kind = 'remote'"
        params: Dict[str, str] = {}
        if remote is not None:
            if not any(str(r["name"]) == remote for r in self.remotes(repo).collect()):
                raise error_for_class("REMOTE_NOT_FOUND", f"'{repo}' has no remote '{remote}'.")
            where, params = where + " AND startswith(name, :prefix)", {"prefix": f"{remote}/"}
        source = f"{catalog(self.spark, self.options)}.{_quote(repo)}.{_quote('$refs')}"
        return self._analyzed(lambda: self.spark.sql(
            f"SELECT name, kind, image, created FROM {source} WHERE {where} ORDER BY name", args=params), repo)

    @staticmethod
    def _fetched(row: Any) -> FetchOutcome:
        return {"repository": row["repository"], "remote": row["remote"], "images": row["images"],
                "objects": row["objects"], "downloaded": row["downloaded"],
                "refs": [{"ref": u["ref"], "old": u["old"], "new": u["new"], "status": u["status"]} for u in row["refs"]]}

    def clone(self, repository: str, warehouse: str, metastore_url: str, into: Optional[str], remote: str,
              download: str) -> FetchOutcome:
        return self._fetched(first(self._call("clone", repository=repository, warehouse=warehouse,
                                              metastore_url=metastore_url, into=into, remote=remote, download=download)))

    def fetch(self, repo: str, remote: str, download: str) -> FetchOutcome:
        return self._fetched(first(self._call("fetch", repository=repo, remote=remote, download=download)))

    def download(self, repo: str, ref: Optional[str]) -> DownloadOutcome:
        row = first(self._call("download", repository=repo, ref=ref))
        return {"repository": row["repository"], "image": row["image"], "objects": row["objects"],
                "downloaded": row["downloaded"]}

    def pull(self, repo: str, remote: str, branch: Optional[str], strategy: str, fast_forward: str,
             message: Optional[str], author: Optional[str]) -> MergeOutcome:
        return self._outcome(first(self._call("pull", repository=repo, remote=remote, branch=branch, strategy=strategy,
                                              fast_forward=fast_forward, message=message, author=author)))

    def push(self, repo: str, remote: str, branch: Optional[str], force: bool, tags: bool) -> PushOutcome:
        row = first(self._call("push", repository=repo, remote=remote, branch=branch, force=force, tags=tags))
        return {"repository": row["repository"], "remote": row["remote"], "branch": row["branch"],
                "status": row["status"], "old": row["old"], "head": row["head"], "images": row["images"],
                "objects": row["objects"], "uploaded": row["uploaded"], "tags": list(row["tags"])}

    def import_table(self, repo: str, from_repository: str, table: str, ref: Optional[str], as_table: Optional[str],
                     branch: Optional[str], remote: Optional[str], message: Optional[str],
                     author: Optional[str]) -> str:
        return self._image("import_table", repository=repo, from_repository=from_repository, table=table, ref=ref,
                           as_table=as_table, branch=branch, remote=remote, message=message, author=author)

    # ---- governance (docs/GOVERNANCE.md)
    def protect(self, repo: str, pattern: str, require_merge: bool, allow_force: bool, allow_delete: bool,
                checks: Sequence[str]) -> DataFrame:
        return self._call("protect_branch", repository=repo, pattern=pattern, require_merge=require_merge,
                          allow_force=allow_force, allow_delete=allow_delete, checks=",".join(checks) if checks else None)

    def unprotect(self, repo: str, pattern: str) -> None:
        self._call("unprotect_branch", repository=repo, pattern=pattern).collect()

    def set_retention(self, repo: str, pattern: str, keep_days: Optional[int], keep_commits: Optional[int],
                      expire_branches_after_days: Optional[int]) -> DataFrame:
        return self._call("set_retention", repository=repo, pattern=pattern, keep_days=keep_days,
                          keep_commits=keep_commits, expire_branches_after_days=expire_branches_after_days)

    def remove_retention(self, repo: str, pattern: str) -> None:
        self._call("remove_retention", repository=repo, pattern=pattern).collect()

    def retention(self, repo: str) -> DataFrame:
        return self._call("retention", repository=repo)

    def protections(self, repo: str) -> DataFrame:
        return self._call("protections", repository=repo)

    def add_check(self, repo: str, name: str, expression: str, table: Optional[str], severity: Optional[str]) -> DataFrame:
        return self._call("add_check", repository=repo, name=name, expression=expression, table=table, severity=severity)

    def remove_check(self, repo: str, name: str) -> None:
        self._call("remove_check", repository=repo, name=name).collect()

    def checks(self, repo: str) -> DataFrame:
        return self._call("checks", repository=repo)

    def run_checks(self, repo: str, ref: Optional[str], names: Sequence[str]) -> DataFrame:
        return self._call("run_checks", repository=repo, ref=ref, checks=",".join(names) if names else None)

    def publish(self, repo: str, branch: str, into: Optional[str], delete_branch: bool, dry_run: bool,
                message: Optional[str], author: Optional[str]) -> Dict[str, Any]:
        row: Dict[str, Any] = first(self._call("publish", repository=repo, branch=branch, into=into,
                                               delete_branch=delete_branch, dry_run=dry_run, message=message,
                                               author=author)).asDict(recursive=True)
        return row

    def bisect(self, repo: str, check: str, good: str, bad: Optional[str]) -> Dict[str, Any]:
        row: Dict[str, Any] = first(self._call("bisect", repository=repo, check=check, good=good,
                                               bad=bad)).asDict(recursive=True)
        return row
