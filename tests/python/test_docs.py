"""Every Python and SQL example in docs/*.md runs, in order, on one session: each doc's blocks share a
namespace (Python) and a warehouse, after a small per-doc setup creating the data its examples assume. A
block that cannot run here (it needs an object store server, a Spark Connect server, ...) carries the
marker ``<!-- not-run: reason -->`` on the line before its fence; every other block must run. README's
blocks are run by test_readme.py (checked here). The docstring examples of the public functions compile."""

from __future__ import annotations

import ast
import glob
import os
import re
import textwrap
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, List, Optional

import pytest
from pyspark.sql import SparkSession

import versioned
from versioned import Repository
from conftest import ROOT

LANGUAGES = ("python", "sql")
NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(.*?)\s*-->$")


@dataclass
class Block:
    doc: str
    line: int
    language: str
    code: str
    not_run: Optional[str]  # the reason given by a not-run marker, if any


def blocks_of(path: str) -> List[Block]:
    """The fenced blocks of a Markdown file, with the not-run marker of the line before each fence."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found: List[Block] = []
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        start, language = i, m.group(1)
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        before = lines[start - 1].strip() if start > 0 else ""
        marker = NOT_RUN.match(before)
        found.append(Block(os.path.relpath(path, ROOT), start + 1, language, "\n".join(lines[start + 1:end]) + "\n",
                           marker.group(1) if marker else None))
        i = end + 1
    return found


def statements(sql: str) -> List[str]:
    """The statements of a SQL block: comments removed, split at ';'."""
    return [s.strip() for s in re.sub(r"--[^\n]*", "", sql).split(";") if s.strip()]


def frame(spark: SparkSession, rows: List[Any], schema: str) -> Any:
    return spark.createDataFrame(rows, schema)


# ---- per-doc setups: what the examples assume exists. Each returns the Python namespace of the doc's
# blocks and the placeholders to replace in its blocks (a value only the run knows, e.g. an image hash).
Setup = Callable[[SparkSession, str], Dict[str, Any]]


def _shop_items(spark: SparkSession) -> Repository:
    frame(spark, [(1, "a"), (2, "b"), (3, "c")], "id long, name string").write.versioned(
        "shop.items", primary_key="id", message="first load")
    return Repository(spark, "shop")


def setup_diff(spark: SparkSession, warehouse: str) -> Dict[str, Any]:
    """shop.items at tag v1, then an update and an insert on main."""
    repo = _shop_items(spark)
    repo.create_tag("v1", "main")
    frame(spark, [(2, "B"), (4, "d")], "id long, name string").write.versioned("shop.items", upsert=True)
    return {"repo": repo}


def setup_merge(spark: SparkSession, warehouse: str) -> Dict[str, Any]:
    """Branch pricing and main change the same price (a conflict); dev has three commits of new items."""
    schema = "id long, price double"
    frame(spark, [(1, 1.0), (2, 2.0)], schema).write.versioned("shop.prices", primary_key="id")
    repo = Repository(spark, "shop")
    repo.create_branch("pricing")
    repo.create_branch("dev")
    repo.upsert(frame(spark, [(1, 1.5)], schema), "prices", branch="pricing", message="pricing: 1 costs 1.5")
    repo.upsert(frame(spark, [(1, 2.5)], schema), "prices", message="main: 1 costs 2.5")
    for i in (10, 11, 12):
        repo.upsert(frame(spark, [(i, float(i))], schema), "prices", branch="dev", message=f"dev: add {i}")
    return {"repo": repo}


def setup_safety(spark: SparkSession, warehouse: str) -> Dict[str, Any]:
    """shop.items, tagged v1, then a delete."""
    repo = _shop_items(spark)
    repo.create_tag("v1", "main")
    repo.delete_where("items", "id = 3")
    return {"repo": repo, "versioned": versioned}


def setup_transactions(spark: SparkSession, warehouse: str) -> Dict[str, Any]:
    """shop.orders, shop.customers (keyed) and shop.events (key-less, with a day)."""
    frame(spark, [(1, "a"), (2, "b")], "id long, item string").write.versioned("shop.orders", primary_key="id")
    frame(spark, [(1, "x")], "id long, name string").write.versioned("shop.customers", primary_key="id")
    frame(spark, [("2025-12-31", 1), ("2026-01-02", 2)], "day string, n int").write.versioned("shop.events")
    return {"repo": Repository(spark, "shop"),
            "orders_df": frame(spark, [(1, "A"), (3, "c")], "id long, item string"),
            "customers_df": frame(spark, [(1, "X"), (2, "y")], "id long, name string")}


def _sql_md_before_time_travel(spark: SparkSession, ns: Dict[str, Any]) -> None:
    """docs/SQL.md's time-travel block names tag v1, lock etl:run-42 and an image hash prefix."""
    repo = Repository(spark, "shop")
    repo.create_tag("v1", "main~1")
    repo.create_lock("etl", "run-42", "main")
    ns["placeholders"]["'3f1c9a0b'"] = f"'{repo.resolve('main')[:8]}'"


