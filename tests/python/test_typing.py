"""The package's one contract: mypy passes over python/versioned with the configuration in pyproject.toml, both
transports implement :class:`versioned._ops.Ops` and :class:`versioned._ops.TransactionHandle` with exactly their
signatures, and importing the package patches nothing in PySpark (the error hook is installed only by
``versioned.install()`` / ``configure_spark_with_versioned``)."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import typing
from typing import Any, Callable, Dict, List, Type

import pytest

from versioned import _connect, _connect_tx, _jvm, _jvm_tx, _ops
from conftest import ROOT


def test_mypy_passes_on_the_package() -> None:
    """bin/test installs mypy; a missing mypy is a failure here, not a skip."""
    try:
        import mypy  # noqa: F401
    except ImportError:  # pragma: no cover - bin/test installs it
        pytest.fail('mypy is not installed: python3 -m pip install "mypy>=1.11,<2" (bin/test does)')
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, check=False)
    assert done.returncode == 0, f"mypy found errors:\n{done.stdout}"
    assert "Success" in done.stdout


def test_the_mypy_configuration_is_strict() -> None:
    import tomllib

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        config = tomllib.load(f)["tool"]["mypy"]
    for flag in ("disallow_untyped_defs", "check_untyped_defs", "warn_unused_ignores", "strict"):
        assert config.get(flag) is True, flag
    assert config["files"] == ["python/versioned"]


def _members(protocol: type) -> List[str]:
    """The public methods of a protocol, with those of the package's protocols it extends (Ops: GovernanceOps)."""
    return sorted({n for cls in protocol.__mro__ if cls.__module__.startswith("versioned.")
                   for n, v in vars(cls).items() if not n.startswith("_") and callable(v)})


def _shape(fn: Callable[..., Any]) -> Dict[str, Any]:
    """A method's parameters (name, kind, default) and resolved annotations."""
    sig = inspect.signature(fn)
    return {"params": [(p.name, p.kind, p.default) for p in sig.parameters.values()],
            "hints": typing.get_type_hints(fn)}


@pytest.mark.parametrize("protocol,implementations", [
    (_ops.Ops, [_jvm.JvmOps, _connect.SqlOps]),
    (_ops.TransactionHandle, [_jvm_tx.JvmTransaction, _connect_tx.SqlTransaction]),
], ids=["Ops", "TransactionHandle"])
def test_both_transports_implement_the_protocol_exactly(protocol: type, implementations: List[Type[Any]]) -> None:
    members = _members(protocol)
    assert len(members) >= (35 if protocol is _ops.Ops else 12)
    for impl in implementations:
        assert protocol in impl.__mro__  # an explicit implementation: mypy checks it is complete
        public = sorted(n for n, v in vars(impl).items() if not n.startswith("_") and callable(v))
        assert public == members, f"{impl.__name__} has methods the protocol does not: {set(public) - set(members)}"
        for name in members:
            assert _shape(getattr(impl, name)) == _shape(getattr(protocol, name)), f"{impl.__name__}.{name}"


@pytest.mark.parametrize("protocol", [_ops.Ops, _ops.TransactionHandle], ids=["Ops", "TransactionHandle"])
def test_every_protocol_method_is_documented_with_an_example(protocol: type) -> None:
    for name in _members(protocol):
        doc = inspect.getdoc(getattr(protocol, name)) or ""
        assert "Example::" in doc and len(doc.split("Example::")[0].strip()) > 20, f"{protocol.__name__}.{name}"


_PYSPARK_STATE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])

def state():
    from pyspark.errors.exceptions import captured
    from pyspark.sql import DataFrameReader, DataFrameWriter, SparkSession
    out = {"captured.convert_exception": id(captured.convert_exception),
           "reader": sorted(vars(DataFrameReader)), "writer": sorted(vars(DataFrameWriter)),
           "session": sorted(vars(SparkSession)), "builder": sorted(vars(SparkSession.Builder))}
    try:
        from pyspark.sql.connect.client import core
        from pyspark.sql.connect.readwriter import DataFrameReader as CR, DataFrameWriter as CW
    except ImportError:
        return out
    out.update({"core.convert_exception": id(core.convert_exception), "connect reader": sorted(vars(CR)),
                "connect writer": sorted(vars(CW))})
    return out

before = state()
import pkgutil, importlib
import versioned
for m in pkgutil.iter_modules(versioned.__path__):
    importlib.import_module("versioned." + m.name)
after = state()
print(json.dumps({"same": before == after, "changed": sorted(k for k in before if before[k] != after.get(k)),
                  "file": versioned.__file__}))
"""


def test_importing_versioned_patches_nothing_in_pyspark() -> None:
    """In a fresh interpreter: PySpark's exception conversion (classic and Connect) and its reader, writer and
    session classes are the same before and after importing every module of the package."""
    done = subprocess.run([sys.executable, "-c", _PYSPARK_STATE, os.path.join(ROOT, "python")],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["file"].startswith(os.path.join(ROOT, "python")), result["file"]
    assert result["same"], f"importing versioned changed {result['changed']}"


_INSTALLED = r"""
import sys
sys.path.insert(0, sys.argv[1])
from pyspark.errors.exceptions import captured
from pyspark.sql.connect.client import core
import versioned
before = (captured.convert_exception, core.convert_exception)
assert not versioned.is_installed()
versioned.install()
assert versioned.is_installed()
assert captured.convert_exception is not before[0] and core.convert_exception is not before[1]
patched = (captured.convert_exception, core.convert_exception)
versioned.install()  # idempotent: not wrapped twice
assert (captured.convert_exception, core.convert_exception) == patched
print("ok")
"""


def test_install_is_the_explicit_hook() -> None:
    """``versioned.install()`` installs the error translation of both kinds of session, once."""
    done = subprocess.run([sys.executable, "-c", _INSTALLED, os.path.join(ROOT, "python")],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=False)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]