def setup_sql(spark: SparkSession, warehouse: str) -> Dict[str, Any]:
    """Nothing but the catalog: the first block creates the repository. Timestamps of the examples become the
    run's own time (the commits are made now); the clone example's warehouse is this test's own."""
    now = datetime.now(timezone.utc)
    fmt = "%Y-%m-%d %H:%M:%S"
    return {"placeholders": {
        "'2026-01-31 12:00:00'": f"'{(now + timedelta(hours=1)).strftime(fmt)}'",
        "'2026-01-31 00:00:00'": f"'{(now - timedelta(hours=1)).strftime(fmt)}'",
        "'2026-02-01 00:00:00'": f"'{(now + timedelta(hours=1)).strftime(fmt)}'",
        "/data/team/metastore.db": os.path.join(warehouse, "metastore.db"),
        "/data/team": warehouse,
    }, "before": {4: _sql_md_before_time_travel}}


def setup_audit(spark: SparkSession, warehouse: str) -> Dict[str, Any]:
    """shop.items, a branch dev with a commit, then dev deleted; the SQL restore names the deletion's entry."""
    repo = _shop_items(spark)
    repo.create_branch("dev")
    frame(spark, [(4, "d")], "id long, name string").write.versioned("shop.items", branch="dev", upsert=True)
    repo.delete_branch("dev")
    gone = repo.reflog("dev", limit=1).first()
    return {"repo": repo, "placeholders": {"'dev', 'reflog@{42}'": f"'dev_again', '{gone['id']}'"}}


SETUPS: Dict[str, Setup] = {
    "docs/AUDIT.md": setup_audit,
    "docs/DIFF.md": setup_diff,
    "docs/MERGE.md": setup_merge,
    "docs/SAFETY.md": setup_safety,
    "docs/SQL.md": setup_sql,
    "docs/TRANSACTIONS.md": setup_transactions,
}

DOCS = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))


def runnable(doc: str) -> List[Block]:
    return [b for b in blocks_of(os.path.join(ROOT, doc)) if b.language in LANGUAGES and b.not_run is None]


@pytest.mark.parametrize("doc", [d for d in DOCS if runnable(d)])
def test_doc_examples_run(spark: SparkSession, warehouse: str, doc: str, capsys: Any) -> None:
    spark.conf.set("spark.sql.catalog.vc", "versioned.spark.catalog.VersionedCatalog")
    ns: Dict[str, Any] = {"spark": spark, "versioned": versioned, "placeholders": {}, "before": {}}
    if doc in SETUPS:
        ns.update(SETUPS[doc](spark, warehouse))
    ran = 0
    for index, block in enumerate(runnable(doc), start=1):
        if index in ns["before"]:
            ns["before"][index](spark, ns)
        code = block.code
        for placeholder, value in ns["placeholders"].items():
            code = code.replace(placeholder, value)
        where = f"{block.doc}:{block.line}"
        try:
            if block.language == "python":
                exec(compile(code, where, "exec"), ns)  # noqa: S102 - the doc's own example
            else:
                for statement in statements(code):
                    spark.sql(statement).collect()
        except Exception as exc:  # name the block that failed
            raise AssertionError(f"the example at {where} failed: {exc}\n{code}") from exc
        ran += 1
    assert ran == len(runnable(doc)) > 0


def test_every_example_runs_or_says_why_not() -> None:
    """Every Python/SQL block of the docs is run above unless marked, with a reason; README's by test_readme."""
    for doc in DOCS:
        for block in blocks_of(os.path.join(ROOT, doc)):
            if block.not_run is not None:
                assert block.not_run, f"{block.doc}:{block.line}: a not-run marker needs a reason"
                assert block.language in LANGUAGES, f"{block.doc}:{block.line}: only Python and SQL blocks are run"
    readme = [b for b in blocks_of(os.path.join(ROOT, "README.md")) if b.language in LANGUAGES and b.not_run is None]
    assert [b.language for b in readme] == ["python", "sql"], "test_readme.py runs README's tour and SQL tour"
    assert sum(len(runnable(d)) for d in DOCS) >= 15


# ---- docstring examples of the public API: they must at least compile
def _examples(tree: ast.AST) -> List[tuple]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node)
            if doc and "Example::" in doc:
                body = doc.split("Example::", 1)[1]
                lines = body.split("\n")
                block = []
                for line in lines[1:]:
                    if line.strip() and not line.startswith((" ", "\t")):
                        break
                    block.append(line)
                found.append((node.name, node.lineno, textwrap.dedent("\n".join(block))))
    return found


def _as_code(example: str) -> Optional[str]:
    """An example's code: doctest lines (``>>> ``, ``... ``) without their prompts and outputs, else as is;
    None for a shell session (``$ versioned ...``, the CLI's examples)."""
    lines = example.split("\n")
    if example.lstrip().startswith("$ "):
        return None
    if any(line.startswith(">>> ") for line in lines):
        return "\n".join(line[4:] for line in lines if line.startswith((">>> ", "... ")))
    return example


MODULES = sorted(glob.glob(os.path.join(ROOT, "python", "versioned", "*.py")))


@pytest.mark.parametrize("path", MODULES, ids=os.path.basename)
def test_docstring_examples_compile(path: str) -> None:
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    for name, line, example in _examples(tree):
        code = _as_code(example)
        if code is None:
            continue
        assert code.strip(), f"{path}:{line} {name}: empty example"
        compile(code, f"{os.path.basename(path)}:{line} ({name})", "exec")


def test_public_functions_have_an_example() -> None:
    missing = []
    for name in versioned.__all__:
        obj = getattr(versioned, name)
        if callable(obj) and "Example" not in (obj.__doc__ or ""):
            missing.append(name)
    assert not missing, f"public functions and classes without an example: {missing}"


def _written_here(fn: Any, module: Any) -> bool:
    """Whether ``fn`` is written in ``module``'s source (not made by ``dataclass`` or inherited from PySpark)."""
    code = getattr(fn, "__code__", None)
    return code is not None and os.path.abspath(code.co_filename) == os.path.abspath(module.__file__)


def test_every_function_and_method_has_a_docstring_with_an_example() -> None:
    """Every function and method of the package not named with a leading underscore (and every ``__init__``,
    ``__enter__``, ``__exit__``) has a docstring with an example; a transport's method has its protocol's
    (:mod:`versioned._ops`), which ``inspect.getdoc`` finds."""
    import importlib
    import inspect
    import pkgutil

    missing = []
    for info in pkgutil.iter_modules(versioned.__path__):
        module = importlib.import_module(f"versioned.{info.name}")
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            found = [(name, obj)] if inspect.isfunction(obj) else []
            if inspect.isclass(obj):
                for attr, value in vars(obj).items():
                    if attr.startswith("_") and attr not in ("__init__", "__enter__", "__exit__"):
                        continue
                    fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
                    fn = fn.fget if isinstance(fn, property) else fn
                    if inspect.isfunction(fn) and _written_here(fn, module):
                        found.append((f"{name}.{attr}", getattr(obj, attr) if not isinstance(value, property) else fn))
            for qualified, fn in found:
                if "Example" not in (inspect.getdoc(fn) or ""):
                    missing.append(f"{info.name}.{qualified}")
    assert not missing, f"without a docstring example: {missing}"


def test_examples_use_the_default_branch_not_main() -> None:
    """examples/ name the repository's default branch (``repo.default_branch``), never the literal "main"."""
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.py"))):
        tree = ast.parse(open(path, encoding="utf-8").read(), path)
        literals = [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                    and re.match(r"^main([~^]\d*)?$", n.value)]
        assert not literals, f"{path}:{literals[0].lineno}: the literal {literals[0].value!r}; use repo.default_branch"
